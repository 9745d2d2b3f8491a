import type { App } from '../../../../domain/app.ts';
import { usePermission } from '../../../lib/use-permission.ts';
import { useReconcileApp } from '../api/reconcile-app.ts';

/** "Reconcile now": asks the controller to reconcile from Git now. Disabled, with the reason, without the role. */
export function ReconcileButton({ app }: { app: Pick<App, 'id' | 'cluster' | 'env' | 'controller'> }) {
  const perm = usePermission('app.reconcile', { cluster: app.cluster, env: app.env });
  const m = useReconcileApp(app);
  return (
    <span className="ml-auto flex items-center gap-2 text-xs">
      {!perm.allowed && (
        <span className="text-slate-500" data-testid="reconcile-disabled-reason">
          {perm.reason}
        </span>
      )}
      {m.isSuccess && <span className="text-emerald-700">requested at {m.data.requestedAt.slice(11, 19)}</span>}
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
