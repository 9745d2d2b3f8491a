// A Flagger canary on the app page (issue 25): its phase, the iterations of its analysis as a compact bar, the
// failed checks against the threshold that rolls it back, the revision under analysis and the one last promoted,
// the webhooks that gate it; and its governed controls — promote (opens its confirm-promotion gate) and rollback
// (opens its rollback gate) — each with a required reason. Live: the app's query is refreshed by the SSE stream.
import { CanaryActions } from './canary-actions.tsx';
import type { FlaggerCanaryDto } from '../../../../api/schemas.ts';
import { usePermission } from '../../../lib/use-permission.ts';
import { useControlFlagger, type FlaggerVerb } from '../api/control-flagger.ts';

const PHASE_TONE: Record<string, string> = {
  Succeeded: 'text-emerald-800',
  Initialized: 'text-emerald-800',
  Failed: 'text-red-800',
  WaitingPromotion: 'text-amber-900',
  Progressing: 'text-amber-900',
};
const ASKING = ['Progressing', 'Waiting', 'WaitingPromotion'];

export function FlaggerCanary({
  app,
  canary,
}: {
  app: { id: string; cluster: string; env: string };
  canary: FlaggerCanaryDto;
}) {
  const perm = usePermission('rollout.control', { cluster: app.cluster, env: app.env });
  const m = useControlFlagger(app.id, canary);
  const c = canary;
  const hooks = new Set(c.webhooks.map((w) => w.type));
  const verbs: FlaggerVerb[] = ASKING.includes(c.phase)
    ? [
        ...(hooks.has('confirm-promotion') ? (['promote'] as const) : []),
        ...(hooks.has('rollback') ? (['rollback'] as const) : []),
      ]
    : [];
  const total = c.iterations ?? 0;
  return (
    <section
      className="mt-3 rounded border border-slate-200 p-3 text-sm"
      aria-label={`Flagger canary ${c.name}`}
      data-testid="flagger-canary"
      data-phase={c.phase}
      data-iteration={c.iteration}
    >
      <div className="flex flex-wrap items-center gap-2">
        <h2 className="font-semibold">Flagger canary {c.name}</h2>
        <span className={PHASE_TONE[c.phase] ?? 'text-slate-700'} data-testid="flagger-phase">
          {c.phase}
          {c.suspended ? ' (suspended)' : ''}
        </span>
        {total > 0 ? (
          <span>
            iteration {c.iteration} of {total}
          </span>
        ) : (
          <span>canary weight {c.weight} %</span>
        )}
        <span data-testid="flagger-failed-checks" className={c.failedChecks ? 'text-red-800' : 'text-slate-600'}>
          {c.failedChecks} failed check(s){c.threshold !== null ? `, ${c.threshold} roll it back` : ''}
        </span>
      </div>
      {c.message && (
        <p className="mt-1 text-slate-700 wrap-anywhere" data-testid="flagger-message">
          {c.message}
        </p>
      )}
      {total > 0 && (
        <ol className="mt-2 flex gap-1" aria-label="analysis iterations">
          {Array.from({ length: total }, (_, i) => (
            <li key={i} className="min-w-0 flex-1" data-testid="flagger-iteration" title={`iteration ${i + 1}`}>
              <span
                className={`block h-2 rounded ${i < c.iteration ? 'bg-emerald-600' : i === c.iteration && ASKING.includes(c.phase) ? 'bg-amber-500' : 'bg-slate-300'}`}
                aria-hidden="true"
              />
            </li>
          ))}
        </ol>
      )}
      <dl className="mt-2 grid grid-cols-[auto_1fr] gap-x-3 text-xs">
        <dt className="text-slate-500">Target / primary</dt>
        <dd className="font-mono">
          {c.target} / {c.primary} ({c.provider})
        </dd>
        <dt className="text-slate-500">Analysed / promoted</dt>
        <dd className="font-mono">
          {c.lastAppliedSpec ?? '—'} / {c.lastPromotedSpec ?? '—'}
        </dd>
        {c.webhooks.length > 0 && (
          <>
            <dt className="text-slate-500">Webhooks</dt>
            <dd className="wrap-anywhere">{c.webhooks.map((w) => `${w.name} (${w.type})`).join(', ')}</dd>
          </>
        )}
        {c.waitingForPromotion && (
          <>
            <dt className="text-slate-500">Waiting</dt>
            <dd data-testid="flagger-waiting">for the promotion gate: a governed promote opens it</dd>
          </>
        )}
      </dl>
      <CanaryActions
        prefix="flagger"
        verbs={verbs}
        danger={['rollback']}
        perm={perm}
        pending={m.isPending}
        done={m.isSuccess ? `${m.data.verb}: gate ${m.data.gate} opened` : undefined}
        onAct={(verb, reason, sent) => m.mutate({ verb, reason }, { onSuccess: sent })}
      />
    </section>
  );
}
