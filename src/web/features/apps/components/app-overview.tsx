import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { firstOf } from '../../../../domain/overview.ts';
import { useDocumentTitle } from '../../../lib/document-title.ts';
import {
  appKeys,
  appsHeadQueryOptions,
  appsQueryOptions,
  clustersQueryOptions,
  OVERVIEW_FIRST,
} from '../api/apps-queries.ts';
import { AppCard } from './app-card.tsx';
import { FILTER_KEYS, filterGroups, groupByEnvAndCluster, readFilters, type AppFilters } from './app-filters.ts';
import { StaleBanner } from './stale-banner.tsx';
import { staleness } from '../../../../domain/staleness.ts';
import { windowsByApp, windowsQueryOptions } from '../../../lib/freeze-windows-query.ts';

const ENV_ORDER = ['dev', 'staging', 'prod'];
/** cards painted per environment × cluster group at first, and per "Show more" */
const FIRST = OVERVIEW_FIRST;
const MORE = 240;

export function AppOverview() {
  const [sp, setSp] = useSearchParams();
  const search = sp.toString();
  // eslint-disable-next-line react-hooks/exhaustive-deps -- the filters are the search params' value
  const urlFilters = useMemo(() => readFilters(sp), [search]);
  const q = useTypedSearch(urlFilters.q);
  const filters = useMemo(() => ({ ...urlFilters, q: q.value }), [urlFilters, q.value]);
  useDocumentTitle('All apps');
  // The first paint asks for each group's first cards only (and the groups' sizes); the whole list is read
  // right after it, and then answers every search, filter and "Show more" (issue 27: 10,000 apps). A filtered
  // URL, or a list already cached, reads the whole list at once.
  const qc = useQueryClient();
  const [headFirst] = useState(() => !FILTER_KEYS.some((k) => filters[k]) && !qc.getQueryData(appKeys.list()));
  const head = useQuery({ ...appsHeadQueryOptions(FIRST), enabled: headFirst });
  const full = useQuery({ ...appsQueryOptions(), enabled: !headFirst || head.isSuccess || head.isError });
  const data = full.data ?? head.data;
  const partial = !full.data && !!data?.partial;
  const clusters = useQuery(clustersQueryOptions());
  // planned freeze windows: each card says the one in force or the next (issue 43)
  const windows = useQuery(windowsQueryOptions());
  const windowOf = useMemo(() => windowsByApp(windows.data?.windows ?? []), [windows.data]);
  const set = (k: keyof AppFilters, v: string) => {
    const next = new URLSearchParams(sp);
    if (v) next.set(k, v);
    else next.delete(k);
    setSp(next, { replace: true });
  };
  const grouped = useMemo(() => groupByEnvAndCluster(data?.apps ?? [], data?.envs ?? ENV_ORDER), [data]);
  const groups = useMemo(() => filterGroups(grouped, filters), [grouped, filters]);
  const shownCount = useMemo(
    () => groups.reduce((n, g) => n + g.clusters.reduce((m, c) => m + c.apps.length, 0), 0),
    [groups],
  );
  /** every group's size: from the first answer until the whole list is in */
  const sizes = useMemo(
    () => new Map((partial ? (data?.groups ?? []) : []).map((g) => [`${g.env}/${g.cluster}`, g.count])),
    [partial, data],
  );
  const down = new Set((clusters.data?.clusters ?? []).filter((c) => staleness(c).stale).map((c) => c.name));
  const allClusters = useMemo(
    () =>
      [
        ...new Set(partial ? (data?.groups ?? []).map((g) => g.cluster) : (data?.apps ?? []).map((a) => a.cluster)),
      ].sort(),
    [partial, data],
  );
  const allEnvs = data?.envs ?? ENV_ORDER;
  const active = FILTER_KEYS.some((k) => filters[k]);
  // thousands of apps: each environment × cluster group paints its first cards, more on request (the
  // search and filters always cover every app; bench/scale.ts measures the first paint at 10,000 apps)
  const [limits, setLimits] = useState<Record<string, number>>({});
  const shown = (group: string) => limits[group] ?? FIRST;
  const showMore = (group: string) => setLimits((l) => ({ ...l, [group]: (l[group] ?? FIRST) + MORE }));
  const sizeOf = (group: string, loaded: number) => sizes.get(group) ?? loaded;
  const error = full.error ?? (full.data ? null : head.error);

  return (
    <div>
      <StaleBanner clusters={clusters.data?.clusters ?? []} />
      <h1 className="mb-2 text-xl font-semibold">Apps</h1>
      <div className="mb-4 flex flex-wrap items-center gap-2">
        <input
          aria-label="Search apps"
          placeholder="Search name, namespace, repo, revision…"
          className="w-72 rounded border border-slate-300 px-2 py-1 text-sm"
          value={filters.q}
          onChange={(e) => {
            q.typed(e.target.value);
            set('q', e.target.value);
          }}
        />
        <Select label="Environment" value={filters.env} options={allEnvs} onChange={(v) => set('env', v)} />
        <Select label="Cluster" value={filters.cluster} options={allClusters} onChange={(v) => set('cluster', v)} />
        <Select
          label="Controller"
          value={filters.controller}
          options={['flux', 'argocd']}
          onChange={(v) => set('controller', v)}
        />
        <Select
          label="Health"
          value={filters.health}
          options={['Healthy', 'Progressing', 'Degraded', 'Suspended', 'Missing', 'Unknown']}
          onChange={(v) => set('health', v)}
        />
        <Select
          label="Sync"
          value={filters.sync}
          options={['Synced', 'OutOfSync', 'Unknown']}
          onChange={(v) => set('sync', v)}
        />
        <Select label="Drifted" value={filters.drifted} options={['yes', 'no']} onChange={(v) => set('drifted', v)} />
        {active && (
          <button
            className="text-sm text-teal-700 underline"
            onClick={() => setSp(new URLSearchParams(), { replace: true })}
          >
            clear filters
          </button>
        )}
        <span
          className="ml-auto text-sm text-slate-600"
          data-testid="app-count"
          data-partial={String(!full.data)}
          role="status"
        >
          {partial
            ? active
              ? `searching all ${data?.total ?? 0} apps…`
              : `${data?.total ?? 0} of ${data?.total ?? 0} apps`
            : `${shownCount} of ${data?.total ?? 0} apps`}
        </span>
      </div>
      {!data && !error && <p className="text-slate-500">Loading apps…</p>}
      {error && <p className="text-red-700">Cannot load apps: {error.message}</p>}
      {data && !partial && groups.length === 0 && (
        <p className="text-slate-700" data-testid="no-apps" role="status">
          {emptyReason(
            filters,
            allClusters,
            allEnvs,
            clusters.data?.clusters.map((c) => c.name),
          )}
        </p>
      )}
      {/* as many environment columns as fit (no sideways scroll on narrow windows) */}
      <div className="grid grid-cols-[repeat(auto-fit,minmax(16rem,1fr))] gap-4">
        {groups.map((g) => (
          <section key={g.env} data-testid="env-column" data-env={g.env} className="rounded-lg bg-slate-100 p-3">
            <h2 className="mb-2 text-sm font-semibold tracking-wide text-slate-700 uppercase">
              <Link
                to={`/envs/${encodeURIComponent(g.env)}`}
                className="underline decoration-dotted wrap-anywhere hover:text-teal-700"
              >
                {g.env}
                <span className="sr-only"> releases</span>
              </Link>
            </h2>
            {g.clusters.map((c) => (
              <div key={c.cluster} className="mb-3">
                <h3 className="mb-1 flex flex-wrap items-center gap-x-2 text-xs font-medium text-slate-600 wrap-anywhere">
                  cluster {c.cluster}
                  {down.has(c.cluster) && <span className="text-amber-700">(stale)</span>}
                </h3>
                <div className="grid grid-cols-[minmax(0,1fr)] gap-2">
                  {firstOf(c.apps, shown(`${g.env}/${c.cluster}`)).map((a) => (
                    <AppCard key={a.id} app={a} stale={down.has(a.cluster)} window={windowOf.get(a.id)} />
                  ))}
                </div>
                <ShowMore
                  env={g.env}
                  cluster={c.cluster}
                  size={active ? c.apps.length : sizeOf(`${g.env}/${c.cluster}`, c.apps.length)}
                  shown={shown(`${g.env}/${c.cluster}`)}
                  loading={
                    partial &&
                    shown(`${g.env}/${c.cluster}`) > c.apps.length &&
                    sizeOf(`${g.env}/${c.cluster}`, c.apps.length) > c.apps.length
                  }
                  onClick={() => showMore(`${g.env}/${c.cluster}`)}
                />
              </div>
            ))}
          </section>
        ))}
      </div>
    </div>
  );
}

/**
 * The search box's text, answered at once: a keystroke filters in the same render, and the URL (`?q=`) follows
 * as a navigation, which React Router runs as a transition, later. The URL's own changes (back, "clear filters",
 * a link) win; the echoes of what was typed, arriving behind newer keystrokes, do not move the text back.
 */
function useTypedSearch(fromUrl: string): { value: string; typed: (v: string) => void } {
  const [value, setValue] = useState(fromUrl);
  const [seen, setSeen] = useState(fromUrl);
  const [sent, setSent] = useState<string[]>([]);
  if (seen !== fromUrl) {
    // render-time sync with the URL (React's "storing information from previous renders")
    setSeen(fromUrl);
    const i = sent.indexOf(fromUrl);
    if (i >= 0) setSent(sent.slice(i + 1));
    else {
      setSent([]);
      setValue(fromUrl);
    }
  }
  return {
    value,
    typed: (v) => {
      setValue(v);
      setSent((s) => [...s, v]);
    },
  };
}

/** "Show more" under a group: its size is the group's (told by the first answer until the whole list is in). */
function ShowMore(p: {
  env: string;
  cluster: string;
  size: number;
  shown: number;
  loading: boolean;
  onClick: () => void;
}) {
  if (p.loading)
    return (
      <p className="mt-2 text-center text-sm text-slate-600" role="status">
        Loading the rest of {p.env} · {p.cluster}…
      </p>
    );
  if (p.size <= p.shown) return null;
  return (
    <button
      type="button"
      className="mt-2 w-full rounded border border-slate-300 bg-white px-2 py-1 text-sm text-teal-800 hover:border-teal-500"
      data-testid="show-more"
      onClick={p.onClick}
    >
      Show {Math.min(MORE, p.size - p.shown)} more of {p.size - p.shown} in {p.env} · {p.cluster}
    </button>
  );
}

function Select({
  label,
  value,
  options,
  onChange,
}: {
  label: string;
  value: string;
  options: string[];
  onChange: (v: string) => void;
}) {
  return (
    <label className="flex items-center gap-1 text-sm">
      <span className="text-slate-600">{label}</span>
      <select
        aria-label={label}
        className="rounded border border-slate-300 px-1 py-1"
        value={value}
        onChange={(e) => onChange(e.target.value)}
      >
        <option value="">all</option>
        {/* a value from the URL that lists nothing stays shown as set (the empty state says why) */}
        {(value && !options.includes(value) ? [...options, value] : options).map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </label>
  );
}

/**
 * Why the overview lists nothing, said as a person would: a cluster or environment in the filter that this
 * user cannot see (or that does not exist) is named, with what to do; otherwise the filters match nothing.
 */
export function emptyReason(
  f: AppFilters,
  appClusters: string[],
  envs: string[],
  visibleClusters: string[] | undefined,
): string {
  if (f.cluster && !appClusters.includes(f.cluster)) {
    if (visibleClusters && !visibleClusters.includes(f.cluster))
      return `No apps are listed for cluster ${f.cluster}: you have no role on it, or the console does not know it. Ask an admin for a role there, or clear the filter.`;
    return `Cluster ${f.cluster} has no apps you can see.`;
  }
  if (f.env && !envs.includes(f.env))
    return `No apps are listed for environment ${f.env}: you have no role on it, or no app belongs to it. Ask an admin for a role there, or clear the filter.`;
  if (!appClusters.length) return 'No apps are visible to you yet: your roles cover no app, or no cluster has any.';
  return 'No apps match these filters.';
}
