// An environment's calendar (issue 43): in a range (the next 30 days by default), what holds its deploys and what
// was deployed — the planned windows' occurrences, the Argo CD sync windows of its apps' projects (read live and
// computed as Argo CD reads them), freezes (a person's or a window's), and the releases that became live. The route
// (calendar-routes.ts) gives it only the apps and the records the reader may see.
//
// Unknown is never empty: a project not read or a window Argo CD cannot parse is listed in `unknown` with why, and
// so is a store that cannot be read for freezes or releases (the route answers 503 only when windows cannot be
// read: without them the calendar would say "nothing planned").
import type { EnvCalendarEntry, EnvCalendarResponse } from '../../api/schemas.ts';
import type { App } from '../../domain/app.ts';
import { occurrences, windowCovers, WINDOW_MAX_OCCURRENCES } from '../../domain/freeze-windows.ts';
import { syncWindowStretches, type SyncWindowSpec } from '../../domain/sync-windows.ts';
import { windowOfActor } from '../../domain/window-actor.ts';
import type { FreezeRow } from './store.ts';
import type { StoredWindow } from './window-store.ts';

/** freezes read per calendar (newest first); more: `truncated` */
export const CALENDAR_MAX_FREEZES = 500;
/** stretches listed per Argo CD window (a window firing every hour: 720 in 30 days) */
const MAX_STRETCHES = 500;

export interface CalendarSources {
  /** the planned windows (not deleted); throws when the store cannot be read */
  windows: () => Promise<StoredWindow[]>;
  /** freezes in force in the range, newest first, at most CALENDAR_MAX_FREEZES */
  freezes: (from: string, to: string) => Promise<FreezeRow[]>;
  labels: (appId: string) => Record<string, string> | undefined;
  /** an Argo CD app's project and the windows of it that apply to the app; `why` when they are unknown */
  syncWindows: (app: App) => { project: string; windows: SyncWindowSpec[]; why?: string | undefined } | undefined;
  /** the freeze's apps the reader may see (none: not theirs to see) */
  seen: (f: FreezeRow) => Promise<string[]>;
  /** the releases of the environment that became live in the range, as the reader may see them; throws why not */
  releases: (
    from: string,
    to: string,
  ) => Promise<{ releases: Array<{ app: string; sha: string; at: string; failed: boolean }>; truncated: boolean }>;
}

const iso = (t: number) => new Date(t).toISOString();
const startOf = (e: EnvCalendarEntry) => Date.parse(e.type === 'release' ? e.at : e.from);
const why = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** `apps`: the environment's apps the reader may see; `now` splits what happened from what is planned. */
export async function envCalendar(
  env: string,
  range: { from: number; to: number; now: number },
  apps: App[],
  src: CalendarSources,
): Promise<EnvCalendarResponse> {
  const entries: EnvCalendarEntry[] = [];
  const unknown: EnvCalendarResponse['unknown'] = [];
  let truncated = false;
  const { from, to, now } = range;

  // planned windows: each occurrence in the range that covers an app of the environment (or names it)
  for (const w of await src.windows()) {
    const covered = apps.filter((a) => windowCovers(w.spec, { ...a, labels: src.labels(a.id) })).map((a) => a.id);
    if (!covered.length && !w.spec.scope.envs?.includes(env)) continue;
    const occ = occurrences(w.spec, from, to);
    if (occ.length >= WINDOW_MAX_OCCURRENCES) truncated = true;
    for (const o of occ)
      entries.push({
        type: 'window',
        name: w.spec.name,
        reason: w.spec.reason,
        from: iso(o.from),
        until: iso(o.until),
        apps: covered,
      });
  }

  // Argo CD sync windows: one computation per project window, listing the apps it applies to
  const groups = new Map<string, { app: App; project: string; spec: SyncWindowSpec; apps: string[] }>();
  const unknownProjects = new Map<string, string>();
  for (const a of apps) {
    const v = src.syncWindows(a);
    if (!v) continue;
    if (v.why && !v.windows.length) unknownProjects.set(`${a.cluster}: AppProject ${v.project}`, v.why);
    for (const spec of v.windows) {
      const key = `${a.cluster}/${a.namespace}/${v.project}#${JSON.stringify(spec)}`;
      const g = groups.get(key);
      if (g) g.apps.push(a.id);
      else groups.set(key, { app: a, project: v.project, spec, apps: [a.id] });
    }
  }
  for (const [source, reason] of unknownProjects) unknown.push({ source, why: reason });
  for (const g of groups.values()) {
    const r = syncWindowStretches(g.spec, from, to, MAX_STRETCHES);
    const label = g.spec.description || `${g.spec.schedule} for ${g.spec.duration}`;
    if (r.error) {
      unknown.push({
        source: `${g.app.cluster}: AppProject ${g.project}, ${g.spec.kind} window ${label}`,
        why: `Argo CD cannot read it (${r.error}): it refuses every sync of these apps`,
      });
      continue;
    }
    truncated ||= r.truncated;
    for (const s of r.stretches)
      entries.push({
        type: 'sync-window',
        cluster: g.app.cluster,
        project: g.project,
        kind: g.spec.kind,
        label,
        schedule: g.spec.schedule,
        duration: g.spec.duration,
        ...(g.spec.timeZone ? { timeZone: g.spec.timeZone } : {}),
        manualSync: g.spec.manualSync === true,
        from: iso(s.from),
        until: iso(s.until),
        apps: g.apps,
      });
  }

  const mine = new Set(apps.map((a) => a.id));
  const fromIso = iso(from);
  const toIso = iso(to);
  try {
    const rows = await src.freezes(fromIso, toIso);
    truncated ||= rows.length >= CALENDAR_MAX_FREEZES;
    for (const f of rows) {
      // a freeze whose start no cluster accepted never held anything
      if (f.status === 'failed' && !f.doc.targets.some((t) => t.applied)) continue;
      const shown = (await src.seen(f)).filter((id) => mine.has(id));
      if (!shown.length) continue;
      const window = windowOfActor(f.createdBy);
      const active = f.status === 'active' || f.status === 'ending';
      entries.push({
        type: 'freeze',
        id: f.id,
        reason: f.reason,
        createdBy: f.createdBy,
        ...(window ? { window } : {}),
        from: f.doc.startedAt || f.createdAt,
        until: (active ? f.expiresAt : f.endedAt) ?? f.expiresAt,
        active,
        apps: shown,
      });
    }
  } catch (e) {
    unknown.push({ source: 'freezes', why: `the store cannot be read: ${why(e)}` });
  }

  // releases happen in the past: only a range reaching back before now has any
  if (from < now)
    try {
      const r = await src.releases(fromIso, iso(Math.min(to, now)));
      truncated ||= r.truncated;
      for (const x of r.releases)
        if (mine.has(x.app)) entries.push({ type: 'release', app: x.app, sha: x.sha, at: x.at, failed: x.failed });
    } catch (e) {
      unknown.push({ source: 'releases', why: why(e) });
    }

  entries.sort((a, b) => startOf(a) - startOf(b));
  return { env, from: fromIso, to: toIso, entries, unknown, truncated };
}
