// After a prune the controller performs (the console stamped its approval on each object and listed its uid): what
// the controller has done with it since, read live when the preview is viewed. A prune is `done` for the console
// once every object is stamped; the objects go only at the controller's next prune, which may be far off (an
// ApplicationSet controller whose Git generator cannot read the forge, a Kustomization suspended). So the view says
// `waiting` while a stamped object is still there (same uid, not deleting), `deleted` once none is, `lapsed` when one outlived
// its approval listing (the controller may no longer delete it), and `unknown` when it could not be read.
import { metaOf } from '../../domain/object-meta.ts';
import type { PruneContext } from './context.ts';
import type { Handover, StoredPreview } from './model.ts';
import type { JournalEntry } from './store.ts';

/** At most this many stamped objects are read per view; beyond that the answer is unknown (never "deleted"). */
export const HANDOVER_READS = 100;

/** The controller whose own prune deletes a stamped object of this preview. */
export function controllerOf(p: StoredPreview): string {
  if (p.doc.controller === 'flux') return p.app.includes('/helmrelease/') ? 'helm-controller' : 'kustomize-controller';
  return p.doc.appSet
    ? `the applicationset-controller (ApplicationSet ${p.doc.appSet.name})`
    : 'the Argo CD application controller';
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * The handover of a `done` prune whose controller deletes (journal rows `stamped`); undefined for any other.
 * `now` is injected for tests.
 */
export async function handoverOf(
  ctx: PruneContext,
  p: StoredPreview,
  journal: readonly JournalEntry[],
  now = Date.now(),
): Promise<Handover | undefined> {
  if (p.status !== 'done' || p.doc.deletedBy !== 'controller') return undefined;
  const stamped = journal.filter((j) => j.state === 'stamped');
  if (!stamped.length) return undefined;
  const controller = controllerOf(p);
  const base = { controller, stamped: stamped.length };
  if (stamped.length > HANDOVER_READS)
    return {
      ...base,
      state: 'unknown',
      live: [],
      text: `${plural(stamped.length, 'object')} stamped: more than ${HANDOVER_READS} are not read on each view; whether ${controller} deleted them is unknown here (the app's tree shows what is live)`,
    };
  const live: string[] = [];
  let lapsed = 0;
  try {
    const found = await Promise.all(
      stamped.map(async (j) => {
        const c = p.doc.candidates.find((x) => x.id === j.object);
        if (!c) throw new Error(`${j.object} is not in the preview`);
        // from the informer cache for watched kinds: before its first list, absent is not known
        const { index } = ctx.deps;
        if (index.watches(c.ref.group, c.ref.kind) && !index.listed(c.ref.cluster, c.ref.group, c.ref.kind))
          throw new Error(`${c.ref.kind} objects on ${c.ref.cluster} are not read yet`);
        return { j, o: await ctx.live.get(c.ref) };
      }),
    );
    for (const { j, o } of found) {
      // deleted: gone, made again (another uid), or deleting (its finalizers run)
      if (!o || metaOf(o).uid !== j.uid || metaOf(o).deletionTimestamp) continue;
      live.push(j.object);
      // its listing expires a TTL after it was stamped (approval-params.ts entryFor)
      if (Date.parse(j.updatedAt) + ctx.ttlMs < now) lapsed++;
    }
  } catch (e) {
    return {
      ...base,
      state: 'unknown',
      live: [],
      text: `whether ${controller} deleted the stamped objects is unknown: ${e instanceof Error ? e.message : String(e)}`,
    };
  }
  if (!live.length)
    return { ...base, state: 'deleted', live, text: `${controller} deleted ${plural(stamped.length, 'object')}` };
  if (lapsed)
    return {
      ...base,
      state: 'lapsed',
      live,
      text: `the approval lapsed before ${controller} deleted ${plural(lapsed, 'object')}: ${lapsed === 1 ? 'it stays' : 'they stay'} (a new preview is needed)`,
    };
  return {
    ...base,
    state: 'waiting',
    live,
    text: `waiting for ${controller}: ${live.length} of ${plural(stamped.length, 'approved object')} still live; its next prune deletes them`,
  };
}
