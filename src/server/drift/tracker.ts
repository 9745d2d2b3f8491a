// Drift as a live signal: every update of an object a GitOps app manages is checked against the write
// before it (managedFields, no dry-run). A write by someone other than the app's controller to a field Git
// declares opens a drift episode on that object at once; later writes to the same object are coalesced
// into it (counted); the episode ends when the controller owns every drifted field again — `reverted`
// (Git's value is back) or `adopted` (Git changed to the live value). Each episode is one
// `drift.detected` record when it opens and one `drift.reverted` / `drift.adopted` record when it ends,
// whatever happened in between. No Fastify types here.
import { EventEmitter } from 'node:events';
import type { App } from '../../domain/app.ts';
import {
  driftEnded,
  driftWrites,
  type AppDrift,
  type DriftField,
  type DriftWrite,
  type ObjectDrift,
} from '../../domain/drift.ts';
import { controllerManagersOf, isGitOpsControllerManager } from '../../domain/field-managers.ts';
import { ownersByPath, ownersOfPath, type OwnersByPath } from '../../domain/managed-fields.ts';
import { refId } from '../../domain/refs.ts';
import { lastManager, refOf } from '../../domain/tree.ts';
import type { EvidenceRecorder } from '../evidence/index.ts';
import type { KubeObject } from '../kube/informer.ts';
import { trackerOf } from '../tree/index.ts';
import { trackersOf } from '../kube/object-index.ts';
import { maskValue } from '../kube/secret-mask.ts';

type Obj = Record<string, unknown>;

interface Episode extends ObjectDrift {
  appId: string;
  detectedAt: number;
}

export interface DriftTrackerDeps {
  recorder: EvidenceRecorder;
  /** the apps, to find which app manages an object (its tracker label / annotation) */
  apps(): Iterable<App>;
  now?: () => number;
}

/** An episode that ended, kept for a while so that "reconcile now" can say what the controller took back. */
export interface EndedDrift {
  ref: ObjectDrift['ref'];
  how: 'reverted' | 'adopted' | 'deleted';
  managers: string[];
  fields: DriftField[];
  endedAt: string;
}

const NO_PATHS: readonly string[] = Object.freeze([]);
/** Objects whose Git fields are remembered after their episode (rememberOrphans) */
const MAX_ORPHANED = 10_000;
/** Writes to objects of an app the catalog does not know yet: how many are kept, and for how long */
const MAX_UNRESOLVED = 2_000;
const UNRESOLVED_MS = 120_000;
/** Ended episodes kept per app (the newest) */
const MAX_ENDED = 50;
/** At most this many objects and fields per app are carried in the app (the evidence has them all). */
const MAX_OBJECTS = 20;
const MAX_FIELDS = 20;

export class DriftTracker extends EventEmitter<{ changed: [string] }> {
  /** object refId → its open episode */
  private readonly open = new Map<string, Episode>();
  private readonly byApp = new Map<string, Set<string>>();
  private trackerIndex = new Map<string, App>();
  private readonly pendingChanged = new Map<string, NodeJS.Timeout>();
  private readonly ended = new Map<string, EndedDrift[]>();
  /** object refId → Git's fields it holds without the controller owning them (see rememberOrphans) */
  private readonly orphaned = new Map<string, string[]>();
  private trackerIndexBuilt = 0;
  /** writes to objects naming an app the catalog did not know yet (see appsChanged) */
  private readonly unresolved = new Map<string, { cluster: string; prev: KubeObject; next: KubeObject; at: number }>();
  private enabled = true;

  constructor(private readonly deps: DriftTrackerDeps) {
    super();
    this.setMaxListeners(100);
  }

  /** benchmarks measure the cost of detection by turning it off (CONSOLE_DRIFT_DETECTION=off); open episodes are dropped */
  setEnabled(on: boolean): void {
    this.enabled = on;
    if (on) return;
    const apps = [...this.byApp.keys()];
    this.open.clear();
    this.byApp.clear();
    for (const id of apps) this.emit('changed', id);
  }

  /** the open episodes of one app, as the app shows them */
  forApp(appId: string): AppDrift | undefined {
    const keys = this.byApp.get(appId);
    if (!keys?.size) return undefined;
    const eps = [...keys]
      .map((k) => this.open.get(k))
      .filter((e): e is Episode => !!e)
      .sort((a, b) => b.lastWriteAt.localeCompare(a.lastWriteAt));
    if (!eps.length) return undefined;
    return {
      since: eps.map((e) => e.since).sort()[0] as string,
      lastWriteAt: eps[0]?.lastWriteAt as string,
      kind: eps.some((e) => e.kind === 'person') ? 'person' : 'conflict',
      managers: [...new Set(eps.flatMap((e) => e.managers))],
      objectCount: eps.length,
      objects: eps.slice(0, MAX_OBJECTS).map(({ appId: _a, detectedAt: _d, ...o }) => ({
        ...o,
        fields: o.fields.slice(0, MAX_FIELDS),
      })),
    };
  }

  /** the open episode of one object */
  forObject(cluster: string, o: Obj): ObjectDrift | undefined {
    return this.forId(refId(refOf(cluster, o)));
  }

  /** the open episode of one object by its refId (a tree node's id) */
  forId(id: string): ObjectDrift | undefined {
    const ep = this.open.get(id);
    if (!ep) return undefined;
    const { appId: _a, detectedAt: _d, ...o } = ep;
    return o;
  }

  /** the episodes of an app that ended at or after `since` (ISO time), oldest first */
  endedSince(appId: string, since: string): EndedDrift[] {
    const t = Date.parse(since);
    return (this.ended.get(appId) ?? []).filter((e) => Date.parse(e.endedAt) >= t);
  }

  /** how many episodes are open (all apps) */
  get openCount(): number {
    return this.open.size;
  }

  /** An object changed (prev: the version before; next: undefined when deleted). */
  onObject(cluster: string, prev: KubeObject | undefined, next: KubeObject | undefined): void {
    if (!this.enabled) return;
    const obj = (next ?? prev) as Obj | undefined;
    if (!obj) return;
    // most events are of objects no app manages (pods, replica sets): answer those without building keys
    const app = next ? this.appOf(cluster, next as Obj) : undefined;
    if (!app && next && prev && trackersOf(next).length) this.keepUnresolved(cluster, prev, next);
    // an episode is only ever opened on an object an app tracks (pods, replica sets… never are)
    if (!app && (!this.open.size || !(trackersOf(obj as KubeObject).length || (prev && trackersOf(prev).length))))
      return;
    // the object's id is built only when an episode or a remembered field could be its
    let key = this.open.size || this.orphaned.size ? refId(refOf(cluster, obj)) : '';
    const ep = key ? this.open.get(key) : undefined;
    if (!next) {
      if (ep) this.close(ep, key, 'deleted', obj);
      return;
    }
    if (!ep && !app) return;
    const appId = ep?.appId ?? (app as App).id;
    const controller = app?.controller ?? this.controllerOf(appId);
    if (!controller) return;
    const mgrs = controllerManagersOf(controller);
    const known = ep?.fields.map((f) => f.path) ?? (key ? this.orphaned.get(key) : undefined) ?? NO_PATHS;
    const writes = driftWrites(prev as Obj | undefined, next as Obj, mgrs, known);
    if (writes.length) {
      if (ep) {
        // a storm of writes: counted at once, shown at most once a second (the SSE stream is not flooded)
        const reshaped = this.coalesce(ep, writes, next as Obj);
        // a write may put Git's values back by hand
        const end = driftEnded(next as Obj, ep, mgrs);
        if (end) this.close(ep, key, end, next as Obj);
        else if (reshaped) this.emit('changed', appId);
        else this.changedSoon(appId);
      } else {
        key ||= refId(refOf(cluster, obj));
        this.start(key, app as App, cluster, next as Obj, prev as Obj, writes);
        this.emit('changed', appId);
      }
      return;
    }
    if (ep) {
      const end = driftEnded(next as Obj, ep, mgrs);
      if (end) this.close(ep, key, end, next as Obj);
    } else if (known.length) {
      // the controller took its fields back: nothing to remember any more
      const owners = ownersByPath(next as Obj);
      if (known.every((p) => ownersOfPath(owners, p).some((o) => mgrs.includes(o.manager)))) this.orphaned.delete(key);
    }
  }

  private controllerOf(appId: string): App['controller'] | undefined {
    for (const a of this.deps.apps()) if (a.id === appId) return a.controller;
    return undefined;
  }

  /**
   * The app managing an object, by its Flux labels / Argo CD tracking annotation. The tracker → app index
   * follows the catalog (appsChanged), is rebuilt every 5 s, and at most once a second when an object
   * names a tracker it does not know.
   */
  private appOf(cluster: string, o: Obj): App | undefined {
    const trackers = trackersOf(o as KubeObject);
    if (!trackers.length) return undefined;
    const now = Date.now();
    for (let attempt = 0; attempt < 2; attempt++) {
      const age = now - this.trackerIndexBuilt;
      if (age > 5_000 || (attempt === 1 && age > 1_000)) {
        const m = new Map<string, App>();
        for (const a of this.deps.apps()) m.set(`${a.cluster}\u0000${trackerOf(a)}`, a);
        this.trackerIndex = m;
        this.trackerIndexBuilt = now;
      } else if (attempt === 1) return undefined; // kept by the caller until the catalog knows the app
      for (const t of trackers) {
        const a = this.trackerIndex.get(`${cluster}\u0000${t}`);
        if (a) return a;
      }
    }
    return undefined;
  }

  /**
   * The catalog added, changed or removed an app. A new app's objects may have been written before the
   * catalog knew it (an app and its objects appear together; a console that just started): their writes
   * were kept (unresolved) and are looked at now, never dropped.
   */
  appsChanged(e: { type: 'upsert'; app: App } | { type: 'delete'; id: string }): void {
    if (e.type === 'delete') {
      for (const [k, a] of this.trackerIndex) if (a.id === e.id) this.trackerIndex.delete(k);
      return;
    }
    const tracker = trackerOf(e.app);
    const key = `${e.app.cluster}\u0000${tracker}`;
    const isNew = this.trackerIndex.get(key)?.id !== e.app.id;
    this.trackerIndex.set(key, e.app);
    if (!isNew || !this.unresolved.size) return;
    const now = this.now();
    for (const [k, u] of [...this.unresolved]) {
      if (now - u.at > UNRESOLVED_MS) {
        this.unresolved.delete(k);
        continue;
      }
      if (u.cluster !== e.app.cluster || !trackersOf(u.next).includes(tracker)) continue;
      this.unresolved.delete(k);
      this.onObject(u.cluster, u.prev, u.next);
    }
  }

  /** a write to an object naming an app the catalog does not know (yet): kept, first version and latest */
  private keepUnresolved(cluster: string, prev: KubeObject, next: KubeObject): void {
    const key = refId(refOf(cluster, next as Obj));
    const had = this.unresolved.get(key);
    this.unresolved.delete(key);
    this.unresolved.set(key, { cluster, prev: had?.prev ?? prev, next, at: had?.at ?? this.now() });
    if (this.unresolved.size > MAX_UNRESOLVED) this.unresolved.delete(this.unresolved.keys().next().value as string);
  }

  /**
   * Git's fields an episode ended on without the controller owning them again (someone put Git's value back
   * by hand: the controller sees nothing to apply and leaves the field with them). Without this, a later
   * write by another controller to such a field could not be told from a field Git does not declare.
   */
  private rememberOrphans(key: string, fields: DriftField[], owners: OwnersByPath): void {
    this.orphaned.delete(key);
    if (!fields.length) return;
    const orphans = fields
      .filter((f) => f.from !== undefined)
      .filter((f) => !ownersOfPath(owners, f.path).some((o) => isGitOpsControllerManager(o.manager)))
      .map((f) => f.path);
    if (!orphans.length) return;
    this.orphaned.set(key, orphans);
    // bounded: the oldest go first
    if (this.orphaned.size > MAX_ORPHANED) this.orphaned.delete(this.orphaned.keys().next().value as string);
  }

  /** one 'changed' for this app within a second (coalesced writes only change the count and the values) */
  private changedSoon(appId: string): void {
    if (this.pendingChanged.has(appId)) return;
    const t = setTimeout(() => {
      this.pendingChanged.delete(appId);
      this.emit('changed', appId);
    }, 1_000);
    t.unref();
    this.pendingChanged.set(appId, t);
  }

  private start(key: string, app: App, cluster: string, next: Obj, prev: Obj, writes: DriftWrite[]): void {
    const secret = next.kind === 'Secret';
    const fields = mergeFields([], writes, secret);
    const since =
      writes
        .map((w) => w.time ?? '')
        .filter(Boolean)
        .sort()[0] ?? new Date(this.now()).toISOString();
    const lastApply = controllerApplyTime(prev, controllerManagersOf(app.controller));
    const ep: Episode = {
      appId: app.id,
      ref: refOf(cluster, next),
      kind: writes.some((w) => w.kind === 'person') ? 'person' : 'conflict',
      managers: [...new Set(writes.map((w) => w.manager))],
      fields,
      since,
      lastWriteAt:
        writes
          .map((w) => w.time ?? since)
          .sort()
          .at(-1) ?? since,
      writes: 1,
      detectedAt: this.now(),
      ...(lastApply ? { afterApplyMs: Math.max(0, Date.parse(since) - Date.parse(lastApply)) } : {}),
    };
    this.open.set(key, ep);
    let set = this.byApp.get(app.id);
    if (!set) this.byApp.set(app.id, (set = new Set()));
    set.add(key);
    this.deps.recorder.observe({
      time: new Date(this.now()).toISOString(),
      type: 'drift.detected',
      actor: ep.managers[0] ?? 'unknown',
      app: app.id,
      cluster,
      env: app.env,
      data: {
        object: refId(ep.ref),
        kind: ep.kind,
        managers: ep.managers,
        fields: ep.fields,
        writtenAt: ep.since,
        ...(ep.afterApplyMs !== undefined ? { afterControllerApplyMs: ep.afterApplyMs } : {}),
      },
    });
  }

  /** Adds writes to an open episode; true when more than the count and the values changed (new fields, managers, kind). */
  private coalesce(ep: Episode, writes: DriftWrite[], next: Obj): boolean {
    const shape = `${ep.kind}|${ep.managers.join(',')}|${ep.fields.map((f) => f.path).join(',')}`;
    ep.writes++;
    ep.fields = mergeFields(ep.fields, writes, next.kind === 'Secret');
    for (const w of writes) if (!ep.managers.includes(w.manager)) ep.managers.push(w.manager);
    if (writes.some((w) => w.kind === 'person')) ep.kind = 'person';
    const latest = writes
      .map((w) => w.time ?? '')
      .sort()
      .at(-1);
    if (latest && latest > ep.lastWriteAt) ep.lastWriteAt = latest;
    return shape !== `${ep.kind}|${ep.managers.join(',')}|${ep.fields.map((f) => f.path).join(',')}`;
  }

  private close(ep: Episode, key: string, how: 'reverted' | 'adopted' | 'deleted', obj: Obj): void {
    this.open.delete(key);
    this.byApp.get(ep.appId)?.delete(key);
    const owners = ownersByPath(obj);
    this.rememberOrphans(key, how === 'deleted' ? [] : ep.fields, owners);
    clearTimeout(this.pendingChanged.get(ep.appId));
    this.pendingChanged.delete(ep.appId);
    const endedAt = this.now();
    const list = this.ended.get(ep.appId) ?? [];
    list.push({
      ref: ep.ref,
      how,
      managers: [...ep.managers],
      fields: ep.fields,
      endedAt: new Date(endedAt).toISOString(),
    });
    this.ended.set(ep.appId, list.slice(-MAX_ENDED));
    const app = [...this.deps.apps()].find((a) => a.id === ep.appId);
    this.deps.recorder.observe({
      time: new Date(endedAt).toISOString(),
      type: how === 'adopted' ? 'drift.adopted' : 'drift.reverted',
      actor:
        how === 'deleted'
          ? 'console'
          : endedBy(obj, owners, ep.fields, controllerManagersOf(app?.controller ?? 'flux')),
      app: ep.appId,
      cluster: ep.ref.cluster,
      env: app?.env ?? null,
      data: {
        object: refId(ep.ref),
        kind: ep.kind,
        managers: ep.managers,
        fields: ep.fields,
        startedAt: ep.since,
        lastWriteAt: ep.lastWriteAt,
        endedAt: new Date(endedAt).toISOString(),
        durationMs: Math.max(0, endedAt - Date.parse(ep.since)),
        writes: ep.writes,
        ...(how === 'deleted' ? { objectDeleted: true } : {}),
        resourceVersion: (obj.metadata as { resourceVersion?: string } | undefined)?.resourceVersion ?? null,
      },
    });
    this.emit('changed', ep.appId);
  }

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }
}

/** Fields of an episode: the first `from` of each path is kept (Git's value), `to` follows the latest write. */
function mergeFields(have: DriftField[], writes: DriftWrite[], secret: boolean): DriftField[] {
  const byPath = new Map(have.map((f) => [f.path, { ...f }]));
  for (const w of writes)
    for (const f of w.fields) {
      const mask = (v: unknown) => (secret && v !== undefined ? maskValue(v) : v);
      const cur = byPath.get(f.path);
      if (cur) {
        if (f.to !== undefined) cur.to = mask(f.to);
        else delete cur.to;
      } else
        byPath.set(f.path, {
          path: f.path,
          ...(f.from !== undefined ? { from: mask(f.from) } : {}),
          ...(f.to !== undefined ? { to: mask(f.to) } : {}),
        });
    }
  return [...byPath.values()].sort((a, b) => a.path.localeCompare(b.path));
}

/**
 * Who ended an episode: the controller when it owns a drifted field again (its apply took it back), else the
 * newest writer of the object (someone removed the hand-made fields), else `unknown`.
 */
function endedBy(o: Obj, owners: OwnersByPath, fields: DriftField[], controller: readonly string[]): string {
  const mine = fields
    .flatMap((f) => ownersOfPath(owners, f.path))
    .find((w) => controller.includes(w.manager) || isGitOpsControllerManager(w.manager));
  if (mine) return mine.manager;
  const last = lastManager(o);
  return last && last.subresource !== 'status' ? last.manager : 'unknown';
}

/** The time of the controller's last apply of this object (its managedFields entry), if known. */
function controllerApplyTime(o: Obj, managers: readonly string[]): string | undefined {
  const mf = (o.metadata as { managedFields?: Array<{ manager?: string; time?: string }> } | undefined)?.managedFields;
  return (mf ?? [])
    .filter((e) => e.manager && managers.includes(e.manager) && e.time)
    .map((e) => e.time as string)
    .sort()
    .at(-1);
}
