import type { App } from '../../../../domain/app.ts';
import { Time } from '../../../components/time.tsx';
import { usePermission } from '../../../lib/use-permission.ts';
import { useReconcileApp, useReconcileStatus } from '../api/reconcile-app.ts';
import { reconcileStatusText, type ReconcileTone } from '../lib/reconcile-status-text.ts';

const TONE: Record<ReconcileTone, string> = {
  pending: 'text-slate-600',
  ok: 'text-emerald-700',
  error: 'text-red-700',
  warn: 'text-amber-800',
};

/**
 * "Reconcile now": asks the controller to reconcile from Git now, then says what happened (the controller's
 * acknowledgement, the revision applied, the drifted fields it reverted, or the failure). Disabled, with the
 * reason, without the role.
 */
export function ReconcileButton({ app }: { app: Pick<App, 'id' | 'cluster' | 'env' | 'controller'> }) {
  const perm = usePermission('app.reconcile', { cluster: app.cluster, env: app.env });
  const m = useReconcileApp(app);
  const status = useReconcileStatus(app.id, m.data?.requestedAt);
  const said = status.data ? reconcileStatusText(status.data) : undefined;
  return (
    <span className="ml-auto flex items-center gap-2 text-xs">
      {!perm.allowed && (
        <span className="text-slate-500" data-testid="reconcile-disabled-reason">
          {perm.reason}
        </span>
      )}
      {m.isSuccess && (
        <span className="text-emerald-700">
          requested at <Time iso={m.data.requestedAt} timeOnly />
        </span>
      )}
      {said && (
        <span className={TONE[said.tone]} data-testid="reconcile-status" data-state={status.data?.state} role="status">
          {said.text}
        </span>
      )}
      <button
        type="button"
        data-testid="reconcile"
        disabled={!perm.allowed || m.isPending}
        title={perm.allowed ? 'Ask the controller to reconcile from Git now' : perm.reason}
        onClick={() => m.mutate()}
        className="rounded border border-teal-700 px-2 py-1 font-medium text-teal-800 disabled:cursor-not-allowed disabled:border-slate-300 disabled:text-slate-400"
      >
        {app.controller === 'flux' ? 'Reconcile now' : 'Refresh now'}
      </button>
    </span>
  );
}
