// "Held by the prune policy" (issue 39, item 6): a controller's prune that the console's admission policy denied
// (deploy/prune-admission-policy.yaml: "prune of Kind/name needs an approved prune preview …") holds the app until
// a prune preview is approved or Git brings the objects back. It is its own status everywhere — the overview card,
// the app header, the release chain — never "failed", "waiting for the controller" or "Progressing". Pure.
import type { App } from './app.ts';

export interface PruneHold {
  /** the objects whose deletion waits for an approval, as "Kind/name" (the policy's words), at most 20 */
  objects: string[];
  /** how many the controller's message named (objects may be cut) */
  count: number;
  /** the controller's line, first 500 characters (never Secret data: the policy names kinds and names only) */
  message: string;
}

const DENIED = /needs an approved prune preview/;
const OBJECT = /prune of ([A-Za-z0-9.]+\/[A-Za-z0-9._:-]+) needs an approved prune preview/g;
const SHRINK = /ApplicationSet shrink deleting Application ([a-z0-9.-]+\/[a-z0-9.-]+) needs an approved prune preview/g;

/** The hold in one controller message, or undefined when the message is not the policy's denial. */
export function pruneHoldIn(message: string | undefined): PruneHold | undefined {
  if (!message || !DENIED.test(message)) return undefined;
  const names = new Set<string>();
  for (const m of message.matchAll(OBJECT)) if (m[1]) names.add(m[1]);
  for (const m of message.matchAll(SHRINK)) if (m[1]) names.add(`Application/${m[1].split('/')[1]}`);
  const all = [...names];
  return { objects: all.slice(0, 20), count: all.length, message: message.split('\n')[0]?.slice(0, 500) ?? '' };
}

/**
 * Whether the app's controller is held by the prune policy now: Flux says so in its Ready condition (False,
 * usually PruneFailed), Argo CD in its failing sync operation or an error condition. A Ready=True app is never held.
 */
export function pruneHold(app: Pick<App, 'controller' | 'conditions' | 'syncOperation'>): PruneHold | undefined {
  if (app.controller === 'flux') {
    const ready = app.conditions.find((c) => c.type === 'Ready');
    return ready?.status === 'False' ? pruneHoldIn(ready.message) : undefined;
  }
  if (app.syncOperation?.failing) {
    const h = pruneHoldIn(app.syncOperation.why);
    if (h) return h;
  }
  for (const c of app.conditions) {
    const h = /Error$/.test(c.type) ? pruneHoldIn(c.message) : undefined;
    if (h) return h;
  }
  return undefined;
}

/** The one line every screen says for a hold: "held by the prune policy: ConfigMap/x needs an approved prune preview" */
export function pruneHoldLine(h: Pick<PruneHold, 'objects' | 'count'>): string {
  const named = h.objects.slice(0, 3).join(', ');
  const more = h.count > 3 ? ` and ${h.count - 3} more` : '';
  if (!h.count) return 'held by the prune policy: a deletion needs an approved prune preview';
  return `held by the prune policy: deleting ${named}${more} needs an approved prune preview`;
}
