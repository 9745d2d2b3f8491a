// The app page composes the apps, tree, diff and evidence features: a route of the composition layer.
import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { shortRevision } from '../../../domain/app.ts';
import { appSetPath } from '../../../api/appsets.ts';
import { DriftBadge, HealthBadge, SyncBadge, Tag } from '../../components/badges.tsx';
import { SafeLink, safeHttpUrl } from '../../components/safe-link.tsx';
import { Time } from '../../components/time.tsx';
import { TimeAgo } from '../../components/time-ago.tsx';
import { appQueryOptions, clustersQueryOptions } from '../../features/apps/api/apps-queries.ts';
import { ArgoSyncProgress } from '../../features/apps/components/argo-sync-progress.tsx';
import { SyncWindowsPanel } from '../../features/apps/components/sync-windows.tsx';
import { RolloutProgress } from '../../features/apps/components/rollout-progress.tsx';
import { FlaggerCanary } from '../../features/apps/components/flagger-canary.tsx';
import { ImageAutomation } from '../../features/apps/components/image-automation.tsx';
import { DriftSummary } from '../../features/apps/components/drift-summary.tsx';
import { DependencyRows, WaitingOn } from '../../features/apps/components/app-dependencies.tsx';
import { ReconcileButton } from '../../features/apps/components/reconcile-button.tsx';
import { StaleBanner } from '../../features/apps/components/stale-banner.tsx';
import { staleness } from '../../../domain/staleness.ts';
import { AppDiff } from '../../features/diff/components/app-diff.tsx';
import { EnvCompare } from '../../features/diff/components/env-compare.tsx';
import { AppEvidence } from '../../features/evidence/components/app-evidence.tsx';
import { AppReleases } from '../../features/releases/components/app-releases.tsx';
import { NotLiveLead } from '../../features/releases/components/not-live-lead.tsx';
import { FreezeBanner } from '../../features/freeze/components/freeze-banner.tsx';
import { AppFrozenChanges } from '../../features/freeze/components/app-frozen-changes.tsx';
import { FreezeButton } from '../../features/freeze/components/freeze-button.tsx';
import { PreviewPruneButton } from '../../features/prune/components/preview-prune-button.tsx';
import { PruneHoldLine } from '../../features/prune/components/prune-hold.tsx';
import { ResourceTree } from '../../features/tree/components/resource-tree.tsx';
import { ApiError } from '../../lib/api-client.ts';
import { useDocumentTitle } from '../../lib/document-title.ts';

export function AppPage() {
  const p = useParams();
  const id = `${p.cluster}/${p.namespace}/${p.kind}/${p.name}`;
  const q = useQuery(appQueryOptions(id));
  const clusters = useQuery(clustersQueryOptions());
  const loaded = q.data?.app;
  useDocumentTitle(loaded ? `${loaded.name} · ${loaded.env} · ${loaded.cluster}` : p.name);
  if (q.isPending) return <p className="text-slate-500">Loading…</p>;
  if (q.isError) {
    const notFound = q.error instanceof ApiError && q.error.status === 404;
    return (
      <div>
        <h1 className="mb-2 text-xl font-semibold wrap-anywhere">
          {notFound ? 'App not found' : 'Cannot load this app'}
        </h1>
        <div className="rounded border border-red-200 bg-red-50 p-4 text-red-800 wrap-anywhere" role="alert">
          {notFound ? `No app ${id}.` : `Cannot load ${id}: ${q.error.message}`}{' '}
          <Link to="/" className="underline">
            Back to all apps
          </Link>
        </div>
      </div>
    );
  }
  const { app } = q.data;
  const cluster = clusters.data?.clusters.find((c) => c.name === app.cluster);
  const stale = staleness(cluster);
  const a = app.automation;
  return (
    <div>
      <StaleBanner clusters={cluster ? [cluster] : []} />
      {app.freeze && <FreezeBanner freeze={app.freeze} />}
      {app.freeze && <AppFrozenChanges freezeId={app.freeze.id} appId={app.id} />}
      <nav aria-label="Breadcrumb" className="mb-2 text-sm">
        <ol className="flex flex-wrap gap-1 text-slate-600 [&>li+li]:before:mr-1 [&>li+li]:before:content-['/']">
          <li>
            <Link to="/" className="text-teal-700 underline">
              All apps
            </Link>
          </li>
          <li>
            <Link to={`/envs/${encodeURIComponent(app.env)}`} className="text-teal-700 underline">
              environment {app.env}
            </Link>
          </li>
          <li>
            <Link to={`/?cluster=${encodeURIComponent(app.cluster)}`} className="text-teal-700 underline">
              cluster {app.cluster}
            </Link>
          </li>
          <li aria-current="page">{app.name}</li>
        </ol>
      </nav>
      <header className="rounded-lg border border-slate-200 bg-white p-4 shadow-sm" data-testid="app-header">
        <div className="flex flex-wrap items-center gap-2">
          <h1 className="text-xl font-semibold">{app.name}</h1>
          <Tag tone={app.controller === 'flux' ? 'teal' : 'violet'}>
            {app.controller === 'flux' ? `Flux ${app.kind}` : 'Argo CD Application'}
          </Tag>
          <SyncBadge status={app.sync} stale={stale.stale} />
          <HealthBadge status={app.health} title={app.healthMessage} stale={stale.stale} />
          {stale.stale && (
            <span className="text-xs font-medium text-amber-800" data-testid="app-stale">
              stale since <Time iso={stale.since} /> (<TimeAgo iso={stale.since} />
              ): cluster {app.cluster} {cluster?.status === 'unreachable' ? 'is unreachable' : 'is reconnecting'}
            </span>
          )}
          {app.drift && <DriftBadge drift={app.drift} />}
          <span className="text-xs text-slate-500">
            updated <TimeAgo iso={app.updatedAt} />
          </span>
          <ReconcileButton app={app} />
          <PreviewPruneButton app={app} />
          <FreezeButton app={app} />
        </div>
        <WaitingOn app={app} dependencies={q.data.dependencies} />
        <PruneHoldLine app={app} />
        <NotLiveLead appId={app.id} cluster={app.cluster} env={app.env} />
        {q.data.sync && <ArgoSyncProgress sync={q.data.sync} />}
        <SyncWindowsPanel windows={q.data.syncWindows} />
        {q.data.rollouts?.map((r) => (
          <RolloutProgress key={`${r.namespace}/${r.name}`} app={app} rollout={r} />
        ))}
        {q.data.canaries?.map((c) => (
          <FlaggerCanary key={`${c.namespace}/${c.name}`} app={app} canary={c} />
        ))}
        <p className="mt-1 text-sm text-slate-600" data-testid="health-message">
          {app.healthMessage}
        </p>
        {app.drift && <DriftSummary drift={app.drift} />}
        {app.simulated && (
          <p className="mt-1 rounded bg-violet-50 px-2 py-1 text-xs text-violet-800">{app.simulated}</p>
        )}
        {/* one column on a phone (390 px); the values break anywhere: revisions and digests have no spaces */}
        <dl className="mt-3 grid grid-cols-1 gap-x-4 gap-y-1 text-sm sm:grid-cols-[10rem_minmax(0,1fr)]">
          <dt className="text-slate-500">Source</dt>
          <dd className="break-all">
            <SafeLink href={app.source.url}>{app.source.url ?? '—'}</SafeLink>{' '}
            {app.source.kind && (
              <span className="text-slate-500">
                ({app.source.kind}
                {app.source.name ? ` ${app.source.name}` : ''})
              </span>
            )}
          </dd>
          <dt className="text-slate-500">{app.kind === 'HelmRelease' ? 'Chart @ version' : 'Path / ref'}</dt>
          <dd className="font-mono break-all" data-testid="source-path">
            {app.source.path ?? '—'} @ {app.source.ref ?? '—'}
          </dd>
          <dt className="text-slate-500">Revision wanted</dt>
          <dd className="font-mono break-all" title={app.source.revisionWanted}>
            {app.source.revisionWanted ?? '—'}
          </dd>
          <dt className="text-slate-500">Revision applied</dt>
          <dd className="font-mono break-all" data-testid="observed-revision" title={app.source.revisionObserved}>
            {app.source.revisionObserved ?? '—'}{' '}
            {app.source.revisionObserved && (
              <span className="text-slate-500">({shortRevision(app.source.revisionObserved)})</span>
            )}
          </dd>
          {app.source.artifactDigest && (
            <>
              <dt className="text-slate-500">Artifact digest</dt>
              <dd className="font-mono break-all">{app.source.artifactDigest}</dd>
            </>
          )}
          <DependencyRows data={q.data} />
          <dt className="text-slate-500">Automation</dt>
          <dd className="flex flex-wrap gap-1" data-testid="automation">
            <Tag tone={a.autoSync ? 'teal' : 'slate'}>auto-sync {a.autoSync ? 'on' : 'off'}</Tag>
            <Tag tone={a.selfHeal ? 'teal' : 'slate'}>self-heal {a.selfHeal ? 'on' : 'off'}</Tag>
            <Tag tone={a.prune ? 'amber' : 'slate'}>prune {a.prune ? 'on' : 'off'}</Tag>
            {a.suspended && <Tag tone="amber">suspended</Tag>}
          </dd>
          {app.links && app.links.length > 0 && (
            <>
              <dt className="text-slate-500">Links</dt>
              <dd className="flex flex-wrap gap-3" data-testid="app-links">
                {app.links.map((l) => (
                  <SafeLink key={l.title} href={l.url}>
                    {l.title}
                    {!safeHttpUrl(l.url) && <span className="text-slate-500"> (not a web link: {l.url})</span>}
                  </SafeLink>
                ))}
              </dd>
            </>
          )}
          {app.project && (
            <>
              <dt className="text-slate-500">Project</dt>
              <dd>{app.project}</dd>
            </>
          )}
          {app.owner && (
            <>
              <dt className="text-slate-500">Owned by</dt>
              <dd>
                {app.owner.kind === 'ApplicationSet' ? (
                  <Link
                    to={`/appsets/${appSetPath({ cluster: app.cluster, namespace: app.namespace, name: app.owner.name })}`}
                    className="text-teal-700 underline"
                    data-testid="owner-appset"
                  >
                    ApplicationSet {app.owner.name}
                  </Link>
                ) : (
                  <>
                    {app.owner.kind} {app.owner.name}
                  </>
                )}
              </dd>
            </>
          )}
        </dl>
        {app.warnings.length > 0 && (
          <ul className="mt-3 list-disc pl-5 text-sm text-amber-800">
            {app.warnings.map((w) => (
              <li key={w}>{w}</li>
            ))}
          </ul>
        )}
      </header>
      <div className="mt-4 grid grid-cols-1 gap-4 lg:grid-cols-2">
        <section className="min-w-0 rounded-lg border border-slate-200 bg-white p-4">
          <h2 className="mb-2 font-semibold">Conditions</h2>
          {app.conditions.length === 0 ? (
            <p className="text-sm text-slate-500">None reported.</p>
          ) : (
            <div className="relative overflow-x-auto">
              <table className="w-full min-w-[28rem] text-sm">
                <thead>
                  <tr className="text-left text-slate-600 [&>th]:pr-3 [&>th]:pb-1 [&>th]:font-medium">
                    <th scope="col">Type</th>
                    <th scope="col">Status</th>
                    <th scope="col">Reason</th>
                    <th scope="col">Message</th>
                  </tr>
                </thead>
                <tbody>
                  {app.conditions.map((c) => (
                    <tr key={c.type} className="border-t border-slate-100 align-top">
                      <td className="pr-2">{c.type}</td>
                      <td className="pr-2">{c.status}</td>
                      <td className="pr-2 wrap-anywhere">{c.reason}</td>
                      <td className="break-all">{c.message}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </section>
        <section className="min-w-0 rounded-lg border border-slate-200 bg-white p-4">
          <h2 className="mb-2 font-semibold">Managed objects ({app.inventory.length})</h2>
          <ul
            className="max-h-72 overflow-auto font-mono text-xs"
            data-testid="inventory"
            tabIndex={0}
            aria-label="Managed objects"
          >
            {app.inventory.map((r) => (
              <li key={`${r.group}/${r.kind}/${r.namespace ?? ''}/${r.name}`} className="break-all">
                {r.kind} {r.namespace ? `${r.namespace}/` : ''}
                {r.name}
              </li>
            ))}
          </ul>
        </section>
      </div>
      <ImageAutomation data={q.data.imageAutomation} />
      <ResourceTree appId={app.id} />
      <AppDiff appId={app.id} controller={app.controller} />
      <EnvCompare appId={app.id} />
      <AppReleases appId={app.id} name={app.name} cluster={app.cluster} env={app.env} />
      <AppEvidence appId={app.id} cluster={app.cluster} env={app.env} />
    </div>
  );
}
