// An Argo Rollouts canary on the app page (issue 25): its phase, the steps as a compact bar (done, current,
// pending), the weight it holds, why it is paused, stable and canary pod-template hashes, the current step's
// analysis; and its governed controls (promote, promote-full, abort, retry, pause, resume), each with a required
// reason. Live: the app's query is refreshed by the SSE stream.
import { useState } from 'react';
import type { RolloutDto } from '../../../../api/schemas.ts';
import { usePermission } from '../../../lib/use-permission.ts';
import { useControlRollout, type RolloutVerb } from '../api/control-rollout.ts';

const STEP_TONE = { done: 'bg-emerald-600', current: 'bg-amber-500', pending: 'bg-slate-300' } as const;
const PHASE_TONE: Record<string, string> = {
  Healthy: 'text-emerald-800',
  Degraded: 'text-red-800',
  Paused: 'text-amber-900',
  Progressing: 'text-amber-900',
};

export function RolloutProgress({
  app,
  rollout,
}: {
  app: { id: string; cluster: string; env: string };
  rollout: RolloutDto;
}) {
  const perm = usePermission('rollout.control', { cluster: app.cluster, env: app.env });
  const m = useControlRollout(app.id, rollout);
  const [reason, setReason] = useState('');
  const r = rollout;
  const verbs: RolloutVerb[] = r.aborted
    ? ['retry']
    : r.phase === 'Healthy'
      ? []
      : [...(r.paused ? (['promote', 'resume'] as const) : (['promote', 'pause'] as const)), 'promote-full', 'abort'];
  const canAct = perm.allowed && reason.trim().length >= 3 && !m.isPending;
  return (
    <section
      className="mt-3 rounded border border-slate-200 p-3 text-sm"
      aria-label={`Rollout ${r.name}`}
      data-testid="rollout"
      data-phase={r.phase}
      data-weight={r.weight}
    >
      <div className="flex flex-wrap items-center gap-2">
        <h2 className="font-semibold">Rollout {r.name}</h2>
        <span className={PHASE_TONE[r.phase] ?? 'text-slate-700'} data-testid="rollout-phase">
          {r.phase}
          {r.aborted ? ' (aborted)' : ''}
        </span>
        <span data-testid="rollout-weight">canary weight {r.weight} %</span>
        {r.currentStep !== null && (
          <span className="text-slate-600">
            step {Math.min(r.currentStep + 1, r.steps.length)} of {r.steps.length}
          </span>
        )}
      </div>
      {r.message && (
        <p className="mt-1 text-slate-700 wrap-anywhere" data-testid="rollout-message">
          {r.message}
        </p>
      )}
      <ol className="mt-2 flex gap-1" aria-label="canary steps">
        {r.steps.map((s) => (
          <li
            key={s.index}
            className="min-w-0 flex-1"
            data-testid="rollout-step"
            data-state={s.state}
            title={`${s.index + 1}. ${s.text} (${s.state})`}
          >
            <span className={`block h-2 rounded ${STEP_TONE[s.state]}`} aria-hidden="true" />
            <span className="mt-0.5 block truncate text-xs text-slate-600">{s.text}</span>
          </li>
        ))}
      </ol>
      <dl className="mt-2 grid grid-cols-[auto_1fr] gap-x-3 text-xs">
        <dt className="text-slate-500">Stable / canary</dt>
        <dd className="font-mono">
          {r.stableHash ?? '—'} / {r.canaryHash ?? '—'}
        </dd>
        <dt className="text-slate-500">Replicas</dt>
        <dd>
          {r.replicas.updated} updated, {r.replicas.available} available of {r.replicas.desired}
        </dd>
        {r.paused && (
          <>
            <dt className="text-slate-500">Paused</dt>
            <dd data-testid="rollout-paused">{r.paused.reasons.join(', ')}</dd>
          </>
        )}
        {r.analysis && (
          <>
            <dt className="text-slate-500">Analysis</dt>
            <dd data-testid="rollout-analysis" className="wrap-anywhere">
              {r.analysis.name}: {r.analysis.status}
              {r.analysis.message ? ` — ${r.analysis.message}` : ''}
            </dd>
          </>
        )}
      </dl>
      {verbs.length > 0 && (
        <div className="mt-2 flex flex-wrap items-center gap-2">
          <label className="flex items-center gap-1 text-xs">
            <span className="text-slate-600">Reason</span>
            <input
              className="w-64 rounded border border-slate-300 px-1 py-0.5"
              value={reason}
              onChange={(e) => setReason(e.target.value)}
              data-testid="rollout-reason"
              placeholder="why (recorded with the action)"
            />
          </label>
          {verbs.map((v) => (
            <button
              key={v}
              type="button"
              data-testid={`rollout-${v}`}
              disabled={!canAct}
              title={
                !perm.allowed ? perm.reason : reason.trim().length < 3 ? 'give a reason first' : `${v} this canary`
              }
              onClick={() => m.mutate({ verb: v, reason: reason.trim() }, { onSuccess: () => setReason('') })}
              className={`rounded border px-2 py-0.5 text-xs font-medium disabled:cursor-not-allowed disabled:border-slate-300 disabled:text-slate-400 ${v === 'abort' ? 'border-red-700 text-red-800' : 'border-teal-700 text-teal-800'}`}
            >
              {v}
            </button>
          ))}
          {!perm.allowed && <span className="text-xs text-slate-500">{perm.reason}</span>}
          {m.isSuccess && (
            <span className="text-xs text-emerald-700" role="status" data-testid="rollout-done">
              {m.data.verb} sent
            </span>
          )}
        </div>
      )}
    </section>
  );
}
