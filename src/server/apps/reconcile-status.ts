// What became of a "reconcile now" request, read from the controller's own acknowledgement in the app
// object's status (from the informer cache: no apiserver call):
// - Flux: `status.lastHandledReconcileAt` reaches the `reconcile.fluxcd.io/requestedAt` we wrote; the
//   outcome is the Ready condition (True: applied `lastAppliedRevision`; False: its reason and message).
// - Argo CD: `status.reconciledAt` advances past the request (the refresh annotation is gone); the outcome
//   is the last operation (Failed / Error: its message) and the compared revision.
// Fields the controller took back are the app's drift episodes that ended (reverted) after the request.
// No Fastify types here.
import type { ReconcileStatusResponse } from '../../api/schemas.ts';
import type { App } from '../../domain/app.ts';
import { refId } from '../../domain/refs.ts';
import { asObj, conditionsOf, str, type Obj } from '../gitops/common.ts';
import type { DriftTracker } from '../drift/index.ts';

/** After this long without an acknowledgement, the request is reported as not picked up. */
export const RECONCILE_TIMEOUT_MS = 60_000;

export interface ReconcileStatusDeps {
  /** the app's custom resource as the informer last saw it */
  raw(id: string): Record<string, unknown> | undefined;
  drift?: DriftTracker | undefined;
  now?: () => number;
  timeoutMs?: number;
}

/** The newest status write of an object (its managedFields entry on the status subresource), if any. */
function lastStatusWrite(o: Obj): string | undefined {
  const mf = asObj(o.metadata).managedFields;
  if (!Array.isArray(mf)) return undefined;
  return mf
    .map(asObj)
    .filter((e) => e.subresource === 'status' && typeof e.time === 'string')
    .map((e) => e.time as string)
    .sort()
    .at(-1);
}

/** `at` is at or after `requested`; managedFields times have second resolution, so compare whole seconds */
const notBefore = (at: string | undefined, requested: string) =>
  !!at && Math.floor(Date.parse(at) / 1000) >= Math.floor(Date.parse(requested) / 1000);

export function reconcileStatus(a: App, requestedAt: string, deps: ReconcileStatusDeps): ReconcileStatusResponse {
  const now = deps.now?.() ?? Date.now();
  const timeoutMs = deps.timeoutMs ?? RECONCILE_TIMEOUT_MS;
  const o = asObj(deps.raw(a.id));
  const status = asObj(o.status);
  const base = { requestedAt, timeoutMs, reverted: [] as ReconcileStatusResponse['reverted'] };
  let handled: boolean;
  let reconciledAt: string | undefined;
  let outcome: Pick<ReconcileStatusResponse, 'state' | 'revision' | 'reason' | 'message'>;
  if (a.controller === 'flux') {
    const last = str(status.lastHandledReconcileAt);
    handled = !!last && (last === requestedAt || Date.parse(last) >= Date.parse(requestedAt));
    const seen = lastStatusWrite(o);
    reconciledAt = notBefore(seen, requestedAt) ? seen : undefined;
    const ready = conditionsOf(o).find((c) => c.type === 'Ready');
    outcome =
      ready?.status === 'False'
        ? { state: 'failed', reason: ready.reason ?? 'NotReady', message: ready.message ?? '' }
        : ready?.status === 'True'
          ? { state: 'reconciled', ...(a.source.revisionObserved ? { revision: a.source.revisionObserved } : {}) }
          : { state: 'pending', message: ready?.message ?? 'reconciliation in progress' };
  } else {
    const at = str(status.reconciledAt);
    handled = !!at && Date.parse(at) >= Date.parse(requestedAt);
    reconciledAt = handled ? at : undefined;
    const op = asObj(status.operationState);
    const phase = str(op.phase);
    outcome =
      phase === 'Failed' || phase === 'Error'
        ? { state: 'failed', reason: `Operation${phase}`, message: str(op.message) ?? '' }
        : { state: 'reconciled', ...(a.source.revisionObserved ? { revision: a.source.revisionObserved } : {}) };
  }
  if (!handled) {
    if (now - Date.parse(requestedAt) > timeoutMs) {
      const why = a.automation.suspended
        ? `${a.kind} ${a.name} is suspended: its controller ignores reconcile requests`
        : a.simulated
          ? 'no Argo CD controller runs here (the status is simulated): nothing refreshes the app'
          : `the controller did not pick the request up within ${Math.round(timeoutMs / 1000)} s`;
      return { ...base, state: 'timeout', reason: 'NotPickedUp', message: why };
    }
    return { ...base, state: 'pending' };
  }
  const reverted = (deps.drift?.endedSince(a.id, requestedAt) ?? [])
    .filter((e) => e.how === 'reverted')
    .flatMap((e) => e.fields.map((f) => ({ object: refId(e.ref), path: f.path, managers: e.managers })));
  return {
    ...base,
    ...outcome,
    ...(reconciledAt ? { reconciledAt } : {}),
    reverted,
  };
}
