// Every freeze this user can see: the active ones first, then the recent ones; and the form that freezes
// every app of an environment on a cluster (the environments come from the route, which knows the apps).
import { useId, useMemo, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import type { FreezeDto } from '../../../../api/schemas.ts';
import { Time } from '../../../components/time.tsx';
import { useDocumentTitle } from '../../../lib/document-title.ts';
import { useNow } from '../../../lib/use-now.ts';
import { usePermission } from '../../../lib/use-permission.ts';
import { useFreezes } from '../api/freeze-queries.ts';
import { timeLeft } from '../lib/freeze-text.ts';
import { FreezeForm } from './freeze-form.tsx';
import { FreezeStatus, scopeText } from './freeze-page.tsx';
import { BreakGlass } from './break-glass.tsx';
import { FreezeWindows } from './freeze-windows.tsx';

/** An environment of a cluster and how many GitOps apps it has. */
export interface FreezableEnvironment {
  cluster: string;
  env: string;
  apps: number;
  /** its apps' ids (a planned window may cover one of them only) */
  appIds?: string[] | undefined;
}

export function FreezesPage({ environments }: { environments: FreezableEnvironment[] }) {
  useDocumentTitle('Freezes');
  const q = useFreezes(false);
  const now = useNow(1_000);
  const list = q.data?.freezes ?? [];
  const active = list.filter((f) => f.active || f.status === 'ending');
  const recent = list.filter((f) => !(f.active || f.status === 'ending'));
  return (
    <div className="grid gap-4">
      <section className="rounded-lg border border-slate-200 bg-white p-4 shadow-sm" aria-labelledby="freezes-h">
        <h1 id="freezes-h" className="text-xl font-semibold">
          Incident freezes
        </h1>
        {q.isPending && <p className="text-slate-500">Loading…</p>}
        {q.isError && (
          <p role="alert" className="text-red-800">
            Cannot load the freezes: {q.error.message}
          </p>
        )}
        <h2 className="mt-3 font-semibold">Active ({active.length})</h2>
        {q.data && active.length === 0 && <p className="text-sm text-slate-600">Nothing is frozen.</p>}
        <FreezeList
          freezes={active}
          extra={(f) => (f.active ? `${timeLeft(f.expiresAt, now)} left` : 'ending…')}
          testId="freezes-active"
        />
        <h2 className="mt-4 font-semibold">Recent</h2>
        {q.data && recent.length === 0 && <p className="text-sm text-slate-600">No ended freeze.</p>}
        <FreezeList freezes={recent.slice(0, 50)} testId="freezes-recent" />
      </section>
      <FreezeEnvironment environments={environments} />
      <FreezeWindows environments={environments} />
      <BreakGlass />
    </div>
  );
}

function FreezeList({
  freezes,
  extra,
  testId,
}: {
  freezes: FreezeDto[];
  extra?: (f: FreezeDto) => string;
  testId: string;
}) {
  if (!freezes.length) return null;
  return (
    <ul className="mt-1 divide-y divide-slate-100 text-sm" data-testid={testId}>
      {freezes.map((f) => (
        <li key={f.id} className="flex flex-wrap items-center gap-2 py-1" data-testid="freeze-item" data-id={f.id}>
          <FreezeStatus status={f.status} />
          <Link to={`/freezes/${encodeURIComponent(f.id)}`} className="font-medium text-teal-700 underline">
            {scopeText(f)}
          </Link>
          {/* a long reason is cut at two lines: in full on hover and on the freeze's page */}
          <span className="line-clamp-2 min-w-0 text-slate-600 wrap-anywhere" title={f.reason}>
            {f.cluster}
            {f.env ? `/${f.env}` : ''} · by {f.createdBy}: {f.reason}
          </span>
          <span className="ml-auto text-slate-500">
            <Time iso={f.startedAt} />
            {extra ? ` · ${extra(f)}` : ''}
          </span>
        </li>
      ))}
    </ul>
  );
}

/** Freeze every app of an environment on a cluster: pick both from the apps the console knows. */
function FreezeEnvironment({ environments }: { environments: FreezableEnvironment[] }) {
  const navigate = useNavigate();
  const pairs = useMemo(() => {
    const m = new Map<string, Set<string>>();
    for (const x of environments) m.set(x.cluster, (m.get(x.cluster) ?? new Set()).add(x.env));
    return m;
  }, [environments]);
  const clusters = [...pairs.keys()].sort();
  const [cluster, setCluster] = useState('');
  const [env, setEnv] = useState('');
  const c = cluster || clusters[0] || '';
  const envs = [...(pairs.get(c) ?? [])].sort();
  const e = envs.includes(env) ? env : (envs[0] ?? '');
  const perm = usePermission('freeze.toggle', { cluster: c, env: e });
  const ids = { cluster: useId(), env: useId() };
  const count = environments.find((x) => x.cluster === c && x.env === e)?.apps ?? 0;
  return (
    <section className="rounded-lg border border-slate-200 bg-white p-4 shadow-sm" aria-labelledby="freeze-env-h">
      <h2 id="freeze-env-h" className="font-semibold">
        Freeze an environment
      </h2>
      <p className="text-sm text-slate-600">
        Pauses every GitOps app of the environment on that cluster, with one reason and one expiry.
      </p>
      <div className="mt-2 flex flex-wrap gap-3 text-sm">
        <div>
          <label htmlFor={ids.cluster} className="block font-medium">
            Cluster
          </label>
          <select
            id={ids.cluster}
            value={c}
            onChange={(ev) => setCluster(ev.target.value)}
            className="mt-1 rounded border border-slate-300 p-1"
            data-testid="freeze-env-cluster"
          >
            {clusters.map((x) => (
              <option key={x}>{x}</option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor={ids.env} className="block font-medium">
            Environment
          </label>
          <select
            id={ids.env}
            value={e}
            onChange={(ev) => setEnv(ev.target.value)}
            className="mt-1 rounded border border-slate-300 p-1"
            data-testid="freeze-env-env"
          >
            {envs.map((x) => (
              <option key={x}>{x}</option>
            ))}
          </select>
        </div>
        <p className="self-end text-slate-600">
          {count} app{count === 1 ? '' : 's'}
        </p>
      </div>
      {c && e && (
        <div className="mt-3">
          <FreezeForm
            key={`${c}/${e}`}
            target={{ cluster: c, env: e }}
            disabledReason={perm.allowed ? undefined : perm.reason}
            onDone={(f) => void navigate(`/freezes/${encodeURIComponent(f.id)}`)}
          />
        </div>
      )}
    </section>
  );
}
