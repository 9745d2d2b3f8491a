// A freeze patch whose answer never came: a timeout, or a connection cut after the request went out. Its result is
// unknown, not failed: an apiserver that was stopped (SIGSTOP, a long pause, a partition) with the request in its
// socket applies it when it continues, after the console has given up (the chaos matrix's
// `freeze-start × apiserver-hang @ after-intent`: Flux suspended, the start recorded failed, no freeze listed).
//
// So before the start records anything, it settles the patch against the object itself:
//  - the object carries this freeze's id: the patch was applied (the start goes on; an undo restores it);
//  - the object is at another resourceVersion without it: the patch can no longer apply (it named the version it
//    was made from, and the apiserver refuses a stale one with 409);
//  - the object is still at the version the patch named: a fence is written at that version (an annotation, taken
//    away again at once), so the patch, should it still come, fails its precondition.
// Reads that fail are retried until `deadlineMs`; past it the outcome stays unknown (the caller keeps the freeze,
// so that on-call can end it, and the end restores whatever it finds).
import { frozenState } from '../../domain/freeze.ts';
import { metaOf, type Obj } from '../../domain/object-meta.ts';
import { HttpError } from '../http/errors.ts';
import type { ClusterConnection } from '../kube/connection.ts';
import { patchObject, readObject } from './app-objects.ts';
import type { FreezeTarget } from './store.ts';

/** The annotation a fence writes (and removes at once): names the freeze whose late patch it turns away. */
export const FENCE_ANNOTATION = 'gitops-console.dev/freeze-fence';

export const SETTLE_DEADLINE_MS = 30_000;

export type Settled =
  | { outcome: 'applied'; live: Obj }
  | { outcome: 'not-applied'; how: 'moved-on' | 'fenced' }
  | { outcome: 'unknown'; why: string };

/** Whether a write's error leaves its result unknown: the cluster did not answer (not a refusal it sent). */
export function outcomeUnknown(e: unknown): boolean {
  return e instanceof HttpError && e.status === 502 && e.code === 'ClusterUnreachable';
}

export interface SettleOpts {
  deadlineMs?: number;
  now?: () => number;
  pause?: (ms: number) => Promise<unknown>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function settleUncertainPatch(
  conn: ClusterConnection,
  t: FreezeTarget,
  freezeId: string,
  sentRv: string,
  opts: SettleOpts = {},
): Promise<Settled> {
  const now = opts.now ?? Date.now;
  const pause = opts.pause ?? sleep;
  const until = now() + (opts.deadlineMs ?? SETTLE_DEADLINE_MS);
  let why = 'no attempt';
  for (let attempt = 0; attempt === 0 || now() < until; attempt++) {
    if (attempt > 0) await pause(Math.min(1000, 100 * 2 ** attempt));
    let live: Obj;
    try {
      live = await readObject(conn, t);
    } catch (e) {
      why = `cannot read it back: ${e instanceof Error ? e.message : String(e)}`;
      continue;
    }
    if (frozenState(t.controller, live, freezeId) === 'frozen') return { outcome: 'applied', live };
    const rv = String(metaOf(live).resourceVersion ?? '');
    if (rv !== sentRv) return { outcome: 'not-applied', how: 'moved-on' };
    try {
      await patchObject(
        conn,
        t,
        {
          contentType: 'application/merge-patch+json',
          body: { metadata: { resourceVersion: sentRv, annotations: { [FENCE_ANNOTATION]: freezeId } } },
        },
        `cannot fence ${t.name}`,
      );
    } catch (e) {
      // 409: the object moved meanwhile (perhaps the patch itself came): read it again
      why = `cannot fence it: ${e instanceof Error ? e.message : String(e)}`;
      continue;
    }
    // the fence's own annotation goes again (best effort: a leftover one only names the freeze)
    await patchObject(
      conn,
      t,
      {
        contentType: 'application/merge-patch+json',
        body: { metadata: { annotations: { [FENCE_ANNOTATION]: null } } },
      },
      `cannot remove the fence from ${t.name}`,
    ).catch(() => undefined);
    return { outcome: 'not-applied', how: 'fenced' };
  }
  return { outcome: 'unknown', why };
}
