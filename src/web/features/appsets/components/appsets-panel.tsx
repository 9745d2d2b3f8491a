// The overview's ApplicationSets: each with the Applications it generates (their cards stay in their environment
// columns) and whether the console's admission policy holds a deletion of its controller now.
import { Link } from 'react-router';
import { appPath } from '../../../../api/schemas.ts';
import { appSetPath } from '../../../../api/appsets.ts';
import { Tag } from '../../../components/badges.tsx';
import { useAppSets } from '../api/appsets-queries.ts';

export function AppSetsPanel() {
  const q = useAppSets();
  if (q.isError) return <p className="mt-4 text-sm text-red-700">Cannot load ApplicationSets: {q.error.message}</p>;
  if (!q.data || (q.data.appsets.length === 0 && q.data.unknown.length === 0)) return null;
  return (
    <section className="mt-6 rounded-lg bg-slate-100 p-3" data-testid="appsets" aria-labelledby="appsets-h">
      <h2 id="appsets-h" className="mb-2 text-sm font-semibold tracking-wide text-slate-700 uppercase">
        ApplicationSets
      </h2>
      {q.data.unknown.map((u) => (
        <p key={u} className="mb-2 text-sm text-amber-900" role="status">
          ApplicationSets unknown on {u}
        </p>
      ))}
      <div className="grid grid-cols-[repeat(auto-fit,minmax(16rem,1fr))] gap-2">
        {q.data.appsets.map((s) => (
          <div
            key={s.id}
            className="rounded-lg border border-slate-200 bg-white p-3 shadow-sm"
            data-testid="appset-group"
            data-appset={s.name}
          >
            <div className="flex items-start justify-between gap-2">
              <Link to={`/appsets/${appSetPath(s)}`} className="font-medium text-teal-800 underline wrap-anywhere">
                {s.name}
              </Link>
              <Tag tone="violet">ApplicationSet</Tag>
            </div>
            <div className="text-xs text-slate-500">
              {s.cluster} · {s.namespace} · {s.generators.join(', ') || 'no generator'}
            </div>
            {s.heldByConsole && (
              <p className="mt-1 text-xs text-amber-900" data-testid="appset-held">
                A deletion of its controller is held: waiting for an approved shrink preview
              </p>
            )}
            {!s.heldByConsole && s.error && (
              <p className="mt-1 line-clamp-2 text-xs text-red-800" title={s.error}>
                {s.error}
              </p>
            )}
            <ul className="mt-2 flex flex-wrap gap-1.5 text-xs">
              {s.applications.map((a) => (
                <li key={a.appId}>
                  <Link
                    to={`/apps/${appPath(a.appId)}`}
                    className="rounded border border-slate-300 px-1.5 py-0.5 hover:border-teal-500"
                  >
                    {a.name}
                  </Link>
                </li>
              ))}
              {s.applications.length === 0 && <li className="text-slate-500">no Applications</li>}
            </ul>
          </div>
        ))}
      </div>
    </section>
  );
}
