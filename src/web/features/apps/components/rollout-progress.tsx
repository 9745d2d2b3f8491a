// An Argo Rollouts canary on the app page (issue 25): its phase, the steps as a compact bar (done, current,
// pending), the weight it holds, why it is paused, stable and canary pod-template hashes, the current step's
// analysis; and its governed controls (promote, promote-full, abort, retry, pause, resume), each with a required
// reason. Live: the app's query is refreshed by the SSE stream.
import { CanaryActions } from './canary-actions.tsx';
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
  const r = rollout;
  const verbs: RolloutVerb[] = r.aborted
    ? ['retry']
    : r.phase === 'Healthy'
      ? []
      : [...(r.paused ? (['promote', 'resume'] as const) : (['promote', 'pause'] as const)), 'promote-full', 'abort'];
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
      <CanaryActions
        prefix="rollout"
        verbs={verbs}
        danger={['abort']}
        perm={perm}
        pending={m.isPending}
        done={m.isSuccess ? `${m.data.verb} sent` : undefined}
        onAct={(verb, reason, sent) => m.mutate({ verb, reason }, { onSuccess: sent })}
      />
    </section>
  );
}
