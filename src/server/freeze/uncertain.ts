// A freeze patch whose answer never came: settled against the app object before the start records anything
// (kube/unanswered-write.ts has the why and how). Applied ⇒ the start goes on; fenced or moved on ⇒ it failed and
// changed nothing; unknown at the deadline ⇒ the caller keeps the freeze, so on-call can end it (the end restores
// whatever it finds).
import { frozenState } from '../../domain/freeze.ts';
import { HttpError } from '../http/errors.ts';
import { KINDS } from '../kube/kinds.ts';
import type { ClusterConnection } from '../kube/connection.ts';
import { settleUnansweredWrite, type SettleOpts, type Settled } from '../kube/unanswered-write.ts';
import type { FreezeTarget } from './store.ts';

export { FENCE_ANNOTATION } from '../kube/unanswered-write.ts';
export type { SettleOpts } from '../kube/unanswered-write.ts';

/** Whether a freeze write's error leaves its result unknown: the cluster did not answer (not a refusal it sent). */
export function outcomeUnknown(e: unknown): boolean {
  // a refused connection sent nothing: the patch did not happen (and the apiserver may not be back for a while)
  return (
    e instanceof HttpError &&
    e.status === 502 &&
    e.code === 'ClusterUnreachable' &&
    !/ECONNREFUSED/.test(e.detail ?? '')
  );
}

export function settleUncertainPatch(
  conn: ClusterConnection,
  t: FreezeTarget,
  freezeId: string,
  sentRv: string,
  opts: SettleOpts = {},
): Promise<Settled> {
  const k = KINDS[t.kind];
  const path = `/apis/${k.group}/${k.version}/namespaces/${encodeURIComponent(t.namespace)}/${k.plural}/${encodeURIComponent(t.name)}`;
  return settleUnansweredWrite(
    conn,
    path,
    sentRv,
    (live) => frozenState(t.controller, live, freezeId) === 'frozen',
    freezeId,
    opts,
  );
}
