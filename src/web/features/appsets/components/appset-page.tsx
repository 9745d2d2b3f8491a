// One ApplicationSet: what its generators produce now (their parameter sets), the Applications it owns (which of
// them no generator produces any more), the shrink its controller would carry out and whether the console holds
// it, its RollingSync steps when configured, and "Preview the shrink": a prune preview of Applications that a
// reviewer approves like any prune.
import { Link, useNavigate, useParams } from 'react-router';
import { appPath } from '../../../../api/schemas.ts';
import type { AppSetView } from '../../../../api/appsets.ts';
import { HealthBadge, SyncBadge, Tag } from '../../../components/badges.tsx';
import { ApiError } from '../../../lib/api-client.ts';
import { useDocumentTitle } from '../../../lib/document-title.ts';
import { usePermission } from '../../../lib/use-permission.ts';
import { useAppSet, usePreviewShrink } from '../api/appsets-queries.ts';
import type { HealthStatus, SyncStatus } from '../../../../domain/app.ts';

export function AppSetPage() {
  const p = useParams();
  const s = { cluster: p.cluster ?? '', namespace: p.namespace ?? '', name: p.name ?? '' };
  useDocumentTitle(`ApplicationSet ${s.name}`);
  const q = useAppSet(s);
  if (q.isPending) return <p className="text-slate-500">Loading…</p>;
  if (q.isError)
    return (
      <p role="alert" className="rounded border border-red-200 bg-red-50 p-4 text-red-800">
        {q.error instanceof ApiError && q.error.status === 404 ? 'No such ApplicationSet.' : q.error.message}
      </p>
    );
  const a = q.data.appset;
  return (
    <div className="space-y-4">
      <div className="rounded-lg border border-slate-200 bg-white p-4 shadow-sm">
        <div className="flex flex-wrap items-center gap-2">
          <h1 className="text-xl font-semibold wrap-anywhere">ApplicationSet {a.name}</h1>
          <Tag tone="violet">Argo CD</Tag>
          <span className="text-sm text-slate-600">
            {a.cluster} · {a.namespace}
          </span>
        </div>
        <dl className="mt-2 grid grid-cols-[auto_1fr] gap-x-3 gap-y-1 text-sm">
          <dt className="text-slate-500">Deletes Applications</dt>
          <dd>
            {a.applicationsSync === 'sync'
              ? 'yes (applicationsSync: sync)'
              : `no (applicationsSync: ${a.applicationsSync})`}
          </dd>
          <dt className="text-slate-500">Their resources</dt>
          <dd>
            {a.preserveResourcesOnDeletion
              ? 'kept when an Application is deleted (preserveResourcesOnDeletion)'
              : 'deleted with their Application (its resources finalizer)'}
          </dd>
        </dl>
        <Shrink a={a} />
      </div>
      <Generators a={a} />
      <Owned a={a} />
      {a.rollingSync && <RollingSync r={a.rollingSync} />}
      {a.conditions.length > 0 && (
        <section className="rounded-lg border border-slate-200 bg-white p-4 shadow-sm">
          <h2 className="font-semibold">Controller conditions</h2>
          <ul className="mt-2 space-y-1 text-sm" data-testid="appset-conditions">
            {a.conditions.map((c) => (
              <li key={c.type} className="wrap-anywhere">
                <span className="font-medium">{c.type}</span> {c.status}
                {c.reason ? ` (${c.reason})` : ''}
                {c.message ? `: ${c.message}` : ''}
              </li>
            ))}
          </ul>
        </section>
      )}
    </div>
  );
}

function Shrink({ a }: { a: AppSetView }) {
  const perm = usePermission('prune.request', { cluster: a.cluster, env: '*' });
  const m = usePreviewShrink(a);
  const navigate = useNavigate();
  const { shrink } = a;
  return (
    <div className="mt-3 rounded border border-slate-200 p-3" data-testid="appset-shrink" data-state={shrink.state}>
      <p
        className={`text-base ${shrink.state === 'shrink' ? 'text-amber-900' : shrink.state === 'unknown' ? 'text-red-800' : 'text-emerald-800'}`}
        role="status"
      >
        {shrink.state === 'shrink'
          ? `The generators no longer produce ${shrink.removed.length} of ${a.owned.length} Applications: its controller would delete ${shrink.removed.map((r) => r.name).join(', ')}.`
          : shrink.state === 'unknown'
            ? 'What the generators produce is unknown: nothing is planned.'
            : 'Nothing to delete: the generators produce every Application it owns.'}
      </p>
      {shrink.reasons.length > 0 && (
        <ul className="mt-1 list-disc pl-5 text-sm text-slate-700">
          {shrink.reasons.map((r) => (
            <li key={r} className="wrap-anywhere">
              {r}
            </li>
          ))}
        </ul>
      )}
      {shrink.removed.length > 0 && (
        <ul className="mt-1 text-sm" data-testid="appset-removed">
          {shrink.removed.map((r) => (
            <li key={r.name}>
              {r.name}:{' '}
              {r.cascades
                ? `with the ${r.resources} live object${r.resources === 1 ? '' : 's'} it manages`
                : `its ${r.resources} object${r.resources === 1 ? '' : 's'} stay (no resources finalizer)`}
            </li>
          ))}
        </ul>
      )}
      {a.heldByConsole && (
        <p className="mt-1 text-sm text-amber-900" data-testid="appset-held">
          The console’s admission policy holds the controller’s deletion until a reviewer approves a preview of it.
        </p>
      )}
      {shrink.state === 'shrink' && (
        <button
          type="button"
          data-testid="preview-shrink"
          disabled={!perm.allowed || m.isPending}
          title={
            perm.allowed
              ? 'See what the shrink deletes (nothing is deleted now)'
              : `${perm.reason ?? ''} (an ApplicationSet reaches every environment of its cluster)`
          }
          onClick={() => m.mutate(undefined, { onSuccess: (r) => void navigate(`/prune-previews/${r.preview.id}`) })}
          className="mt-2 rounded border border-amber-700 px-2 py-1 text-sm font-medium text-amber-800 disabled:cursor-not-allowed disabled:border-slate-300 disabled:text-slate-400"
        >
          {m.isPending ? 'Planning…' : 'Preview the shrink'}
        </button>
      )}
    </div>
  );
}

function Generators({ a }: { a: AppSetView }) {
  return (
    <section className="rounded-lg border border-slate-200 bg-white p-4 shadow-sm" data-testid="appset-generators">
      <h2 className="font-semibold">Generators: their parameters now</h2>
      {a.unknown && (
        <p className="mt-1 text-sm text-red-800" role="status">
          Unknown: {a.unknown}
        </p>
      )}
      {a.generatorResults.map((g, i) => {
        const keys = [...new Set((g.params ?? []).flatMap((p) => Object.keys(p)))];
        return (
          <div key={i} className="mt-2">
            <p className="text-sm">
              <span className="font-medium">{g.kind}</span>{' '}
              <span className="text-slate-600 wrap-anywhere">{g.detail}</span>
            </p>
            {g.params === null ? (
              <p className="text-sm text-red-800">unknown: {g.unknown}</p>
            ) : g.params.length === 0 ? (
              <p className="text-sm text-slate-600">no parameter sets</p>
            ) : (
              <div className="overflow-x-auto">
                <table className="mt-1 text-sm">
                  <thead>
                    <tr>
                      {keys.map((k) => (
                        <th key={k} scope="col" className="pr-4 text-left font-medium text-slate-600">
                          {k}
                        </th>
                      ))}
                    </tr>
                  </thead>
                  <tbody>
                    {g.params.map((p, j) => (
                      <tr key={j} data-testid="appset-param-row">
                        {keys.map((k) => (
                          <td key={k} className="pr-4 font-mono text-xs">
                            {p[k] ?? ''}
                          </td>
                        ))}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </div>
        );
      })}
    </section>
  );
}

function Owned({ a }: { a: AppSetView }) {
  return (
    <section className="rounded-lg border border-slate-200 bg-white p-4 shadow-sm">
      <h2 className="font-semibold">Applications it owns</h2>
      <table className="mt-2 w-full text-sm" data-testid="appset-apps">
        <thead>
          <tr className="text-left text-slate-600">
            <th scope="col">Application</th>
            <th scope="col">Generated now</th>
            <th scope="col">Sync</th>
            <th scope="col">Health</th>
            <th scope="col">Objects</th>
          </tr>
        </thead>
        <tbody>
          {a.owned.map((o) => (
            <tr key={o.name} data-testid="appset-app" data-generated={String(o.generated)}>
              <td>
                <Link to={`/apps/${appPath(o.appId)}`} className="text-teal-800 underline">
                  {o.name}
                </Link>
              </td>
              <td>{o.generated === null ? 'unknown' : o.generated ? 'yes' : 'no: its controller would delete it'}</td>
              <td>
                <SyncBadge status={o.sync as SyncStatus} />
              </td>
              <td>
                <HealthBadge status={o.health as HealthStatus} />
              </td>
              <td>{o.resources}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function RollingSync({ r }: { r: NonNullable<AppSetView['rollingSync']> }) {
  return (
    <section className="rounded-lg border border-slate-200 bg-white p-4 shadow-sm" data-testid="appset-rolling-sync">
      <h2 className="font-semibold">Progressive sync (RollingSync)</h2>
      <ol className="mt-2 list-decimal pl-5 text-sm">
        {r.steps.map((s, i) => (
          <li key={i} className="wrap-anywhere">
            {s.matchExpressions.map((m) => JSON.stringify(m)).join(' and ') || 'every remaining Application'}
            {s.maxUpdate !== null ? ` · maxUpdate ${String(s.maxUpdate)}` : ''}
          </li>
        ))}
      </ol>
      {r.applications.length > 0 && (
        <ul className="mt-2 text-sm">
          {r.applications.map((x) => (
            <li key={x.application}>
              {x.application}: {x.status}
              {x.step ? ` (step ${x.step})` : ''}
              {x.message ? ` · ${x.message}` : ''}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
