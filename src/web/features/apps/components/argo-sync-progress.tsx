// An Argo CD app's last (or running) sync, as its controller reports it: "why is this not synced yet?" in one
// sentence, then the steps in the order they run (PreSync hooks, Sync by wave, PostSync hooks), each object with
// its result and message.
import type { ArgoSyncDto } from '../../../../api/schemas.ts';

const tone = (s: string | undefined) =>
  s === 'Failed' || s === 'Error' || s === 'SyncFailed'
    ? 'text-red-700'
    : s === 'Running' || s === 'Terminating'
      ? 'text-amber-700'
      : 'text-slate-600';

export function ArgoSyncProgress({ sync }: { sync: ArgoSyncDto }) {
  const running = sync.phase === 'Running';
  const failed = sync.phase === 'Failed' || sync.phase === 'Error';
  return (
    <section className="mt-2 text-sm" aria-label="Argo CD sync" data-testid="argo-sync" data-phase={sync.phase}>
      {sync.why && (
        <p
          className={`rounded px-2 py-1 ${failed ? 'bg-red-50 text-red-800' : 'bg-amber-50 text-amber-900'}`}
          data-testid="sync-why"
        >
          <span className="font-medium">{running ? 'Not synced yet: ' : 'Sync failed: '}</span>
          {sync.why}
        </p>
      )}
      <details className="mt-1" open={running || failed}>
        <summary className="cursor-pointer text-slate-600">
          Last sync {sync.phase.toLowerCase()}
          {sync.revision ? ` at ${sync.revision.slice(0, 7)}` : ''}
          {sync.initiatedBy ? ` (by ${sync.initiatedBy})` : ''}
        </summary>
        <ol className="mt-1 space-y-1">
          {sync.steps.map((s) => (
            <li
              key={`${s.phase}-${s.wave ?? ''}`}
              className="rounded border border-slate-200 px-2 py-1"
              data-testid="sync-step"
              data-phase={s.phase}
              {...(s.wave !== undefined ? { 'data-wave': s.wave } : {})}
            >
              <span className="font-medium">
                {s.phase}
                {s.wave !== undefined ? ` · wave ${s.wave}` : ''}
              </span>
              <ul className="ml-4 list-disc">
                {s.tasks.map((t) => (
                  <li key={`${t.group}/${t.kind}/${t.namespace ?? ''}/${t.name}`} className="break-words">
                    {t.hookType ? `${t.hookType} hook ` : ''}
                    {t.kind} {t.name}:{' '}
                    <span className={tone(t.hookPhase ?? t.status)}>{t.hookPhase ?? t.status ?? '—'}</span>
                    {t.message ? <span className="text-slate-500"> — {t.message}</span> : null}
                  </li>
                ))}
              </ul>
            </li>
          ))}
        </ol>
      </details>
    </section>
  );
}
