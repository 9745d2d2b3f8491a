// Flux dependencies on the app page (issue 26): "why isn't my app reconciling yet?" — the line its controller
// holds it on, a link to the dependency that is not Ready, and what it depends on / what depends on it.
import { Link } from 'react-router';
import { appPath, type AppDto, type AppResponse } from '../../../../api/schemas.ts';
import { Tag } from '../../../components/badges.tsx';

const READY_TONE = { True: 'teal', False: 'amber', Unknown: 'slate' } as const;
const READY_TEXT = { True: 'Ready', False: 'not Ready', Unknown: 'Ready unknown' } as const;

export function WaitingOn({ app, dependencies }: { app: AppDto; dependencies: AppResponse['dependencies'] }) {
  if (!app.waitingOn) return null;
  const blocking = (dependencies ?? []).filter((d) => d.ready !== 'True');
  return (
    <p
      className="mt-2 rounded border border-amber-300 bg-amber-50 px-2 py-1 text-sm text-amber-900"
      role="status"
      data-testid="waiting-on"
    >
      <span className="font-medium">{app.waitingOn}</span>
      {blocking.map((d) =>
        d.id ? (
          <Link
            key={d.id}
            to={`/apps/${appPath(d.id)}`}
            className="ml-2 text-teal-800 underline"
            data-testid="waiting-on-link"
          >
            open {d.name}
          </Link>
        ) : null,
      )}
    </p>
  );
}

/** The definition-list rows: what the app depends on (with each one's Ready) and what depends on it. */
export function DependencyRows({ data }: { data: AppResponse }) {
  const deps = data.dependencies ?? [];
  const dependents = data.dependents ?? [];
  if (!deps.length && !dependents.length) return null;
  return (
    <>
      {deps.length > 0 && (
        <>
          <dt className="text-slate-500">Depends on</dt>
          <dd data-testid="depends-on">
            <ul className="flex flex-col gap-1">
              {deps.map((d) => (
                <li key={`${d.namespace}/${d.name}`} className="flex flex-wrap items-center gap-2">
                  {d.id ? (
                    <Link to={`/apps/${appPath(d.id)}`} className="text-teal-700 underline">
                      {d.name}
                    </Link>
                  ) : (
                    <span className="font-mono">
                      {d.namespace}/{d.name}
                    </span>
                  )}
                  <Tag tone={READY_TONE[d.ready]}>{READY_TEXT[d.ready]}</Tag>
                  {d.ready !== 'True' && (d.reason || d.message) && (
                    <span className="text-xs break-all text-slate-600">
                      {[d.reason, d.message].filter(Boolean).join(': ')}
                    </span>
                  )}
                </li>
              ))}
            </ul>
          </dd>
        </>
      )}
      {dependents.length > 0 && (
        <>
          <dt className="text-slate-500">Needed by</dt>
          <dd className="flex flex-wrap gap-3" data-testid="needed-by">
            {dependents.map((d) => (
              <span key={d.id}>
                <Link to={`/apps/${appPath(d.id)}`} className="text-teal-700 underline">
                  {d.name}
                </Link>
                {d.waitingOn && <span className="ml-1 text-xs text-amber-800">(waiting)</span>}
              </span>
            ))}
          </dd>
        </>
      )}
    </>
  );
}
