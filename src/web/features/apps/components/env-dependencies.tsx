// An environment's Flux dependency graph (issue 26): what is applied first on the left, each app with its Ready
// and, when its controller holds it, on what it waits; cycles (Flux never reconciles their members) and
// dependencies the console does not know are said, never drawn as fine.
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { appPath, type DependencyGraphResponse } from '../../../../api/schemas.ts';
import { Tag } from '../../../components/badges.tsx';
import { dependencyGraphQueryOptions } from '../api/apps-queries.ts';

type Node = DependencyGraphResponse['nodes'][number];
const READY_TEXT = { True: 'Ready', False: 'not Ready', Unknown: 'Ready unknown' } as const;

function NodeCard({ n, g }: { n: Node; g: DependencyGraphResponse }) {
  const name = (id: string) => g.nodes.find((x) => x.id === id)?.name ?? id;
  const on = g.edges.filter((e) => e.from === n.id).map((e) => e.to);
  const unknown = g.unknown.filter((u) => u.from === n.id);
  return (
    <li
      className={`rounded border bg-white p-2 text-sm shadow-sm wrap-anywhere ${n.ready === 'True' ? 'border-slate-200' : 'border-amber-400'}`}
      data-testid="dep-node"
      data-app-id={n.id}
    >
      <div className="flex flex-wrap items-center gap-2">
        <Link to={`/apps/${appPath(n.id)}`} className="font-medium text-teal-700 underline">
          {n.name}
        </Link>
        <Tag tone={n.ready === 'True' ? 'teal' : n.ready === 'False' ? 'amber' : 'slate'}>{READY_TEXT[n.ready]}</Tag>
        <span className="text-xs text-slate-500">
          {n.cluster}
          {n.env !== g.env ? ` · ${n.env}` : ''}
        </span>
      </div>
      {n.ready !== 'True' && (n.reason || n.message) && (
        <p className="mt-1 line-clamp-3 text-xs break-all text-slate-700" title={n.message ?? ''}>
          {[n.reason, n.message].filter(Boolean).join(': ')}
        </p>
      )}
      {n.waitingOn && (
        <p className="mt-1 text-xs text-amber-900" data-testid="dep-waiting">
          {n.waitingOn}
        </p>
      )}
      {(on.length > 0 || unknown.length > 0) && (
        <p className="mt-1 text-xs text-slate-600">
          depends on {[...on.map(name), ...unknown.map((u) => `${u.namespace}/${u.name} (unknown)`)].join(', ')}
        </p>
      )}
    </li>
  );
}

export function EnvDependencies({ env }: { env: string }) {
  const q = useQuery(dependencyGraphQueryOptions(env));
  const title = (
    <h2 className="mb-2 font-semibold" id="env-deps-title">
      Dependencies ({env})
    </h2>
  );
  if (q.isPending)
    return (
      <section className="rounded-lg border border-slate-200 bg-white p-4" aria-labelledby="env-deps-title">
        {title}
        <p className="text-sm text-slate-500">Loading…</p>
      </section>
    );
  if (q.isError)
    return (
      <section className="rounded-lg border border-slate-200 bg-white p-4" aria-labelledby="env-deps-title">
        {title}
        <p role="alert" className="text-sm text-red-800">
          Cannot load the dependencies (unknown, not "none"): {q.error.message}
        </p>
      </section>
    );
  const g = q.data;
  const columns = new Map<number, Node[]>();
  for (const n of g.nodes) columns.set(n.depth, [...(columns.get(n.depth) ?? []), n]);
  const depths = [...columns.keys()].sort((a, b) => a - b);
  return (
    <section
      className="rounded-lg border border-slate-200 bg-white p-4"
      aria-labelledby="env-deps-title"
      data-testid="env-dependencies"
    >
      {title}
      {g.nodes.length === 0 ? (
        <p className="text-sm text-slate-600">No app of this environment declares a dependency (Flux dependsOn).</p>
      ) : (
        <>
          <p className="mb-2 text-xs text-slate-600">
            Applied first on the left: an app is reconciled only once what it depends on is Ready.
          </p>
          <div className="flex flex-wrap items-start gap-3">
            {depths.map((d, i) => (
              <div key={d} className="flex min-w-0 items-start gap-3">
                {i > 0 && (
                  <span aria-hidden="true" className="self-center text-slate-400">
                    →
                  </span>
                )}
                <ul
                  className="flex min-w-0 flex-col gap-2 sm:min-w-56"
                  aria-label={d === 0 ? 'applied first' : `after ${d}`}
                >
                  {(columns.get(d) ?? []).map((n) => (
                    <NodeCard key={n.id} n={n} g={g} />
                  ))}
                </ul>
              </div>
            ))}
          </div>
        </>
      )}
      {g.cycles.length > 0 && (
        <p role="alert" className="mt-2 text-sm text-red-800" data-testid="dep-cycles">
          Dependency cycle{g.cycles.length > 1 ? 's' : ''}: Flux never reconciles{' '}
          {g.cycles.map((c) => c.map((id) => g.nodes.find((n) => n.id === id)?.name ?? id).join(' → ')).join('; ')}.
        </p>
      )}
    </section>
  );
}
