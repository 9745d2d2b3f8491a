// Release metrics per environment (issue 16), computed from the release, drift and freeze evidence the console
// already records — pure, no I/O. What the auditors ask for: deployments per day, lead time from the commit to
// Healthy (median, p90), change failure rate, and drift and freeze events over time.
//
// Definitions (each one is what a row of the evidence says, nothing is guessed):
// - a release is one commit sha of one app (as buildReleases in release.ts groups them) that changed what the app
//   runs: a commit whose render is the running release's (`release.render` with `effect: 'unchanged'`, in a
//   monorepo another app's commit; release-effect.ts) is no deployment, is counted apart (`unchanged`), and a
//   health or verification failure while it was the newest revision counts against the release it is the same as;
// - it is *deployed* when an ok `release.reconcile` record exists for it; its time is the first such record's
//   and its day that time's UTC date;
// - its *lead time* is the `secondsAfterCommit` of its first `release.health` record saying Healthy — for a release
//   verified by a canary, the `canary.promotedSecondsAfterCommit` of its first ok verification (full promotion);
//   minus the time a planned freeze window held the app in between (a `freeze.started` naming a window, until its
//   `freeze.ended`/`freeze.expired`): the team did not wait, the calendar did (issue 43); that time is reported
//   apart (`heldByWindowSeconds`);
// - it is a *failure* when, within the failure window after its reconcile: its health record failed
//   (Degraded/Missing), a verification record for its sha failed, the app's next release is a revert (its
//   `release.change` subject starts with `Revert `) or a `release.rollback*` record names the app;
// - a day, a lead time or a rate with no record behind it is unknown (null, with the count that is zero),
//   never a fake 0.

export interface MetricsEvent {
  seq: number;
  time: string;
  type: string;
  app?: string | null;
  cluster?: string | null;
  env?: string | null;
  data: Record<string, unknown>;
}

export const DRIFT_EVENT_TYPES = ['drift.detected', 'drift.reverted', 'drift.adopted'] as const;
export const FREEZE_EVENT_TYPES = ['freeze.started', 'freeze.ended', 'freeze.expired', 'freeze.extended'] as const;
/** the release evidence the metrics read (review, validation, promotion, gap… may appear and are ignored) */
export const METRIC_RELEASE_TYPES = [
  'release.change',
  'release.render',
  'release.reconcile',
  'release.health',
  'release.verification',
];
/** the rollback records the metrics know of today (any `release.rollback*` type counts) */
export const ROLLBACK_TYPES = ['release.rollback-requested'];
/** every type the metrics read: what a store query for them should ask for */
export const METRIC_EVENT_TYPES: string[] = [
  ...METRIC_RELEASE_TYPES,
  ...ROLLBACK_TYPES,
  ...DRIFT_EVENT_TYPES,
  ...FREEZE_EVENT_TYPES,
];

export interface DayMetrics {
  /** UTC date, YYYY-MM-DD */
  day: string;
  /** evidence records of the environment that day (of the types above): 0 means nothing is known of that day */
  records: number;
  deployments: number;
  /** deployments of that day that became failures */
  failures: number;
  /** drift.detected / reverted / adopted records */
  drifts: number;
  /** freeze.started / ended / expired / extended records */
  freezes: number;
}

export interface DeployedRelease {
  app: string;
  cluster: string | null;
  sha: string;
  deployedAt: string;
  day: string;
  /** commit → Healthy, seconds, without the time a planned window held the app; null when no Healthy record says it */
  leadTimeSeconds: number | null;
  /** of commit → Healthy, the seconds a planned freeze window held the app (not in `leadTimeSeconds`) */
  heldByWindowSeconds: number;
  failed: boolean;
  /** why it counts as a failure, in words */
  failures: string[];
  /** its failure window has not closed yet at `to`: it may still become a failure */
  windowOpen: boolean;
}

export interface EnvReleaseMetrics {
  env: string;
  /** records of this environment in the range: 0 means nothing is known, and every rate is null */
  records: number;
  days: DayMetrics[];
  /** over the releases that became Healthy; `heldByWindowSeconds`: their time held by planned windows, left out */
  leadTime: { median: number | null; p90: number | null; n: number; heldByWindowSeconds: number };
  changeFailureRate: { failed: number; total: number; rate: number | null; open: number };
  eventCounts: Record<string, number>;
  /** the deployed releases of the range, newest first */
  releases: DeployedRelease[];
  /** commits applied in the range that left the render as the running release's: not deployments */
  unchanged: number;
}

export interface MetricsOptions {
  /** ISO times, both inclusive */
  from: string;
  to: string;
  failureWindowHours?: number;
}

const COUNTED = new Set<string>([...DRIFT_EVENT_TYPES, ...FREEZE_EVENT_TYPES]);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
const asRecord = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const utcDay = (iso: string): string => new Date(iso).toISOString().slice(0, 10);

/** Every UTC date from `from`'s to `to`'s, both included. */
export function utcDays(from: string, to: string): string[] {
  const out: string[] = [];
  const end = Date.parse(`${utcDay(to)}T00:00:00.000Z`);
  for (let t = Date.parse(`${utcDay(from)}T00:00:00.000Z`); t <= end && out.length < 3660; t += 86_400_000)
    out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

/**
 * The nearest-rank percentile (p in 0–100] of the values: the smallest value with at least p % of the values
 * at or below it, i.e. sorted[ceil(p/100 · n) − 1]; never interpolated, so it is always a measured lead time.
 * Null for no values.
 */
export function nearestRank(values: number[], p: number): number | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1] ?? null;
}

interface Release {
  app: string;
  cluster: string | null;
  sha: string;
  firstSeq: number;
  change?: MetricsEvent;
  reconcile?: MetricsEvent;
  healthy?: MetricsEvent;
  healthFailed: MetricsEvent[];
  verificationFailed: MetricsEvent[];
  /** the first ok verification of a canary that says when it was fully promoted */
  promoted?: MetricsEvent;
  /** its render was this running release's: no deployment (release-effect.ts) */
  sameAs?: string;
}

const isOk = (e: MetricsEvent) => e.data.status === undefined || e.data.status === 'ok';
const isFailedHealth = (e: MetricsEvent) =>
  e.data.status === 'failed' || e.data.health === 'Degraded' || e.data.health === 'Missing';

/**
 * Per app of `env`, the stretches a planned freeze window held it: from each `freeze.started` that names a window
 * to the `freeze.ended` or `freeze.expired` of the same freeze (still held: until `to`).
 */
function windowHolds(env: string, events: MetricsEvent[], to: number): Map<string, Array<[number, number]>> {
  const open = new Map<string, { apps: string[]; from: number }>();
  const out = new Map<string, Array<[number, number]>>();
  const close = (apps: string[], a: number, b: number) => {
    for (const app of apps) out.set(app, [...(out.get(app) ?? []), [a, b]]);
  };
  for (const e of [...events].sort((a, b) => a.seq - b.seq)) {
    if (e.env !== env) continue;
    const id = str(e.data.freezeId);
    const t = Date.parse(e.time);
    if (!id || Number.isNaN(t)) continue;
    if (e.type === 'freeze.started' && str(e.data.window)) {
      const apps = Array.isArray(e.data.apps) ? e.data.apps.filter((x): x is string => typeof x === 'string') : [];
      open.set(id, { apps: apps.length ? apps : [str(e.app)].filter((x): x is string => !!x), from: t });
    } else if (e.type === 'freeze.ended' || e.type === 'freeze.expired') {
      const o = open.get(id);
      if (o) close(o.apps, o.from, t);
      open.delete(id);
    }
  }
  for (const o of open.values()) close(o.apps, o.from, to);
  return out;
}

/** How much of [a, b] the stretches cover (overlapping stretches counted once). */
function overlapMs(stretches: Array<[number, number]>, a: number, b: number): number {
  const cut = stretches
    .map(([x, y]): [number, number] => [Math.max(x, a), Math.min(y, b)])
    .filter(([x, y]) => y > x)
    .sort((p, q) => p[0] - q[0]);
  let total = 0;
  let end = -Infinity;
  for (const [x, y] of cut) {
    if (y <= end) continue;
    total += y - Math.max(x, end);
    end = y;
  }
  return total;
}

/** The metrics of one environment from its events (other environments' events are skipped). */
export function envReleaseMetrics(env: string, events: MetricsEvent[], opts: MetricsOptions): EnvReleaseMetrics {
  const windowMs = (opts.failureWindowHours ?? 24) * 3_600_000;
  const from = Date.parse(opts.from);
  const to = Date.parse(opts.to);
  const inRange = (iso: string) => {
    const t = Date.parse(iso);
    return t >= from && t <= to;
  };
  const days = new Map<string, DayMetrics>(
    utcDays(opts.from, opts.to).map((day) => [
      day,
      { day, records: 0, deployments: 0, failures: 0, drifts: 0, freezes: 0 },
    ]),
  );
  const eventCounts: Record<string, number> = {};
  const releases = new Map<string, Release>();
  const rollbacks = new Map<string, MetricsEvent[]>();
  let records = 0;
  const held = windowHolds(env, events, to);

  for (const e of [...events].sort((a, b) => a.seq - b.seq)) {
    if (e.env !== env || Number.isNaN(Date.parse(e.time))) continue;
    if (inRange(e.time)) {
      records++;
      const d = days.get(utcDay(e.time));
      if (d) {
        d.records++;
        if (e.type.startsWith('drift.') && COUNTED.has(e.type)) d.drifts++;
        if (e.type.startsWith('freeze.') && COUNTED.has(e.type)) d.freezes++;
      }
      if (COUNTED.has(e.type)) eventCounts[e.type] = (eventCounts[e.type] ?? 0) + 1;
    }
    const app = str(e.app);
    if (!app) continue;
    if (e.type.startsWith('release.rollback')) {
      const list = rollbacks.get(app);
      if (list) list.push(e);
      else rollbacks.set(app, [e]);
      continue;
    }
    const sha = str(e.data.sha);
    if (!sha || !METRIC_RELEASE_TYPES.includes(e.type)) continue;
    const key = `${app}\u0000${sha}`;
    let r = releases.get(key);
    if (!r)
      releases.set(
        key,
        (r = { app, cluster: e.cluster ?? null, sha, firstSeq: e.seq, healthFailed: [], verificationFailed: [] }),
      );
    switch (e.type) {
      case 'release.change':
        r.change ??= e;
        break;
      case 'release.render':
        if (e.data.effect === 'unchanged') r.sameAs = str(e.data.sameAs) ?? r.sameAs;
        break;
      case 'release.reconcile':
        if (isOk(e)) r.reconcile ??= e;
        break;
      case 'release.health':
        if (e.data.health === 'Healthy' && isOk(e)) r.healthy ??= e;
        else if (isFailedHealth(e)) r.healthFailed.push(e);
        break;
      case 'release.verification':
        if (e.data.status === 'failed') r.verificationFailed.push(e);
        else if (isOk(e) && typeof asRecord(e.data.canary).promotedSecondsAfterCommit === 'number') r.promoted ??= e;
        break;
    }
  }

  // a commit that changed nothing here: no deployment; what failed meanwhile failed the release still running
  let unchanged = 0;
  for (const r of [...releases.values()]) {
    if (!r.sameAs) continue;
    releases.delete(`${r.app}\u0000${r.sha}`);
    if (r.reconcile && inRange(r.reconcile.time)) unchanged++;
    const running = releases.get(`${r.app}\u0000${r.sameAs}`);
    running?.healthFailed.push(...r.healthFailed);
    running?.verificationFailed.push(...r.verificationFailed);
  }

  // each app's releases in the order they appeared: the one after a release is its successor
  const next = new Map<Release, Release>();
  const byApp = new Map<string, Release[]>();
  for (const r of releases.values()) {
    const list = byApp.get(r.app);
    if (list) list.push(r);
    else byApp.set(r.app, [r]);
  }
  for (const list of byApp.values()) {
    list.sort((a, b) => a.firstSeq - b.firstSeq);
    list.forEach((r, i) => {
      const n = list[i + 1];
      if (n) next.set(r, n);
    });
  }

  const deployed: DeployedRelease[] = [];
  for (const r of releases.values()) {
    if (!r.reconcile || !inRange(r.reconcile.time)) continue;
    const start = Date.parse(r.reconcile.time);
    const within = (e: MetricsEvent) => {
      const t = Date.parse(e.time);
      return t >= start && t <= start + windowMs;
    };
    const failures: string[] = [];
    const h = r.healthFailed.find(within);
    if (h)
      failures.push(
        `health ${str(h.data.health) ?? 'failed'}${str(h.data.reason) ? `: ${String(h.data.reason)}` : ''}`,
      );
    const v = r.verificationFailed.find(within);
    if (v) failures.push(`verification failed${str(v.data.reason) ? `: ${String(v.data.reason)}` : ''}`);
    const n = next.get(r);
    const subject = str(n?.change?.data.subject);
    if (n?.change && subject?.startsWith('Revert ') && within(n.change))
      failures.push(`reverted by ${n.sha.slice(0, 7)}: ${subject}`);
    const rb = (rollbacks.get(r.app) ?? []).find(within);
    if (rb) failures.push(`rolled back (${rb.type})`);
    // a canary's release is delivered when it is fully promoted, not at its first Healthy
    const lead = r.promoted
      ? asRecord(r.promoted.data.canary).promotedSecondsAfterCommit
      : r.healthy?.data.secondsAfterCommit;
    const valid = typeof lead === 'number' && Number.isFinite(lead) && lead >= 0;
    const deliveredAt = Date.parse((r.promoted ?? r.healthy)?.time ?? '');
    const heldMs = valid ? overlapMs(held.get(r.app) ?? [], deliveredAt - lead * 1000, deliveredAt) : 0;
    deployed.push({
      app: r.app,
      cluster: r.cluster,
      sha: r.sha,
      deployedAt: r.reconcile.time,
      day: utcDay(r.reconcile.time),
      leadTimeSeconds: valid ? Math.max(0, lead - heldMs / 1000) : null,
      heldByWindowSeconds: heldMs / 1000,
      failed: failures.length > 0,
      failures,
      windowOpen: failures.length === 0 && start + windowMs > to,
    });
  }
  deployed.sort((a, b) => Date.parse(b.deployedAt) - Date.parse(a.deployedAt));
  for (const d of deployed) {
    const day = days.get(d.day);
    if (!day) continue;
    day.deployments++;
    if (d.failed) day.failures++;
  }
  const leads = deployed.flatMap((d) => (d.leadTimeSeconds === null ? [] : [d.leadTimeSeconds]));
  const failed = deployed.filter((d) => d.failed).length;
  return {
    env,
    records,
    days: [...days.values()],
    leadTime: {
      median: nearestRank(leads, 50),
      p90: nearestRank(leads, 90),
      n: leads.length,
      heldByWindowSeconds: deployed.reduce((n, d) => n + (d.leadTimeSeconds === null ? 0 : d.heldByWindowSeconds), 0),
    },
    changeFailureRate: {
      failed,
      total: deployed.length,
      rate: deployed.length ? failed / deployed.length : null,
      open: deployed.filter((d) => d.windowOpen).length,
    },
    eventCounts,
    releases: deployed,
    unchanged,
  };
}

/** The metrics of every environment the events name (events without one are skipped). */
export function releaseMetrics(events: MetricsEvent[], opts: MetricsOptions): Record<string, EnvReleaseMetrics> {
  const envs = new Map<string, MetricsEvent[]>();
  for (const e of events) {
    if (!e.env) continue;
    const list = envs.get(e.env);
    if (list) list.push(e);
    else envs.set(e.env, [e]);
  }
  return Object.fromEntries([...envs].map(([env, list]) => [env, envReleaseMetrics(env, list, opts)]));
}
