// An Argo CD app's sync windows, read live from its AppProject in the console's informer cache (issue 43) and
// evaluated as Argo CD does (domain/sync-windows.ts). An AppProject the console could not read makes the answer
// `unknown`, never "no windows". A Flux app has none (absent).
//
// An evaluation walks cron fires (about 10 ms for a busy project), so the overview's thousands of cards share them:
// one per project, per the set of its windows that apply (most apps of a project match the same ones), reused
// until the project changes, the verdict's next change comes, or 30 s pass.
import type { App } from '../../domain/app.ts';
import {
  evaluateSyncWindows,
  windowsFor,
  type SyncWindowApp,
  type SyncWindowSpec,
  type SyncWindowsEvaluation,
} from '../../domain/sync-windows.ts';
import type { ClusterManager } from '../kube/cluster-manager.ts';
import type { KubeObject } from '../kube/informer.ts';
import { KINDS } from '../kube/kinds.ts';

/** The wire shape (api/apps.ts AppSyncWindowsSchema): instants as ISO strings. */
export interface SyncWindowsView {
  project: string;
  status: 'ok' | 'unknown';
  /** why the answer is unknown (the AppProject not read, a window Argo CD cannot parse) */
  why?: string;
  /** when this was evaluated */
  at: string;
  /** the project's windows that apply to this app, in their order */
  windows: SyncWindowSpec[];
  automated: SyncWindowsEvaluation['automated'];
  manual: SyncWindowsEvaluation['manual'];
  active: Array<{ window: SyncWindowSpec; until?: string }>;
  blockedBy?: { window: SyncWindowSpec; until?: string };
  nextChange?: string;
  invalid: Array<{ window: SyncWindowSpec; reason: string }>;
  warnings: Array<{ window: SyncWindowSpec; reason: string }>;
}

/** What an app card says: only when automated syncs are not allowed now. */
export interface SyncWindowBrief {
  automated: 'blocked' | 'unknown';
  /** "deny window ‘holiday freeze’ until 2026-12-24T10:00:00Z", or why it is unknown */
  reason: string;
  until?: string;
}

const REUSE_MS = 30_000;
const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
const asObj = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** spec.syncWindows as Argo CD reads them (fields of the wrong type dropped, as its JSON decoding would refuse them) */
export function syncWindowsOf(project: KubeObject | undefined): SyncWindowSpec[] {
  const list = asObj(project?.spec).syncWindows;
  if (!Array.isArray(list)) return [];
  const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined);
  return list.map((raw) => {
    const w = asObj(raw);
    const spec: SyncWindowSpec = {
      kind: w.kind === 'deny' ? 'deny' : 'allow',
      schedule: String(w.schedule ?? ''),
      duration: String(w.duration ?? ''),
    };
    for (const k of ['applications', 'namespaces', 'clusters'] as const) {
      const v = strings(w[k]);
      if (v) spec[k] = v;
    }
    if (typeof w.manualSync === 'boolean') spec.manualSync = w.manualSync;
    if (typeof w.andOperator === 'boolean') spec.andOperator = w.andOperator;
    if (str(w.timeZone)) spec.timeZone = String(w.timeZone);
    if (str(w.description)) spec.description = String(w.description);
    return spec;
  });
}

export function windowName(w: SyncWindowSpec): string {
  return `${w.kind} window ${w.description ? `‘${w.description}’` : `${w.schedule} for ${w.duration}`}`;
}

export class SyncWindowsReader {
  private readonly cache = new Map<string, { at: number; rv: string; view: SyncWindowsView; until: number }>();

  constructor(
    private readonly clusters: ClusterManager,
    /** the app's Application as last seen (its destination is what the windows match) */
    private readonly raw: (id: string) => KubeObject | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /** undefined: not an Argo CD Application (nothing to show) */
  forApp(app: App): SyncWindowsView | undefined {
    if (app.controller !== 'argocd') return undefined;
    const project = app.project ?? 'default';
    const at = this.now();
    const unknown = (why: string): SyncWindowsView => ({
      project,
      status: 'unknown',
      why,
      at: new Date(at).toISOString(),
      windows: [],
      automated: 'unknown',
      manual: 'unknown',
      active: [],
      invalid: [],
      warnings: [],
    });
    const mc = this.clusters.clusters.get(app.cluster);
    if (!mc) return unknown(`cluster ${app.cluster} is not connected`);
    const st = mc.state.kinds[`${KINDS.AppProject.group}/${KINDS.AppProject.kind}`];
    if (!st || !st.synced || st.error)
      return unknown(`AppProjects on ${app.cluster} are not read yet${st?.error ? `: ${st.error}` : ''}`);
    const obj = mc.get(KINDS.AppProject, app.namespace, project);
    if (!obj) return unknown(`AppProject ${app.namespace}/${project} not found on ${app.cluster}`);
    const all = syncWindowsOf(obj);
    const dest = asObj(asObj(this.raw(app.id)?.spec).destination);
    const target: SyncWindowApp = {
      name: app.name,
      namespace: String(dest.namespace ?? ''),
      ...(str(dest.server) ? { server: String(dest.server) } : {}),
      ...(str(dest.name) ? { clusterName: String(dest.name) } : {}),
    };
    const mine = windowsFor(all, target);
    const rv = String(asObj(obj.metadata).resourceVersion ?? '');
    const key = `${app.cluster}/${app.namespace}/${project}#${mine.map((w) => all.indexOf(w)).join(',')}`;
    const hit = this.cache.get(key);
    if (hit && hit.rv === rv && at < hit.until) return hit.view;
    const e = evaluateSyncWindows(mine, new Date(at));
    const iso = (d: Date | undefined) => (d ? { until: d.toISOString() } : {});
    const view: SyncWindowsView = {
      project,
      status: e.invalid.length ? 'unknown' : 'ok',
      ...(e.invalid.length
        ? { why: `Argo CD cannot read ${e.invalid.map((i) => `${windowName(i.window)}: ${i.reason}`).join('; ')}` }
        : {}),
      at: new Date(at).toISOString(),
      windows: mine,
      automated: e.automated,
      manual: e.manual,
      active: e.active.map((a) => ({ window: a.window, ...iso(a.until) })),
      ...(e.blockedBy ? { blockedBy: { window: e.blockedBy.window, ...iso(e.blockedBy.until) } } : {}),
      ...(e.nextChange ? { nextChange: e.nextChange.toISOString() } : {}),
      invalid: e.invalid,
      warnings: e.warnings,
    };
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(key, { at, rv, view, until: Math.min(at + REUSE_MS, e.nextChange?.getTime() ?? Infinity) });
    return view;
  }

  /** The card's line: absent when automated syncs may run now (or for a Flux app). */
  brief(app: App): SyncWindowBrief | undefined {
    const v = this.forApp(app);
    if (!v || v.automated === 'allowed') return undefined;
    if (v.automated === 'unknown') return { automated: 'unknown', reason: v.why ?? 'sync windows unknown' };
    const b = v.blockedBy;
    if (!b) return { automated: 'blocked', reason: 'automated sync blocked by a sync window' };
    const opens = b.window.kind === 'allow';
    return {
      automated: 'blocked',
      reason: `${opens ? 'outside' : 'in'} ${windowName(b.window)}`,
      ...(b.until ? { until: b.until } : {}),
    };
  }
}

const readers = new WeakMap<ClusterManager, SyncWindowsReader>();
/** One reader (and its cache) per console: the list, the detail and the stream share it. */
export function syncWindowsReader(deps: {
  clusters: ClusterManager;
  catalog: { rawObject(id: string): KubeObject | undefined };
}): SyncWindowsReader {
  let r = readers.get(deps.clusters);
  if (!r) readers.set(deps.clusters, (r = new SyncWindowsReader(deps.clusters, (id) => deps.catalog.rawObject(id))));
  return r;
}
