// The releases of one environment (issue 16), for auditors: deployments per day, lead time commit → Healthy,
// change failure rate, drift and freeze events over time — each chart named, with its numbers in a
// visually hidden table for screen readers — and the environment's apps with their newest release. Numbers
// with no evidence behind them are said to be unknown, never drawn as 0.
import type { ReactNode } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import {
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  Line,
  LineChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';
import type { EnvReleasesResponse } from '../../../../api/schemas.ts';
import { nearestRank } from '../../../../domain/release-metrics.ts';
import { HealthBadge, SyncBadge } from '../../../components/badges.tsx';
import { releaseLiveness } from '../../../../domain/release-not-live.ts';
import { Time } from '../../../components/time.tsx';
import { useDocumentTitle } from '../../../lib/document-title.ts';
import { usePermission } from '../../../lib/use-permission.ts';
import { DAY_CHOICES, readEnvReleasesParams, useEnvReleases } from '../api/env-release-queries.ts';

// theme colours (theme.css gives each step its dark-mode value): series stay readable in light and dark
const C = {
  teal: 'var(--color-teal-700, #0f766e)',
  red: 'var(--color-red-700, #b91c1c)',
  violet: 'var(--color-violet-700, #6d28d9)',
  amber: 'var(--color-amber-700, #b45309)',
  axis: 'var(--color-slate-600, #475569)',
  grid: 'var(--color-slate-200, #e2e8f0)',
  panel: 'var(--color-white, #fff)',
};

/** "45 s", "12 min", "3.5 h", "2.1 d" */
function formatDuration(s: number | null): string {
  if (s === null) return 'unknown';
  if (s < 90) return `${Math.round(s)} s`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min`;
  if (s < 48 * 3600) return `${(s / 3600).toFixed(1)} h`;
  return `${(s / 86_400).toFixed(1)} d`;
}
const pct = (r: number | null) => (r === null ? 'unknown' : `${Math.round(r * 1000) / 10} %`);
const shortDay = (d: string) => d.slice(5);

/** Per day: the chart's values (null where nothing is known) and the lead time median of that day's releases. */
function series(data: EnvReleasesResponse) {
  const leads = new Map<string, number[]>();
  for (const r of data.releases)
    if (r.leadTimeSeconds !== null) leads.set(r.day, [...(leads.get(r.day) ?? []), r.leadTimeSeconds]);
  return data.metrics.days.map((d) => ({
    day: d.day,
    known: d.records > 0,
    deployments: d.records ? d.deployments : null,
    failures: d.records ? d.failures : null,
    rate: d.deployments ? Math.round((d.failures / d.deployments) * 1000) / 10 : null,
    lead: nearestRank(leads.get(d.day) ?? [], 50),
    drifts: d.records ? d.drifts : null,
    freezes: d.records ? d.freezes : null,
  }));
}
type Point = ReturnType<typeof series>[number];

const axes = (yUnit?: string) => (
  <>
    <CartesianGrid stroke={C.grid} strokeDasharray="3 3" vertical={false} />
    <XAxis dataKey="day" tickFormatter={shortDay} tick={{ fill: C.axis, fontSize: 11 }} stroke={C.axis} />
    <YAxis
      allowDecimals={false}
      tick={{ fill: C.axis, fontSize: 11 }}
      stroke={C.axis}
      width={yUnit ? 56 : 36}
      unit={yUnit}
    />
    <Tooltip contentStyle={{ background: C.panel, borderColor: C.grid }} labelStyle={{ color: C.axis }} />
    <Legend wrapperStyle={{ fontSize: 12 }} />
  </>
);

function ChartSection(p: {
  id: string;
  title: string;
  summary: ReactNode;
  chartLabel: string;
  chart: ReactNode;
  caption: string;
  columns: Array<{ label: string; value: (d: Point) => string }>;
  points: Point[];
}) {
  return (
    <section
      aria-labelledby={p.id}
      className="min-w-0 rounded-lg border border-slate-200 bg-white p-4 shadow-sm"
      data-testid="env-chart"
    >
      <h2 id={p.id} className="font-semibold">
        {p.title}
      </h2>
      <p className="text-sm text-slate-700">{p.summary}</p>
      {/* a chart drawn for a wider window a moment ago (ResponsiveContainer resizes after the layout) never
          makes the page scroll sideways */}
      <div role="img" aria-label={p.chartLabel} className="mt-2 h-48 w-full overflow-hidden">
        <ResponsiveContainer width="100%" height="100%" initialDimension={{ width: 480, height: 192 }}>
          {p.chart}
        </ResponsiveContainer>
      </div>
      <table className="sr-only">
        <caption>{p.caption}</caption>
        <thead>
          <tr>
            <th scope="col">Day (UTC)</th>
            {p.columns.map((c) => (
              <th key={c.label} scope="col">
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {p.points.map((d) => (
            <tr key={d.day}>
              <th scope="row">{d.day}</th>
              {p.columns.map((c) => (
                <td key={c.label}>{d.known ? c.value(d) : 'no records'}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function Charts({ data, range }: { data: EnvReleasesResponse; range: string }) {
  const m = data.metrics;
  const pts = series(data);
  const total = m.changeFailureRate.total;
  const drifts = pts.reduce((n, d) => n + (d.drifts ?? 0), 0);
  const freezes = pts.reduce((n, d) => n + (d.freezes ?? 0), 0);
  const common = { data: pts, accessibilityLayer: false, margin: { top: 8, right: 8, bottom: 0, left: 0 } };
  const env = data.env;
  return (
    <div className="grid gap-4 lg:grid-cols-[minmax(0,1fr)_minmax(0,1fr)]">
      <ChartSection
        id="env-deployments"
        title="Deployments per day"
        summary={`${total} deployment${total === 1 ? '' : 's'} in ${range} (a release counts once its reconcile is applied; a commit that leaves an app's render and image digests as they run is no deployment of it${m.unchanged ? `: ${m.unchanged} such commit${m.unchanged === 1 ? '' : 's'} not counted` : ''}).`}
        chartLabel={`Bar chart: deployments per day in ${env}, ${range}; ${total} in total. The numbers are in the table that follows.`}
        chart={
          <BarChart {...common}>
            {axes()}
            <Bar dataKey="deployments" name="deployments" fill={C.teal} isAnimationActive={false} />
          </BarChart>
        }
        caption={`Deployments per day in ${env}`}
        columns={[{ label: 'Deployments', value: (d) => String(d.deployments) }]}
        points={pts}
      />
      <ChartSection
        id="env-lead-time"
        title="Lead time, commit → Healthy"
        summary={
          m.leadTime.n
            ? `Median ${formatDuration(m.leadTime.median)}, p90 ${formatDuration(m.leadTime.p90)} over ${m.leadTime.n} release${m.leadTime.n === 1 ? '' : 's'} that became Healthy (nearest-rank).${m.leadTime.heldByWindowSeconds > 0 ? ` Without ${formatDuration(m.leadTime.heldByWindowSeconds)} held by planned freeze windows.` : ''}`
            : 'Unknown: no release of this range became Healthy.'
        }
        chartLabel={`Line chart: median lead time per day in ${env}, ${range}, in minutes. Median ${formatDuration(m.leadTime.median)}, p90 ${formatDuration(m.leadTime.p90)}, ${m.leadTime.n} releases.`}
        chart={
          <LineChart {...common} data={pts.map((d) => ({ ...d, lead: d.lead === null ? null : d.lead / 60 }))}>
            {axes(' min')}
            <Line dataKey="lead" name="median lead time (min)" stroke={C.violet} isAnimationActive={false} />
          </LineChart>
        }
        caption={`Median lead time per day in ${env}`}
        columns={[{ label: 'Median lead time', value: (d) => formatDuration(d.lead) }]}
        points={pts}
      />
      <ChartSection
        id="env-failure-rate"
        title="Change failure rate"
        summary={
          total
            ? `${pct(m.changeFailureRate.rate)}: ${m.changeFailureRate.failed} of ${total} deployments failed within ${data.failureWindowHours} h (health failed, a failed verification, a revert or a rollback)${m.changeFailureRate.open ? `; ${m.changeFailureRate.open} still within their window` : ''}.`
            : 'Unknown: no deployment in this range.'
        }
        chartLabel={`Line chart: change failure rate per day in ${env}, ${range}, in percent; ${pct(m.changeFailureRate.rate)} overall.`}
        chart={
          <LineChart {...common}>
            {axes(' %')}
            <Line dataKey="rate" name="failure rate (%)" stroke={C.red} isAnimationActive={false} />
          </LineChart>
        }
        caption={`Change failure rate per day in ${env}`}
        columns={[
          { label: 'Failed', value: (d) => String(d.failures) },
          { label: 'Deployments', value: (d) => String(d.deployments) },
          { label: 'Rate', value: (d) => (d.rate === null ? 'no deployment' : `${d.rate} %`) },
        ]}
        points={pts}
      />
      <ChartSection
        id="env-drift-freeze"
        title="Drift and freeze events per day"
        summary={`${drifts} drift event${drifts === 1 ? '' : 's'} (detected, reverted, adopted) and ${freezes} freeze event${freezes === 1 ? '' : 's'} (started, extended, ended, expired).`}
        chartLabel={`Bar chart: drift and freeze events per day in ${env}, ${range}; ${drifts} drift and ${freezes} freeze events.`}
        chart={
          <BarChart {...common}>
            {axes()}
            <Bar dataKey="drifts" name="drift events" fill={C.amber} isAnimationActive={false} />
            <Bar dataKey="freezes" name="freeze events" fill={C.teal} isAnimationActive={false} />
          </BarChart>
        }
        caption={`Drift and freeze events per day in ${env}`}
        columns={[
          { label: 'Drift events', value: (d) => String(d.drifts) },
          { label: 'Freeze events', value: (d) => String(d.freezes) },
        ]}
        points={pts}
      />
    </div>
  );
}

function AppsTable({ data }: { data: EnvReleasesResponse }) {
  return (
    <section className="rounded-lg border border-slate-200 bg-white p-4 shadow-sm" aria-labelledby="env-apps">
      <h2 id="env-apps" className="mb-2 font-semibold">
        Apps in {data.env}
      </h2>
      {data.apps.length === 0 ? (
        <p className="text-sm text-slate-600">No app of this environment is listed for you.</p>
      ) : (
        <div className="overflow-x-auto">
          <table className="w-full text-left text-sm">
            <thead className="text-slate-600">
              <tr>
                <th scope="col" className="py-1 pr-3 font-medium">
                  App
                </th>
                <th scope="col" className="py-1 pr-3 font-medium">
                  Cluster
                </th>
                <th scope="col" className="py-1 pr-3 font-medium">
                  Health
                </th>
                <th scope="col" className="py-1 pr-3 font-medium">
                  Newest release
                </th>
                <th scope="col" className="py-1 font-medium">
                  State
                </th>
              </tr>
            </thead>
            <tbody>
              {data.apps.map((a) => (
                <tr key={a.id} className="border-t border-slate-100 align-top" data-testid="env-app-row">
                  <th scope="row" className="py-1 pr-3 font-medium wrap-anywhere">
                    <Link to={`/apps/${a.id}`} className="text-teal-700 underline">
                      {a.name}
                    </Link>
                  </th>
                  <td className="py-1 pr-3">{a.cluster}</td>
                  <td className="py-1 pr-3">
                    <span className="flex flex-wrap gap-1">
                      <HealthBadge status={a.health} />
                      <SyncBadge status={a.sync} />
                    </span>
                  </td>
                  <td className="py-1 pr-3">
                    {a.newest ? (
                      <>
                        <span className="font-mono">{a.newest.sha.slice(0, 7)}</span>{' '}
                        <span className="text-slate-600">
                          first seen <Time iso={a.newest.firstSeen} />
                        </span>
                      </>
                    ) : (
                      <span className="text-slate-600">none recorded</span>
                    )}
                  </td>
                  <td className="py-1 wrap-anywhere">
                    {!a.newest
                      ? '—'
                      : a.newest.blocked
                        ? `${releaseLiveness(a.newest, a.newest.blocked).label} stops at ${a.newest.blocked.state}: ${a.newest.blocked.why}`
                        : releaseLiveness(a.newest, undefined).headline}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

export function EnvReleasesPage() {
  const env = useParams().env ?? '';
  const [sp, setSp] = useSearchParams();
  const params = readEnvReleasesParams(sp);
  useDocumentTitle(`${env} releases`);
  const perm = usePermission('evidence.read', { env, ...(params.cluster ? { cluster: params.cluster } : {}) });
  const q = useEnvReleases(env, params, perm.allowed);
  const range = `the last ${params.days} days`;
  const setDays = (v: string) => {
    const next = new URLSearchParams(sp);
    next.set('days', v);
    setSp(next, { replace: true });
  };
  return (
    <div className="grid grid-cols-[minmax(0,1fr)] gap-4" data-testid="env-releases">
      <header className="flex flex-wrap items-end gap-3">
        <div>
          <h1 className="text-xl font-semibold wrap-anywhere">{env} releases</h1>
          <p className="text-sm text-slate-600">
            From the evidence the console recorded{params.cluster ? ` on cluster ${params.cluster}` : ''}, {range} (UTC
            days).{' '}
            {params.cluster && (
              <Link to={`/envs/${encodeURIComponent(env)}?days=${params.days}`} className="text-teal-700 underline">
                All clusters
              </Link>
            )}
          </p>
        </div>
        <label className="ml-auto flex items-center gap-2 text-sm">
          Range
          <select
            value={params.days}
            onChange={(e) => setDays(e.target.value)}
            className="rounded border border-slate-300 bg-white px-2 py-1"
          >
            {DAY_CHOICES.map((d) => (
              <option key={d} value={d}>
                last {d} days
              </option>
            ))}
          </select>
        </label>
      </header>
      {!perm.allowed && <p className="text-sm text-slate-600">{perm.reason}.</p>}
      {perm.allowed && q.isPending && <p className="text-slate-500">Loading…</p>}
      {q.isError && (
        <p className="rounded border border-red-200 bg-red-50 p-3 text-red-800" role="alert">
          Cannot load the releases of {env}: {q.error.message}
        </p>
      )}
      {q.data?.truncated && (
        <p className="rounded border border-amber-300 bg-amber-50 p-3 text-sm text-amber-900" role="status">
          More records than one page reads: the numbers count the records from <Time iso={q.data.completeFrom} /> on;
          older days of the range are incomplete.
        </p>
      )}
      {q.data && q.data.metrics.records === 0 && (
        <p className="rounded border border-slate-300 bg-slate-50 p-3 text-sm text-slate-700" role="status">
          No release, drift or freeze evidence is recorded for {env} in {range}: every number below is unknown, not
          zero.
        </p>
      )}
      {q.data && <Charts data={q.data} range={range} />}
      {q.data && <AppsTable data={q.data} />}
    </div>
  );
}
