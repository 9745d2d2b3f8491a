// What the unfreeze did: per app the branch and commit (or the pull request), where each change was placed
// (or why not, with the YAML to paste), and whether the prior automation was restored.
import type { FreezeDto } from '../../../../api/schemas.ts';
import { SafeLink } from '../../../components/safe-link.tsx';
import { Time } from '../../../components/time.tsx';
import { appNameOf, readPlacements, shortSha } from '../lib/freeze-text.ts';

const ACTION_TEXT = { 'write-back': 'write back to Git', 'git-wins': 'let Git win' } as const;

export function WriteBackResult({ freeze }: { freeze: FreezeDto }) {
  const decisions = freeze.decisions ?? [];
  const writeBack = freeze.writeBack ?? [];
  return (
    <section className="mt-4" aria-labelledby="freeze-result-h" data-testid="freeze-result">
      <h2 id="freeze-result-h" className="font-semibold">
        Unfreeze result
      </h2>
      {freeze.endReason && <p className="text-sm text-slate-600">Ended: {freeze.endReason}</p>}
      {decisions.length === 0 ? (
        <p className="mt-1 text-sm text-slate-600">No change was decided on: nothing was written back.</p>
      ) : (
        <ul className="mt-1 text-sm" data-testid="freeze-decisions">
          {decisions.map((d) => (
            <li key={d.change} data-action={d.action}>
              <span className="font-mono break-all">{d.change}</span>: {ACTION_TEXT[d.action]}
            </li>
          ))}
        </ul>
      )}
      {writeBack.map((w) => {
        const placements = readPlacements(w.placements);
        return (
          <div
            key={w.appId}
            className="mt-3 rounded border border-slate-200 p-3"
            data-testid="write-back"
            data-app={w.appId}
          >
            <h3 className="font-medium">Written back for {appNameOf(w.appId)}</h3>
            {w.error && (
              <p role="alert" className="mt-1 text-sm text-red-800">
                The write-back failed: {w.error}
              </p>
            )}
            <dl className="mt-1 grid grid-cols-[8rem_1fr] gap-x-3 gap-y-1 text-sm">
              <dt className="text-slate-500">Branch</dt>
              <dd className="font-mono break-all" data-testid="write-back-branch">
                {w.branch}
              </dd>
              <dt className="text-slate-500">Commit</dt>
              <dd className="font-mono" data-testid="write-back-commit" title={w.commit ?? undefined}>
                {w.commit ? shortSha(w.commit) : 'none (nothing could be placed in a file)'}
              </dd>
              {w.pullRequest && (
                <>
                  <dt className="text-slate-500">Pull request</dt>
                  <dd data-testid="write-back-pr">
                    <SafeLink href={w.pullRequest.url}>#{w.pullRequest.number}</SafeLink>
                  </dd>
                </>
              )}
            </dl>
            {!w.pullRequest && w.commit && (
              <p className="mt-1 text-xs text-slate-600">
                The repository has no forge the console knows: ask a reviewer to merge branch{' '}
                <code className="font-mono">{w.branch}</code>.
              </p>
            )}
            <ul className="mt-2 space-y-2 text-sm">
              {placements.map((p) =>
                p.placed ? (
                  <li key={p.changeId} data-testid="placement" data-placed="true">
                    <span aria-hidden>✓ </span>
                    <span className="font-mono break-all">{p.changeId}</span> placed in{' '}
                    <code className="font-mono">{p.file}</code>
                    {p.how ? <span className="text-slate-500"> ({p.how})</span> : null}
                    {p.note ? (
                      <span
                        data-testid="placement-note"
                        className="block break-words text-slate-600 dark:text-slate-300"
                      >
                        {p.note}
                      </span>
                    ) : null}
                  </li>
                ) : (
                  <li key={p.changeId} data-testid="placement" data-placed="false">
                    <span aria-hidden>⚠ </span>
                    <span className="font-mono break-all">{p.changeId}</span> <strong>not placed</strong>: {p.reason}.
                    Paste this YAML where it belongs:
                    <pre className="mt-1 overflow-auto rounded bg-slate-100 p-2 font-mono text-xs" tabIndex={0}>
                      {p.yaml}
                    </pre>
                  </li>
                ),
              )}
            </ul>
          </div>
        );
      })}
      {freeze.targets.length > 0 && (
        <ul className="mt-3 text-sm" data-testid="freeze-restored">
          {freeze.targets.map((t) => (
            <li key={t.appId}>
              {t.restored ? (
                t.restored.ok ? (
                  <>
                    <span aria-hidden>✓ </span>
                    {t.name}: automation restored at <Time iso={t.restored.at} />
                  </>
                ) : (
                  <span className="text-red-800">
                    <span aria-hidden>✖ </span>
                    {t.name}: automation NOT restored{t.restored.detail ? `: ${t.restored.detail}` : ''}
                  </span>
                )
              ) : (
                <>
                  {t.name}: {freeze.status === 'ending' ? 'restoring…' : 'automation not restored by the console'}
                </>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
