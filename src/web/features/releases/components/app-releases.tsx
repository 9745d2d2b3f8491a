// The app's releases (issue 16): one row per release, newest first, its nine states as a chain. A state that
// failed, is unknown or still pending says so in words (and colour); each recorded state links to its evidence
// (for who may read the evidence log: a developer sees their apps' releases and rolls back, without the log).
// The newest row answers "merged, but not live — why?".
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import type { ReleaseDto, ReleaseStateDto } from '../../../../api/schemas.ts';
import { RELEASE_EVIDENCE } from '../../../../domain/release.ts';
import { releaseLiveness } from '../../../../domain/release-not-live.ts';
import { Time } from '../../../components/time.tsx';
import { usePermission } from '../../../lib/use-permission.ts';
import { releasesQueryOptions } from '../api/release-queries.ts';
import { RollbackButton } from './rollback-button.tsx';
import { WhatRan } from './what-ran.tsx';

const STATUS_STYLE: Record<ReleaseStateDto['status'], string> = {
  ok: 'border-emerald-300 bg-emerald-50 text-emerald-900',
  failed: 'border-red-400 bg-red-50 text-red-900',
  unknown: 'border-slate-300 bg-slate-100 text-slate-600',
  pending: 'border-dashed border-slate-300 bg-white text-slate-600',
  held: 'border-amber-400 bg-amber-50 text-amber-900',
};
const STATUS_WORD: Record<ReleaseStateDto['status'], string> = {
  ok: '✓ done',
  failed: '✗ failed',
  unknown: '? unknown',
  pending: '… pending',
  held: '⏸ held',
};

/** The evidence browser filtered to this state's records of this release. */
export function evidenceHref(appId: string, s: ReleaseStateDto, sha: string): string | undefined {
  const type = RELEASE_EVIDENCE[s.name];
  if (!type || s.seq === undefined) return undefined;
  return `/evidence?${new URLSearchParams({ app: appId, type, q: sha })}`;
}

function StateCell({ appId, sha, s, links }: { appId: string; sha: string; s: ReleaseStateDto; links: boolean }) {
  // a link to the evidence log only for who may read it (a developer sees the releases, not the log)
  const href = links ? evidenceHref(appId, s, sha) : undefined;
  return (
    <li
      className={`min-w-0 rounded border p-2 text-xs ${STATUS_STYLE[s.status]}`}
      data-testid="release-state"
      data-state={s.name}
      data-status={s.status}
    >
      <div className="flex flex-wrap items-baseline justify-between gap-x-2">
        <span className="font-semibold">
          {s.step}. {s.name}
        </span>
        <span>{STATUS_WORD[s.status]}</span>
      </div>
      {s.value && <div className="mt-1 font-mono wrap-anywhere">{s.value}</div>}
      {s.why && <div className="mt-1 wrap-anywhere">{s.why}</div>}
      {s.status === 'held' && s.why?.startsWith('held by window ') ? (
        <Link to="/freezes" className="mt-1 block underline" data-testid="release-held-window">
          freeze windows
        </Link>
      ) : s.status === 'held' && s.why?.startsWith('held by a freeze ') ? (
        <Link to="/freezes" className="mt-1 block underline" data-testid="release-held-freeze">
          freezes
        </Link>
      ) : (
        s.status === 'held' && (
          <Link to="/prune-previews" className="mt-1 block underline" data-testid="release-held-previews">
            prune previews
          </Link>
        )
      )}
      <div className="mt-1 flex flex-wrap gap-x-2 text-[10px] text-slate-600">
        {s.time && <Time iso={s.time} />}
        {s.actor && <span className="min-w-0 wrap-anywhere">by {s.actor}</span>}
        {href && (
          <Link to={href} className="underline" title={`evidence record #${s.seq}`}>
            evidence #{s.seq}
          </Link>
        )}
      </div>
    </li>
  );
}

/** The release's canary as it went, step by step (each a `release.canary` record: promotion within the env). */
function CanarySteps({
  appId,
  sha,
  steps,
  links,
}: {
  appId: string;
  sha: string;
  steps: NonNullable<ReleaseDto['canary']>;
  links: boolean;
}) {
  return (
    <details className="mt-1 text-xs" data-testid="release-canary">
      <summary className="cursor-pointer text-slate-600">
        canary: {steps.length} step(s) recorded, last {steps[steps.length - 1]?.state}
      </summary>
      <ol className="mt-1 space-y-0.5">
        {steps.map((c) => (
          <li key={c.seq} data-testid="release-canary-step" data-state={c.state} className="wrap-anywhere">
            <Time iso={c.time} /> · {c.rollout} · {c.phase}
            {c.step !== null ? ` · step ${c.step}${c.steps ? ` of ${c.steps}` : ''}` : ''} · {c.weight} % — {c.reason}{' '}
            {links && (
              <Link
                className="text-teal-800 underline"
                to={`/evidence?${new URLSearchParams({ app: appId, type: 'release.canary', q: sha })}`}
              >
                evidence #{c.seq}
              </Link>
            )}
          </li>
        ))}
      </ol>
    </details>
  );
}

/** The newest release, live: said once for every screen (releaseLiveness), with its review when that failed. */
function LiveWords({ r }: { r: ReleaseDto }) {
  const l = releaseLiveness(r, undefined);
  return (
    <span className={l.tone === 'ok' ? 'text-emerald-800' : 'text-amber-800'} data-testid="release-live">
      {l.headline}
    </span>
  );
}

function ReleaseRow({ app, r, newest }: { app: ReleasesApp; r: ReleaseDto; newest: boolean }) {
  const appId = app.appId;
  const evidence = usePermission('evidence.read', { cluster: app.cluster, env: app.env }).allowed;
  return (
    <li className="border-t border-slate-100 py-2" data-testid="release" data-sha={r.sha}>
      <div className="mb-1 flex flex-wrap items-baseline gap-2 text-sm">
        <span className="font-mono font-semibold">{r.sha.slice(0, 7)}</span>
        <span className="text-slate-500">
          first seen <Time iso={r.firstSeen} />
        </span>
        {newest && !r.blocked && <LiveWords r={r} />}
        {r.unchangedFrom && (
          <span className="rounded bg-slate-100 px-1 text-slate-700" data-testid="no-change">
            no change here: renders as {r.unchangedFrom.slice(0, 7)}, so it is not a release of this app
          </span>
        )}
        {/* rolling back to a commit that changed nothing here is rolling back to the release it renders as */}
        {!newest && !r.unchangedFrom && (
          <RollbackButton appId={appId} appName={app.name} cluster={app.cluster} env={app.env} sha={r.sha} />
        )}
      </div>
      {/* the nine states in rows of equal cells, as many as fit (not nine squeezed columns at 1,024 px) */}
      <ol
        className="grid grid-cols-[repeat(auto-fill,minmax(10rem,1fr))] gap-1"
        aria-label={`states of release ${r.sha.slice(0, 7)}`}
      >
        {r.states.map((s) => (
          <StateCell key={s.name} appId={appId} sha={r.sha} s={s} links={evidence} />
        ))}
      </ol>
      {r.canary && <CanarySteps appId={appId} sha={r.sha} steps={r.canary} links={evidence} />}
    </li>
  );
}

/** The rows in order: the newest on its own; each run of older commits that changed nothing here folded into one. */
function foldUnchanged(
  releases: ReleaseDto[],
): Array<{ folded: false; row: ReleaseDto; newest: boolean } | { folded: true; rows: ReleaseDto[] }> {
  const out: ReturnType<typeof foldUnchanged> = [];
  releases.forEach((r, i) => {
    const last = out.at(-1);
    if (i === 0 || !r.unchangedFrom) out.push({ folded: false, row: r, newest: i === 0 });
    else if (last?.folded) last.rows.push(r);
    else out.push({ folded: true, rows: [r] });
  });
  return out;
}

interface ReleasesApp {
  appId: string;
  name: string;
  cluster: string;
  env: string;
}

export function AppReleases({ appId, name, cluster, env }: ReleasesApp) {
  const perm = usePermission('release.read', { cluster, env });
  const evidence = usePermission('evidence.read', { cluster, env }).allowed;
  const q = useQuery({ ...releasesQueryOptions(appId), enabled: perm.allowed });
  const newest = q.data?.releases[0];
  return (
    <section className="mt-4 rounded-lg border border-slate-200 bg-white p-4" data-testid="app-releases">
      <h2 className="mb-2 font-semibold">Releases</h2>
      {!perm.allowed && <p className="text-sm text-slate-500">{perm.reason}.</p>}
      {perm.allowed && <WhatRan appId={appId} env={env} />}
      {perm.allowed && q.isPending && <p className="text-sm text-slate-500">Loading…</p>}
      {q.isError && (
        <p className="text-sm text-red-800" role="alert">
          Cannot load the releases: {q.error.message}
        </p>
      )}
      {q.data && q.data.releases.length === 0 && (
        <p className="text-sm text-slate-500">
          No release recorded yet: the recorder records the next revision it sees.
        </p>
      )}
      {newest && q.data?.notLive && (
        <p
          className="mb-2 rounded border border-amber-300 bg-amber-50 p-2 text-sm text-amber-900 wrap-anywhere"
          data-testid="not-live"
          role="status"
        >
          <strong>{releaseLiveness(newest, q.data.notLive).headline}</strong> {newest.sha.slice(0, 7)} stops at{' '}
          <strong>{q.data.notLive.state}</strong>: {q.data.notLive.why}
        </p>
      )}
      {!!q.data?.gaps?.length && (
        <ul className="mb-2 space-y-1 text-sm text-slate-700" data-testid="release-gaps">
          {q.data.gaps.map((g) => (
            <li key={g.seq} className="rounded border border-slate-300 bg-slate-100 p-2">
              <strong>Not recorded</strong> from <Time iso={g.from} /> to <Time iso={g.to} />: the console was not
              recording while the revision moved {g.lastRecordedSha.slice(0, 7)} → {g.currentSha.slice(0, 7)}; releases
              in between, if any, are not in the chain
              {evidence && (
                <>
                  {' '}
                  (
                  <Link
                    to={`/evidence?${new URLSearchParams({ app: appId, type: 'release.gap' })}`}
                    className="underline"
                  >
                    evidence #{g.seq}
                  </Link>
                  )
                </>
              )}
              .
            </li>
          ))}
        </ul>
      )}
      <ol>
        {foldUnchanged(q.data?.releases ?? []).map((g) =>
          g.folded ? (
            <li key={g.rows[0]?.sha} className="border-t border-slate-100 py-2" data-testid="no-change-fold">
              <details>
                <summary className="cursor-pointer text-sm text-slate-700">
                  {g.rows.length} commit{g.rows.length === 1 ? '' : 's'} that changed nothing here (the render stayed as
                  it was: another app's commit in a shared repository, or a change that renders the same)
                </summary>
                <ol>
                  {g.rows.map((r) => (
                    <ReleaseRow key={r.sha} app={{ appId, name, cluster, env }} r={r} newest={false} />
                  ))}
                </ol>
              </details>
            </li>
          ) : (
            <ReleaseRow key={g.row.sha} app={{ appId, name, cluster, env }} r={g.row} newest={g.newest} />
          ),
        )}
      </ol>
    </section>
  );
}
