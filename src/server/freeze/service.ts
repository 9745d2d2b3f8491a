// Incident freezes: on-call pauses an app (or every app of an environment on a cluster) with a reason and an
// expiry, sees the live changes made meanwhile, and at the end hands each one back to Git (write-back on a
// branch / pull request) or lets Git win; then the prior automation is restored exactly.
//
// The pattern of every action: validate → evidence intent (fail closed) → the store (claims: one freeze per
// app, across replicas) → the cluster (patches carry the resourceVersion) → outcome evidence. Expiry is the
// BFF's: a timer per freeze and a check at start (a freeze that expired while the console was down ends
// then, with evidence saying so). Out-of-band changes of a frozen app object (resumed by hand, annotations
// dropped, deleted) are observed from the informers and recorded once each. No Fastify types here.
import { randomUUID } from 'node:crypto';
import type { App } from '../../domain/app.ts';
import {
  cannotFreeze,
  freezePatch,
  freezeRequestErrors,
  frozenState,
  FROZEN_STATE_TEXT,
  liveChangesSince,
  priorOf,
  restorePatch,
  FREEZE_DEFAULT_MINUTES,
  FREEZE_MAX_MINUTES,
  type FreezeRequest,
  type LiveChange,
  type Patch,
} from '../../domain/freeze.ts';
import { canonicalJson } from '../../domain/evidence.ts';
import type { FieldChange } from '../../domain/field-diff.ts';
import { controllerManagersOf, isGitOpsControllerManager } from '../../domain/field-managers.ts';
import { refId, type ObjectRef } from '../../domain/refs.ts';
import type { EvidenceRecorder } from '../evidence/recorder.ts';
import { clusterHttpError, HttpError } from '../http/errors.ts';
import type { ClusterConnection } from '../kube/connection.ts';
import { KINDS } from '../kube/kinds.ts';
import type { FreezeDoc, FreezeRow, FreezeStore, FreezeTarget } from './store.ts';

type Obj = Record<string, unknown>;

export interface FreezeActor {
  name: string;
  /** whether this person may freeze / end on a cluster + env (the session's grants) */
  may(cluster: string, env: string): boolean;
  /** records a denial (403) as evidence */
  denied?(cluster: string, env: string, app: string | undefined, reason: string): void;
}

export interface WriteBackOutcome {
  branch: string;
  commit: string | null;
  placements: unknown[];
  pullRequest?: { number: number; url: string } | undefined;
  forgeError?: string | undefined;
}

export interface FreezeServiceDeps {
  recorder: EvidenceRecorder;
  store: FreezeStore;
  apps: {
    get(id: string): App | undefined;
    list(): App[];
    raw(id: string): Obj | undefined;
  };
  /** the connection an action goes out on: the user's (impersonated) or, for expiry, the console's own */
  conn(cluster: string, user?: FreezeActor): ClusterConnection;
  /** the app's field diff (Git vs live, with field managers); throws when it cannot be computed */
  diff(a: App): Promise<{
    state: 'ok' | 'unknown';
    error?: string | undefined;
    objects: Array<{ ref: ObjectRef; changes: FieldChange[] }>;
  }>;
  /** commits live values to the app's overlay on a new branch (and opens a PR where there is a forge) */
  writeBack?(
    a: App,
    req: { branch: string; message: string; author: string; changes: LiveChange[] },
  ): Promise<WriteBackOutcome>;
  now?(): number;
  log?: { warn(o: unknown, m?: string): void; error(o: unknown, m?: string): void };
}

export interface FreezeView extends FreezeRow {
  /** whether the freeze still holds its apps */
  active: boolean;
}

/** A live change and the frozen app whose diff showed it. */
export type AppChange = LiveChange & { appId: string };

export interface EndDecision {
  change: string;
  action: 'write-back' | 'git-wins';
}

const MAX_TIMER_MS = 2 ** 31 - 1;
/** how long observe() trusts its copy of the freeze claims */
const CLAIMS_TTL_MS = 3_000;
/** an end (status `ending`) unchanged this long belongs to a process that died */
const ENDING_STALE_MS = 90_000;
/** app objects read and patched at once when a whole environment is frozen */
const CONCURRENCY = 8;

/**
 * `fn` over `items`, at most `limit` at a time, results in order. The first failure is thrown once every
 * call in flight has settled (so callers can undo exactly what was done).
 */
async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  let failed: { error: unknown } | undefined;
  const worker = async () => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        out[i] = await fn(items[i] as T, i);
      } catch (error) {
        failed ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failed) throw failed.error;
  return out;
}

function objectPath(t: Pick<FreezeTarget, 'kind' | 'namespace' | 'name'>): string {
  const k = KINDS[t.kind];
  return `/apis/${k.group}/${k.version}/namespaces/${encodeURIComponent(t.namespace)}/${k.plural}/${encodeURIComponent(t.name)}`;
}

export class FreezeService {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** ends of dead processes being resumed here */
  private readonly resuming = new Set<string>();
  private readonly running = new Set<Promise<unknown>>();
  private closed = false;

  constructor(private readonly deps: FreezeServiceDeps) {}

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.running.add(p);
    void p.finally(() => this.running.delete(p)).catch(() => undefined);
    return p;
  }

  /** Waits for expiries and out-of-band checks in flight (shutdown, tests). */
  async settled(): Promise<void> {
    this.closed = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    await Promise.allSettled([...this.running]);
  }

  // ---- start ------------------------------------------------------------------------------------------

  /** At start: freezes that expired while the console was down end now; the others get their timers. */
  async recover(): Promise<void> {
    for (const f of await this.deps.store.list({ active: true })) {
      if (f.status === 'ending') {
        await this.resumeIfStale(f);
        continue;
      }
      if (Date.parse(f.expiresAt) <= this.now())
        await this.track(this.expire(f.id, true)).catch((e: unknown) =>
          this.deps.log?.error({ err: String(e), freeze: f.id }, 'freeze: expiry at start failed'),
        );
      else this.arm(f);
    }
  }

  /**
   * Ends that a dead process left half-done (checked at start and periodically): another replica may be
   * ending it right now (a rolling update starts Pods while others work), so only an end idle for
   * ENDING_STALE_MS is taken over; it finishes restoring (the decisions were recorded before acting).
   */
  async resumeStale(): Promise<void> {
    for (const f of await this.deps.store.list({ active: true }))
      if (f.status === 'ending') await this.resumeIfStale(f);
  }

  private async resumeIfStale(f: FreezeRow): Promise<void> {
    if (this.now() - Date.parse(f.updatedAt) < ENDING_STALE_MS || this.resuming.has(f.id)) return;
    this.resuming.add(f.id);
    try {
      await this.track(this.finish(f, undefined, 'resumed after a restart', f.doc.decisions ?? [], true));
    } catch (e) {
      this.deps.log?.error({ err: String(e), freeze: f.id }, 'freeze: resuming an end failed');
    } finally {
      this.resuming.delete(f.id);
    }
  }

  /** Another replica changed a freeze: its expiry timer here follows the store (armed, moved or dropped). */
  async rearm(id: string): Promise<void> {
    const f = await this.deps.store.get(id);
    if (f && f.status === 'active') this.arm(f);
    else {
      clearTimeout(this.timers.get(id));
      this.timers.delete(id);
    }
  }

  /** Every active freeze's timer from the store (after this replica missed notifications). */
  async rearmAll(): Promise<void> {
    for (const f of await this.deps.store.list({ active: true })) if (f.status === 'active') this.arm(f);
  }

  private arm(f: Pick<FreezeRow, 'id' | 'expiresAt'>): void {
    clearTimeout(this.timers.get(f.id));
    if (this.closed) return;
    const ms = Math.max(0, Date.parse(f.expiresAt) - this.now());
    const t = setTimeout(
      () => {
        this.timers.delete(f.id);
        if (Date.parse(f.expiresAt) - this.now() > 1000) return this.arm(f);
        void this.track(this.expire(f.id, false)).catch((e: unknown) =>
          this.deps.log?.error({ err: String(e), freeze: f.id }, 'freeze: expiry failed'),
        );
      },
      Math.min(ms, MAX_TIMER_MS),
    );
    t.unref();
    this.timers.set(f.id, t);
  }

  // ---- create -----------------------------------------------------------------------------------------

  async create(
    user: FreezeActor,
    input: FreezeRequest & { cluster: string; env?: string | undefined; app?: string | undefined },
  ): Promise<FreezeView> {
    const errors = freezeRequestErrors(input);
    if (!input.app && !input.env) errors.push({ field: 'app', message: 'name an app or an environment' });
    if (errors.length) throw new HttpError(400, 'BadRequest', errors.map((e) => `${e.field}: ${e.message}`).join('; '));
    const apps = this.targetsOf(input);
    for (const a of apps)
      if (!user.may(a.cluster, a.env)) {
        const why = `You need the oncall role on ${a.cluster}/${a.env} to freeze deployments`;
        user.denied?.(a.cluster, a.env, a.id, why);
        throw new HttpError(403, 'Forbidden', why);
      }
    // read each app object now: its prior automation is what the end restores
    const conn = this.deps.conn(input.cluster, user);
    const read: Array<{ a: App; obj: Obj }> = [];
    const refused: string[] = [];
    // the informers' copy (every patch carries its resourceVersion, and a 409 reads the object again);
    // a GET only for what the cache does not hold
    const objects = await mapLimit(
      apps,
      CONCURRENCY,
      async (a) => this.deps.apps.raw(a.id) ?? this.readObject(conn, a),
    );
    for (const [i, a] of apps.entries()) {
      let obj = objects[i] as Obj;
      let why = cannotFreeze(a.controller, obj);
      // a refusal is confirmed on the object itself, not on a copy that may lag behind
      if (why) why = cannotFreeze(a.controller, (obj = await this.readObject(conn, a)));
      if (why) refused.push(`${a.name}: ${why}`);
      else read.push({ a, obj });
    }
    if (!read.length || (input.app && refused.length))
      throw new HttpError(409, 'Conflict', `cannot freeze ${refused.join('; ')}`);
    const id = `frz-${randomUUID().slice(0, 8)}`;
    const minutes = input.minutes ?? FREEZE_DEFAULT_MINUTES;
    const createdAt = new Date(this.now()).toISOString();
    const expiresAt = new Date(this.now() + minutes * 60_000).toISOString();
    const reason = input.reason.trim();
    const targets: FreezeTarget[] = read.map(({ a, obj }) => ({
      appId: a.id,
      kind: a.kind,
      namespace: a.namespace,
      name: a.name,
      controller: a.controller,
      env: a.env,
      prior: priorOf(a.controller, obj),
      applied: false,
    }));
    const row = {
      id,
      cluster: input.cluster,
      env: input.env ?? null,
      app: input.app ?? null,
      status: 'active' as const,
      reason,
      incident: input.incident || null,
      createdBy: user.name,
      createdAt,
      expiresAt,
      doc: { targets, extensions: [], startedAt: createdAt } satisfies FreezeDoc,
    };
    const scopeEnv = input.env ?? read[0]?.a.env ?? null;
    await this.deps.recorder.act(
      {
        time: createdAt,
        type: 'freeze.started',
        actor: user.name,
        app: input.app ?? null,
        cluster: input.cluster,
        env: scopeEnv,
        data: {
          freezeId: id,
          reason,
          incident: input.incident || null,
          minutes,
          until: expiresAt,
          apps: targets.map((t) => t.appId),
          prior: Object.fromEntries(targets.map((t) => [t.appId, t.prior])),
          ...(refused.length ? { notFrozen: refused } : {}),
        },
      },
      async () => {
        const claimed = await this.deps.store.create(row);
        this.claimsCache = undefined;
        if (!claimed.ok)
          throw new HttpError(
            409,
            'Conflict',
            `already frozen: ${claimed.taken.map((t) => `${t.app} by ${t.freezeId}`).join(', ')} — extend that freeze instead`,
          );
        const meta = { id, by: user.name, reason, until: expiresAt, incident: input.incident || undefined };
        try {
          await mapLimit(targets, CONCURRENCY, async (t, i) => {
            const after = await this.patchUnchanged(conn, t, read[i]?.obj as Obj, (rv) =>
              freezePatch(t.prior, meta, rv),
            );
            if (t.prior.controller === 'argocd' && frozenState('argocd', after, id) === 'resumed-directly') {
              // an Argo CD CRD without `automated.enabled` pruned the flag: pause by removing `automated`
              t.prior = { ...t.prior, shape: 'removed' };
              const rv2 = String((after.metadata as Obj | undefined)?.resourceVersion ?? '');
              await this.patch(conn, t, freezePatch(t.prior, meta, rv2), `cannot freeze ${t.name}`);
            }
            t.applied = true;
          });
        } catch (e) {
          // changes nothing: put back what was frozen, release the claims
          for (const t of targets.filter((x) => x.applied)) {
            const live = await this.readObject(conn, t).catch(() => undefined);
            if (live)
              await this.patch(conn, t, restorePatch(t.prior, live), `cannot undo the freeze of ${t.name}`).catch(
                (err: unknown) => this.deps.log?.error({ err: String(err), app: t.appId }, 'freeze: undo failed'),
              );
          }
          await this.deps.store.update(id, 'active', { doc: { ...row.doc, targets } });
          await this.deps.store.transition(id, 'active', 'failed', { by: user.name, reason: String(e) });
          throw e;
        }
        const startedAt = new Date(this.now()).toISOString();
        await this.deps.store.update(id, 'active', { doc: { ...row.doc, targets, startedAt } });
      },
      (o) => (o.ok ? { apps: targets.length } : {}),
    );
    this.arm({ id, expiresAt });
    return this.view(id);
  }

  private targetsOf(input: { cluster: string; env?: string | undefined; app?: string | undefined }): App[] {
    if (input.app) {
      const a = this.deps.apps.get(input.app);
      if (!a || a.cluster !== input.cluster) throw new HttpError(404, 'NotFound', `no app ${input.app}`);
      return [a];
    }
    const apps = this.deps.apps.list().filter((a) => a.cluster === input.cluster && a.env === input.env);
    if (!apps.length) throw new HttpError(404, 'NotFound', `no apps in ${input.cluster}/${String(input.env)}`);
    return apps;
  }

  private async readObject(conn: ClusterConnection, t: Pick<FreezeTarget, 'kind' | 'namespace' | 'name'>) {
    try {
      return await conn.json<Obj>('GET', objectPath(t), { timeoutMs: 10_000 });
    } catch (e) {
      throw clusterHttpError(e, `cannot read ${t.kind} ${t.name}`, '');
    }
  }

  private async patch(conn: ClusterConnection, t: FreezeTarget, p: Patch, what: string): Promise<Obj> {
    try {
      return await conn.json<Obj>('PATCH', `${objectPath(t)}?fieldManager=gitops-console`, {
        body: JSON.stringify(p.body),
        contentType: p.contentType,
        timeoutMs: 10_000,
      });
    } catch (e) {
      throw clusterHttpError(e, what, '');
    }
  }

  /**
   * The freeze's patch with the object's resourceVersion as precondition. Controllers write status all the
   * time (a new resourceVersion each): on a 409 the object is read again and, when what the freeze stored of
   * it (its prior automation) is unchanged, the patch is retried with the new version; when someone changed
   * the automation meanwhile, the conflict stands.
   */
  private async patchUnchanged(conn: ClusterConnection, t: FreezeTarget, obj: Obj, patch: (rv: string) => Patch) {
    let current = obj;
    for (let attempt = 1; ; attempt++) {
      const rv = String((current.metadata as Obj | undefined)?.resourceVersion ?? '');
      try {
        return await this.patch(conn, t, patch(rv), `cannot freeze ${t.name}`);
      } catch (e) {
        if (!(e instanceof HttpError && e.status === 409) || attempt >= 5) throw e;
        current = await this.readObject(conn, t);
        if (
          canonicalJson(priorOf(t.controller, current)) !== canonicalJson(t.prior) ||
          cannotFreeze(t.controller, current)
        )
          throw e;
      }
    }
  }

  // ---- read -------------------------------------------------------------------------------------------

  async view(id: string): Promise<FreezeView> {
    const f = await this.deps.store.get(id);
    if (!f) throw new HttpError(404, 'NotFound', `no freeze ${id}`);
    return { ...f, active: f.status === 'active' || f.status === 'ending' };
  }

  async list(active: boolean): Promise<FreezeView[]> {
    return (await this.deps.store.list({ active })).map((f) => ({
      ...f,
      active: f.status === 'active' || f.status === 'ending',
    }));
  }

  /** The live changes made since the freeze began, on every app it holds. Unknown diffs are an error, never "none". */
  async changes(id: string): Promise<{ changes: AppChange[]; unknown: Array<{ appId: string; reason: string }> }> {
    const f = await this.view(id);
    const changes: AppChange[] = [];
    const unknown: Array<{ appId: string; reason: string }> = [];
    for (const t of f.doc.targets.filter((x) => x.applied)) {
      const a = this.deps.apps.get(t.appId);
      if (!a) {
        unknown.push({ appId: t.appId, reason: 'the app object is gone' });
        continue;
      }
      try {
        const d = await this.deps.diff(a);
        if (d.state !== 'ok') {
          unknown.push({ appId: t.appId, reason: d.error ?? 'the diff could not be computed' });
          continue;
        }
        const mgrs = controllerManagersOf(a.controller);
        changes.push(
          ...liveChangesSince(
            d.objects.map((o) => ({ ...o, id: refId(o.ref) })),
            f.doc.startedAt,
            (m) => mgrs.includes(m) || isGitOpsControllerManager(m),
          ).map((c) => ({ ...c, appId: a.id })),
        );
      } catch (e) {
        unknown.push({ appId: t.appId, reason: e instanceof HttpError ? e.message : 'the diff failed' });
      }
    }
    return { changes, unknown };
  }

  // ---- extend -----------------------------------------------------------------------------------------

  async extend(id: string, user: FreezeActor, body: { minutes: number; reason: string }): Promise<FreezeView> {
    const errors = freezeRequestErrors({ reason: body.reason, minutes: body.minutes });
    if (errors.length) throw new HttpError(400, 'BadRequest', errors.map((e) => `${e.field}: ${e.message}`).join('; '));
    const f = await this.view(id);
    this.mustMay(user, f);
    if (f.status !== 'active')
      throw new HttpError(409, 'Conflict', `freeze ${id} is ${f.status}: it cannot be extended`);
    const from = f.expiresAt;
    const to = new Date(this.now() + body.minutes * 60_000).toISOString();
    if (Date.parse(to) - Date.parse(f.createdAt) > FREEZE_MAX_MINUTES * 60_000 * 7)
      throw new HttpError(400, 'BadRequest', 'minutes: a freeze cannot be extended past a week in total');
    const at = new Date(this.now()).toISOString();
    await this.deps.recorder.act(
      {
        time: at,
        type: 'freeze.extended',
        actor: user.name,
        app: f.app,
        cluster: f.cluster,
        env: f.env ?? f.doc.targets[0]?.env ?? null,
        data: { freezeId: id, reason: body.reason.trim(), from, until: to },
      },
      async () => {
        const doc: FreezeDoc = {
          ...f.doc,
          extensions: [...f.doc.extensions, { at, by: user.name, reason: body.reason.trim(), from, to }],
        };
        if (!(await this.deps.store.update(id, 'active', { doc, expiresAt: to })))
          throw new HttpError(409, 'Conflict', `freeze ${id} ended meanwhile`);
        // the annotation says the new time too (best effort: the store is the authority)
        const conn = this.deps.conn(f.cluster, user);
        for (const t of f.doc.targets.filter((x) => x.applied))
          await this.patch(
            conn,
            t,
            {
              contentType: 'application/merge-patch+json',
              body: { metadata: { annotations: { 'gitops-console.dev/frozen-until': to } } },
            },
            `cannot annotate ${t.name}`,
          ).catch(() => undefined);
      },
    );
    this.arm({ id, expiresAt: to });
    return this.view(id);
  }

  private mustMay(user: FreezeActor, f: FreezeRow): void {
    for (const t of f.doc.targets)
      if (!user.may(f.cluster, t.env)) {
        const why = `You need the oncall role on ${f.cluster}/${t.env} to freeze or unfreeze deployments`;
        user.denied?.(f.cluster, t.env, t.appId, why);
        throw new HttpError(403, 'Forbidden', why);
      }
  }

  // ---- end --------------------------------------------------------------------------------------------

  /** Ends a freeze: each listed change written back to Git or left to Git, then the prior automation restored. */
  async end(id: string, user: FreezeActor, decisions: EndDecision[]): Promise<FreezeView> {
    const f = await this.view(id);
    this.mustMay(user, f);
    if (f.status !== 'active') throw new HttpError(409, 'Conflict', `freeze ${id} is ${f.status}`);
    const seen = new Set<string>();
    for (const d of decisions) {
      if (seen.has(d.change)) throw new HttpError(400, 'BadRequest', `decisions: ${d.change} is named twice`);
      seen.add(d.change);
    }
    const wanted = decisions.filter((d) => d.action === 'write-back');
    let changes: AppChange[] = [];
    if (wanted.length) {
      const c = await this.changes(id);
      changes = c.changes;
      const unknownIds = wanted.filter((d) => !changes.some((x) => x.id === d.change)).map((d) => d.change);
      if (unknownIds.length)
        throw new HttpError(
          400,
          'BadRequest',
          `decisions: no live change ${unknownIds.join(', ')} (the list changed? reload it)`,
        );
      if (!this.deps.writeBack) throw new HttpError(501, 'NotImplemented', 'write-back to Git is not configured');
    }
    if (!(await this.deps.store.transition(id, 'active', 'ending')))
      throw new HttpError(409, 'Conflict', `freeze ${id} is already ending`);
    try {
      await this.deps.recorder.act(
        {
          time: new Date(this.now()).toISOString(),
          type: 'freeze.ended',
          actor: user.name,
          app: f.app,
          cluster: f.cluster,
          env: f.env ?? f.doc.targets[0]?.env ?? null,
          data: { freezeId: id, how: 'unfrozen', decisions },
        },
        async () => {
          await this.deps.store.update(id, 'ending', { doc: { ...f.doc, decisions } });
          const doc = await this.writeBackAll(f, user.name, wanted, changes);
          await this.finish({ ...f, doc: { ...doc, decisions } }, user, 'unfrozen', decisions, false);
        },
      );
    } catch (e) {
      // nothing restored: the freeze stays (the live changes are not lost to a revert)
      if ((await this.deps.store.get(id))?.status === 'ending')
        await this.deps.store.transition(id, 'ending', 'active');
      throw e;
    }
    clearTimeout(this.timers.get(id));
    this.timers.delete(id);
    return this.view(id);
  }

  private async writeBackAll(
    f: FreezeRow,
    actor: string,
    wanted: EndDecision[],
    changes: AppChange[],
  ): Promise<FreezeDoc> {
    const doc: FreezeDoc = { ...f.doc, writeBack: [...(f.doc.writeBack ?? [])] };
    const byApp = new Map<string, LiveChange[]>();
    for (const d of wanted) {
      const c = changes.find((x) => x.id === d.change) as AppChange;
      byApp.set(c.appId, [...(byApp.get(c.appId) ?? []), c]);
    }
    for (const [appId, list] of byApp) {
      const a = this.deps.apps.get(appId);
      if (!a) throw new HttpError(409, 'Conflict', `${appId} is gone: nothing can be written back for it`);
      const branch = `freeze/${f.id}${byApp.size > 1 ? `-${a.name}` : ''}`;
      const message = [
        `Write back live changes of freeze ${f.id} (${a.name}, ${a.env})`,
        '',
        `Reason: ${f.reason}`,
        ...(f.incident ? [`Incident: ${f.incident}`] : []),
        '',
        ...list.map(
          (c) =>
            `- ${c.ref.kind}/${c.ref.name} ${c.path}: ${JSON.stringify(c.git)} -> ${JSON.stringify(c.live)} (by ${c.manager})`,
        ),
        '',
        `Freeze-Id: ${f.id}`,
        `Written-Back-By: ${actor}`,
      ].join('\n');
      const out = await this.deps.recorder.act(
        {
          time: new Date(this.now()).toISOString(),
          type: 'freeze.write-back',
          actor,
          app: a.id,
          cluster: a.cluster,
          env: a.env,
          data: {
            freezeId: f.id,
            branch,
            repo: a.source.url ?? null,
            path: a.source.path ?? null,
            changes: list.map((c) => ({ change: c.id, path: c.path, git: c.git, live: c.live, manager: c.manager })),
          },
        },
        async () => {
          try {
            return await (this.deps.writeBack as NonNullable<FreezeServiceDeps['writeBack']>)(a, {
              branch,
              message,
              author: actor,
              changes: list,
            });
          } catch (e) {
            throw new HttpError(
              502,
              'WriteBackFailed',
              `writing back to Git failed, nothing was restored (the freeze holds): ${e instanceof Error ? e.message : String(e)}`,
            );
          }
        },
        (o) =>
          o.ok
            ? {
                branch: o.value.branch,
                commit: o.value.commit,
                pullRequest: o.value.pullRequest ?? null,
                placements: o.value.placements,
                ...(o.value.forgeError ? { forgeError: o.value.forgeError } : {}),
              }
            : {},
      );
      doc.writeBack?.push({ appId, ...out });
      await this.deps.store.update(f.id, 'ending', { doc });
    }
    return doc;
  }

  /** Restores every target's prior automation and ends the freeze (status `ending` → `ended`). */
  private async finish(
    f: FreezeRow,
    who: FreezeActor | undefined,
    how: string,
    decisions: EndDecision[],
    resumed: boolean,
  ): Promise<void> {
    const doc: FreezeDoc = { ...f.doc, targets: f.doc.targets.map((t) => ({ ...t })) };
    const failures: string[] = [];
    const actor = who?.name ?? 'console';
    const conn = this.deps.conn(f.cluster, who);
    await mapLimit(
      doc.targets.filter((x) => x.applied && !x.restored?.ok),
      CONCURRENCY,
      async (t) => {
        try {
          await this.deps.recorder.act(
            {
              time: new Date(this.now()).toISOString(),
              type: 'freeze.restored',
              actor,
              app: t.appId,
              cluster: f.cluster,
              env: t.env,
              data: { freezeId: f.id, restore: t.prior, how, ...(resumed ? { resumedAfterRestart: true } : {}) },
            },
            async () => {
              // the informers' copy first; when the patch does not fit it (an annotation already gone), the object
              // is read and the patch computed again
              const cached = this.deps.apps.raw(t.appId);
              if (cached)
                try {
                  await this.patch(conn, t, restorePatch(t.prior, cached), `cannot restore ${t.name}`);
                  return 'restored';
                } catch (e) {
                  if (!(e instanceof HttpError) || ![404, 409, 422].includes(e.status)) throw e;
                }
              let live: Obj;
              try {
                live = await this.readObject(conn, t);
              } catch (e) {
                if (e instanceof HttpError && e.status === 404) return 'gone';
                throw e;
              }
              await this.patch(conn, t, restorePatch(t.prior, live), `cannot restore ${t.name}`);
              return 'restored';
            },
            (o) => (o.ok ? { result: o.value } : {}),
          );
          t.restored = { at: new Date(this.now()).toISOString(), ok: true };
        } catch (e) {
          const msg = e instanceof HttpError ? e.message : String(e);
          t.restored = { at: new Date(this.now()).toISOString(), ok: false, detail: msg };
          failures.push(`${t.name}: ${msg}`);
        }
      },
    );
    await this.deps.store.update(f.id, 'ending', { doc: { ...doc, decisions } });
    if (failures.length)
      throw new HttpError(
        502,
        'RestoreFailed',
        `the prior automation could not be restored on ${failures.join('; ')}; the freeze stays ending — try again`,
      );
    await this.deps.store.transition(f.id, 'ending', 'ended', { by: actor, reason: how });
    this.claimsCache = undefined;
  }

  /** The BFF's expiry: Git wins for every live change (written back by no one), the automation is restored. */
  async expire(id: string, atStart: boolean): Promise<void> {
    const f = await this.deps.store.get(id);
    if (!f || f.status !== 'active') return;
    // extended meanwhile (maybe through another replica): the store's expiry is the one that counts
    if (Date.parse(f.expiresAt) - this.now() > 1000) return this.arm(f);
    // only the expiry read here: an extension committed since (any replica) keeps the freeze
    if (!(await this.deps.store.transition(id, 'active', 'ending', undefined, { expect: { expiresAt: f.expiresAt } })))
      return void this.rearm(id).catch(() => undefined);
    try {
      await this.deps.recorder.act(
        {
          time: new Date(this.now()).toISOString(),
          type: 'freeze.expired',
          actor: 'console',
          app: f.app,
          cluster: f.cluster,
          env: f.env ?? f.doc.targets[0]?.env ?? null,
          data: {
            freezeId: id,
            expiresAt: f.expiresAt,
            ...(atStart ? { expiredWhileConsoleWasDown: true } : {}),
            liveChanges: 'Git wins: the controller reverts them',
          },
        },
        async () => this.finish(f, undefined, atStart ? 'expired while the console was down' : 'expired', [], false),
      );
    } catch (e) {
      // retried a minute later, by whichever replica's timer fires first (the retry time is the stored
      // expiry, so no replica retries at once): an expired freeze must not hold forever
      const retryAt = new Date(this.now() + 60_000).toISOString();
      if ((await this.deps.store.get(id))?.status === 'ending')
        await this.deps.store.transition(id, 'ending', 'active', undefined, { expiresAt: retryAt });
      this.arm({ id, expiresAt: retryAt });
      throw e;
    }
  }

  /**
   * The claims, read from the store at most every few seconds: every app object change comes through
   * observe(), and almost none belongs to a frozen app (no query per informer event). A freeze made here
   * drops the copy at once; one made by another replica is seen within CLAIMS_TTL_MS.
   */
  private claimsCache: { at: number; claims: Promise<Map<string, string> | undefined> } | undefined;
  private claimed(): Promise<Map<string, string> | undefined> {
    const now = this.now();
    if (!this.claimsCache || now - this.claimsCache.at > CLAIMS_TTL_MS)
      this.claimsCache = { at: now, claims: this.deps.store.claims().catch(() => undefined) };
    return this.claimsCache.claims;
  }

  // ---- out of band ------------------------------------------------------------------------------------

  /**
   * Called for every app object change (catalog `app` events): a frozen app resumed directly, its freeze
   * annotations dropped, or the app deleted, is recorded once per state and shown on the freeze.
   */
  async observe(appId: string, deleted: boolean): Promise<void> {
    const freezeId = (await this.claimed())?.get(appId);
    if (!freezeId) return;
    const f = await this.deps.store.get(freezeId);
    if (!f || f.status !== 'active') return;
    const t = f.doc.targets.find((x) => x.appId === appId);
    if (!t?.applied) return;
    const obj = deleted ? undefined : this.deps.apps.raw(appId);
    if (!deleted && !obj) return;
    const state = deleted ? 'app-deleted' : frozenState(t.controller, obj as Obj, f.id);
    if (state === 'frozen') return;
    if (t.interference?.state === state) return;
    const at = new Date(this.now()).toISOString();
    t.interference = { state, at, message: FROZEN_STATE_TEXT[state] };
    await this.deps.store.update(f.id, 'active', { doc: f.doc });
    this.deps.recorder.observe({
      time: at,
      type: 'freeze.interfered',
      actor: deleted ? 'unknown' : lastWriter(obj as Obj),
      app: appId,
      cluster: f.cluster,
      env: t.env,
      data: { freezeId: f.id, state, message: FROZEN_STATE_TEXT[state] },
    });
  }
}

/** The field manager of the app object's newest managedFields entry (who resumed it). */
function lastWriter(o: Obj): string {
  const mf = (o.metadata as Obj | undefined)?.managedFields;
  if (!Array.isArray(mf)) return 'unknown';
  const newest = [...(mf as Obj[])].sort((a, b) => String(b.time ?? '').localeCompare(String(a.time ?? '')))[0];
  return typeof newest?.manager === 'string' ? newest.manager : 'unknown';
}
