// A write the apiserver never answered (a timeout, a connection cut after the request went out) has an unknown
// result, not a failed one: an apiserver that was stopped (SIGSTOP, a long pause, a partition) with the request in
// its socket applies it when it continues, after the console has given up. The chaos matrix found it twice
// (`freeze-start` and `rollout-control` × `apiserver-hang @ after-intent`: the action recorded failed, its write
// applied a moment later). docs/develop/chaos.md.
//
// Every such write the console makes names the resourceVersion it was made from (a precondition: a stale one is
// refused with 409). So before an action records its outcome, it settles the write against the object itself:
//  - the object shows the write (`applied(live)`): it was applied;
//  - the object is at another resourceVersion without it: the write can no longer apply;
//  - the object is still at the version the write named: a fence is written at that version (an annotation, taken
//    away again at once), so the write, should it still come, fails its precondition.
// Reads that fail are retried until the deadline; past it the outcome stays unknown (the caller says so).
import type { ClusterConnection } from './connection.ts';
import { KubeError } from './connection.ts';

type Obj = Record<string, unknown>;

/** The annotation a fence writes (and removes at once): names the action whose late write it turns away. */
export const FENCE_ANNOTATION = 'gitops-console.dev/fence';
/** The field manager a fence writes as (managedFields), apart from the console's own writes. */
export const FENCE_MANAGER = 'gitops-console-fence';
export const SETTLE_DEADLINE_MS = 30_000;

export type Settled =
  | { outcome: 'applied'; live: Obj }
  | { outcome: 'not-applied'; how: 'moved-on' | 'fenced'; live: Obj }
  | { outcome: 'unknown'; why: string };

export interface SettleOpts {
  /** a DELETE's: the object not found counts as applied (the write was its deletion) */
  goneIsApplied?: boolean;
  deadlineMs?: number;
  now?: () => number;
  pause?: (ms: number) => Promise<unknown>;
}

/** A request that got no answer (a KubeError of status 0: timeout, reset) but may have been sent. */
export const unanswered = (e: unknown): boolean =>
  e instanceof KubeError && e.status === 0 && e.reason !== 'ECONNREFUSED';
/** A request the apiserver never took: its connection was refused (nothing was sent). */
export const neverSent = (e: unknown): boolean =>
  e instanceof KubeError && e.status === 0 && e.reason === 'ECONNREFUSED';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rvOf = (o: Obj) => String((o.metadata as Obj | undefined)?.resourceVersion ?? '');

/**
 * `path`: the object's path (no subresource, no query); `sentRv`: the resourceVersion the write named;
 * `fence`: the value the fence annotation carries (the action's id).
 */
export async function settleUnansweredWrite(
  conn: ClusterConnection,
  path: string,
  sentRv: string,
  applied: (live: Obj) => boolean,
  fence: string,
  opts: SettleOpts = {},
): Promise<Settled> {
  const now = opts.now ?? Date.now;
  const pause = opts.pause ?? sleep;
  const until = now() + (opts.deadlineMs ?? SETTLE_DEADLINE_MS);
  const message = (e: unknown) => (e instanceof Error ? e.message : String(e));
  const patch = (body: Obj) =>
    // its own field manager: a fence is never taken for the console's write (rollout-actions.ts wroteSince)
    conn.json<Obj>('PATCH', `${path}?fieldManager=${FENCE_MANAGER}`, {
      body: JSON.stringify(body),
      contentType: 'application/merge-patch+json',
      timeoutMs: 10_000,
    });
  let why = 'no attempt';
  for (let attempt = 0; attempt === 0 || now() < until; attempt++) {
    if (attempt > 0) await pause(Math.min(1000, 100 * 2 ** attempt));
    let live: Obj;
    try {
      live = await conn.json<Obj>('GET', path, { timeoutMs: 10_000 });
    } catch (e) {
      if (opts.goneIsApplied && e instanceof KubeError && e.status === 404) return { outcome: 'applied', live: {} };
      why = `cannot read it back: ${message(e)}`;
      continue;
    }
    if (applied(live)) return { outcome: 'applied', live };
    if (rvOf(live) !== sentRv) return { outcome: 'not-applied', how: 'moved-on', live };
    let fenced: Obj;
    try {
      fenced = await patch({ metadata: { resourceVersion: sentRv, annotations: { [FENCE_ANNOTATION]: fence } } });
    } catch (e) {
      // 409: the object moved meanwhile (perhaps the write itself came): read it again
      why = `cannot fence it: ${message(e)}`;
      continue;
    }
    // the fence's own annotation goes again (best effort: a leftover one only names the action)
    const cleared = await patch({ metadata: { annotations: { [FENCE_ANNOTATION]: null } } }).catch(() => fenced);
    return { outcome: 'not-applied', how: 'fenced', live: cleared };
  }
  return { outcome: 'unknown', why };
}
