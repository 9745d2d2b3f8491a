// Reading freezes: one or the list (with whether each still holds its apps), the live changes made on the
// frozen apps since the freeze began (and those one person may see), and whether a person may act on a freeze.
import { liveChangesSince } from '../../domain/freeze.ts';
import { controllerManagersOf, isGitOpsControllerManager } from '../../domain/field-managers.ts';
import { refId, type ObjectRef } from '../../domain/refs.ts';
import { HttpError } from '../http/errors.ts';
import type { FreezeRow } from './store.ts';
import type { AppChange, FreezeActor, FreezeContext, FreezeView } from './types.ts';

export async function viewFreeze(ctx: FreezeContext, id: string): Promise<FreezeView> {
  const f = await ctx.deps.store.get(id);
  if (!f) throw new HttpError(404, 'NotFound', `no freeze ${id}`);
  return { ...f, active: f.status === 'active' || f.status === 'ending' };
}

export async function listFreezes(ctx: FreezeContext, active: boolean): Promise<FreezeView[]> {
  return (await ctx.deps.store.list({ active })).map((f) => ({
    ...f,
    active: f.status === 'active' || f.status === 'ending',
  }));
}

/** The live changes made since the freeze began, on every app it holds. Unknown diffs are an error, never "none". */
export async function freezeChanges(
  ctx: FreezeContext,
  id: string,
): Promise<{ changes: AppChange[]; unknown: Array<{ appId: string; reason: string }> }> {
  const f = await viewFreeze(ctx, id);
  const changes: AppChange[] = [];
  const unknown: Array<{ appId: string; reason: string }> = [];
  for (const t of f.doc.targets.filter((x) => x.applied)) {
    const a = ctx.deps.apps.get(t.appId);
    if (!a) {
      unknown.push({ appId: t.appId, reason: 'the app object is gone' });
      continue;
    }
    try {
      const d = await ctx.deps.diff(a);
      if (d.state !== 'ok') {
        unknown.push({ appId: t.appId, reason: d.error ?? 'the diff could not be computed' });
        continue;
      }
      const mgrs = controllerManagersOf(a.controller);
      changes.push(
        ...liveChangesSince(
          d.objects.map((o) => ({ ...o, id: refId(o.ref) })),
          f.doc.startedAt,
          (m) => mgrs.includes(m) || isGitOpsControllerManager(m),
        ).map((c) => ({ ...c, appId: a.id })),
      );
    } catch (e) {
      unknown.push({ appId: t.appId, reason: e instanceof HttpError ? e.message : 'the diff failed' });
    }
  }
  return { changes, unknown };
}

/**
 * Splits a list by what the reader may `get` in Kubernetes (AccessReviewer.split for one user; in service mode
 * everything is visible), with the sentence saying what was hidden.
 */
export type ReaderAccess = <T>(
  items: readonly T[],
  refOf: (item: T) => ObjectRef,
) => Promise<{ visible: T[]; hidden: T[]; message: string | null }>;

/**
 * The live changes as one person may see them (impersonation mode). The changes are computed with the console's
 * identity; an object the reader may not `get` has all its changes (Git and live values) left out, and its app is
 * listed among the unknown with how many objects were hidden and why ("1 object hidden: your Kubernetes RBAC does
 * not allow get on configmaps in dev"): hidden is unknown to this reader, never "no change". `hidden` holds the
 * ids of the changes left out (a write-back decision may not name one).
 */
export async function changesSeenBy(
  all: { changes: AppChange[]; unknown: Array<{ appId: string; reason: string }> },
  access: ReaderAccess,
): Promise<{ changes: AppChange[]; unknown: Array<{ appId: string; reason: string }>; hidden: Set<string> }> {
  const unknown = [...all.unknown];
  const hiddenObjects = new Set<string>();
  for (const appId of [...new Set(all.changes.map((c) => c.appId))]) {
    const objects = new Map<string, ObjectRef>();
    for (const c of all.changes) if (c.appId === appId) objects.set(refId(c.ref), c.ref);
    const split = await access([...objects.values()], (r) => r);
    for (const r of split.hidden) hiddenObjects.add(`${appId}\n${refId(r)}`);
    if (split.message) unknown.push({ appId, reason: split.message });
  }
  const shown = (c: AppChange) => !hiddenObjects.has(`${c.appId}\n${refId(c.ref)}`);
  return {
    changes: all.changes.filter(shown),
    unknown,
    hidden: new Set(all.changes.filter((c) => !shown(c)).map((c) => c.id)),
  };
}

/**
 * Why `decisions` may not be carried out by this reader: a write-back naming a change they cannot see (it would put
 * a value their Kubernetes RBAC hides from them into a Git branch under their name). Undefined: nothing hidden.
 */
export async function hiddenWriteBack(
  all: { changes: AppChange[]; unknown: Array<{ appId: string; reason: string }> },
  access: ReaderAccess,
  decisions: ReadonlyArray<{ change: string; action: string }>,
): Promise<{ appId: string; reason: string } | undefined> {
  const seen = await changesSeenBy(all, access);
  const named = new Set(
    decisions.filter((d) => d.action === 'write-back' && seen.hidden.has(d.change)).map((d) => d.change),
  );
  const first = all.changes.find((c) => named.has(c.id));
  if (!first) return undefined;
  const why = seen.unknown.slice(all.unknown.length).find((u) => u.appId === first.appId)?.reason ?? '';
  return {
    appId: first.appId,
    reason: `You cannot write back a live change you cannot see (${named.size} of your decisions): ${why}`,
  };
}

/** Throws 403 (recorded as a denial) unless `user` may freeze on every environment the freeze holds. */
export function mustMay(user: FreezeActor, f: FreezeRow): void {
  for (const t of f.doc.targets)
    if (!user.may(f.cluster, t.env)) {
      const why = `You need the oncall role on ${f.cluster}/${t.env} to freeze or unfreeze deployments`;
      user.denied?.(f.cluster, t.env, t.appId, why);
      throw new HttpError(403, 'Forbidden', why);
    }
}
