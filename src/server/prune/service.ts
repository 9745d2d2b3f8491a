// Prune previews approved by a second person, executed by the BFF in bounded batches.
//
// Preview: pin the app's source revision and render it with the controller's renderer (the diff's), take
// the controller's inventory (app.inventory plus the live objects that carry its tracking labels: a Flux
// Kustomization with `prune: false` drops stale objects from its inventory but leaves them live), read the
// candidates live and what their deletion cascades to, plan (domain/prune.ts), and store the plan with a
// snapshot hash over the revision and each candidate's uid and resourceVersion. Unknown is never empty: a
// failed render or a failed read gives `unknown` and nothing to approve.
// Approval: a reviewer who is not the requester (another identity, and not the same person through another
// provider); `needs-override` needs two approvers and a typed confirmation; an approval is void when the
// preview expired or the snapshot no longer matches the live state.
// Execution: exactly once (a row transition in the store), batches with DELETE preconditions (uid +
// resourceVersion), stop on the first failure or a health regression; an intent journal in the store says
// after a crash what was and was not deleted. Evidence before each action (fail closed) and after it.
// Who deletes: the console itself when the controller does not prune (Flux `prune: false`: stale objects leave
// its inventory and stay live); when the controller prunes (Flux `prune: true`, Argo CD automated prune), the
// console only stamps its approval on each approved object (a merge patch with the object's resourceVersion as
// precondition) and the controller's own prune deletes them: the admission policy in
// deploy/prune-admission-policy.yaml denies the controllers every other deletion in governed namespaces. An Argo
// CD app with the sync option `Prune=confirm` also gets `argocd.argoproj.io/deletion-approved` after that.
// No Fastify types here.
import { createHash, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { can, whyNot } from '../../domain/access.ts';
import type { App, HealthStatus } from '../../domain/app.ts';
import {
  approvalStamp,
  ARGO_DELETION_APPROVED,
  DEFAULT_PRUNE_LIMITS,
  planPrune,
  PRUNE_APPROVED_ANNOTATION,
  pruneKey,
  type PruneLimits,
  type PruneState,
} from '../../domain/prune.ts';
import { refId, type ObjectRef } from '../../domain/refs.ts';
import { refOf } from '../../domain/tree.ts';
import type { Principal } from '../auth/sessions.ts';
import type { EvidenceRecorder } from '../evidence/recorder.ts';
import { HttpError } from '../http/errors.ts';
import type { ClusterConnection } from '../kube/connection.ts';
import { Discovery } from '../kube/discovery.ts';
import type { KubeObject } from '../kube/informer.ts';
import type { Identity, JournalEntry, PreviewRow, PreviewStatus, PruneStore } from './store.ts';
import { trackerOf } from '../tree/app-tree.ts';
import type { ObjectIndex } from '../kube/object-index.ts';
import type { RenderResult } from '../diff/render.ts';

type Obj = Record<string, unknown>;
export type PropagationPolicy = 'Background' | 'Foreground' | 'Orphan';

export interface PreviewCandidate {
  ref: ObjectRef;
  id: string;
  /** null when the object is not live (nothing to delete) */
  uid: string | null;
  resourceVersion: string | null;
  protectedBy: string | null;
  cascades: ObjectRef[];
  finalizers: string[];
  createdAt: string | null;
  /** the field manager that wrote the object last (managedFields) */
  lastWriter: string | null;
  deletable: boolean;
}

/** What the store keeps of a preview besides its indexed columns. */
export interface PreviewDoc {
  controller: 'flux' | 'argocd';
  revision: string | null;
  renderHash: string | null;
  renderer: string | null;
  planState: PruneState;
  reasons: string[];
  limits: PruneLimits;
  candidates: PreviewCandidate[];
  propagationPolicy: PropagationPolicy;
  batchSize: number;
  /** the text a needs-override approver types */
  confirmation: string | null;
  /**
   * who deletes once approved: the console (the controller does not prune), or the controller's own prune after
   * the console stamped its approval on each object; absent in previews stored before this existed: the console
   */
  deletedBy?: 'console' | 'controller';
}

export type StoredPreview = PreviewRow<PreviewDoc>;

export interface PreviewView {
  preview: StoredPreview;
  journal: JournalEntry[];
  /** whether the asking user may approve it now, and why not */
  viewer: { canApprove: boolean; reason: string | null };
}

export interface PruneServiceOptions {
  limits?: PruneLimits;
  ttlMs?: number;
  batchSize?: number;
  propagationPolicy?: PropagationPolicy;
  /** a journal idle this long belongs to a dead executor (another replica); recovered at start */
  staleExecutionMs?: number;
}

export interface PruneServiceDeps {
  recorder: EvidenceRecorder;
  store: PruneStore<PreviewDoc>;
  index: ObjectIndex;
  /** the app as the console knows it now (health between batches) */
  app(id: string): App | undefined;
  /** the console's own connection to a cluster (it deletes as itself: deploy/rbac.yaml grants `delete`) */
  conn(cluster: string): ClusterConnection;
  /** whether the cluster's informers have listed everything (else the live state is unknown) */
  listed(cluster: string): boolean;
  /** the app's desired state at its source revision (the diff's renderer); throws when it cannot render */
  render(a: App, user: Principal): Promise<RenderResult>;
  /** the cached objects of a namespace (what deleting the Namespace takes with it) */
  inNamespace?(cluster: string, namespace: string): Obj[];
}

const HEALTH_RANK: Record<HealthStatus, number> = {
  Healthy: 0,
  Progressing: 1,
  Suspended: 1,
  Unknown: 2,
  Missing: 3,
  Degraded: 3,
};

/** Who someone is, for "not the requester": the issuer and subject of the identity, and the console's name. */
export function identityOf(p: Principal): Identity {
  // OIDC principals may carry the ID token's issuer and subject; local accounts are issued by the console
  const x = p as Principal & { issuer?: string; subject?: string };
  return {
    issuer: x.issuer ?? (p.source === 'local' ? 'console' : 'oidc'),
    subject: x.subject ?? p.name,
    name: p.name,
  };
}

/**
 * The same person: the same identity, or the same name through another provider (a local account "alice"
 * and the OIDC user "oidc:alice" are treated as one person: refusing a real second person is the safe error).
 */
export function samePerson(a: Identity, b: Identity): boolean {
  const bare = (n: string) => n.toLowerCase().replace(/^[a-z0-9-]*:/, '');
  return (a.issuer === b.issuer && a.subject === b.subject) || bare(a.name) === bare(b.name);
}

export function snapshotHash(revision: string | null, candidates: PreviewCandidate[]): string {
  const lines = candidates
    .map((c) => `${c.id} ${c.uid ?? '-'} ${c.resourceVersion ?? '-'}`)
    .sort()
    .join('\n');
  return createHash('sha256')
    .update(`${revision ?? 'unknown'}\n${lines}`)
    .digest('hex');
}

const meta = (o: Obj) =>
  (o.metadata ?? {}) as {
    uid?: string;
    resourceVersion?: string;
    creationTimestamp?: string;
    managedFields?: Array<{ manager?: string; time?: string }>;
  };

function lastWriter(o: Obj): string | null {
  let best: { manager?: string; time?: string } | undefined;
  for (const m of meta(o).managedFields ?? []) if (!best || (m.time ?? '') >= (best.time ?? '')) best = m;
  return best?.manager ?? null;
}

/** Whether a process of this host still runs (signal 0 only checks). */
function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const apiVersionOf = (r: ObjectRef) => (r.group ? `${r.group}/${r.version}` : r.version);

export class PruneService {
  private readonly discoveries = new Map<string, Discovery>();
  private readonly limits: PruneLimits;
  private readonly ttlMs: number;
  private readonly batchSize: number;
  private readonly propagation: PropagationPolicy;
  /** this process: a restarted replica (same host name) recovers its own interrupted executions at once */
  readonly executor = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  /** executions running in this process (tests and shutdown wait for them) */
  private readonly running = new Map<string, Promise<void>>();

  constructor(
    private readonly deps: PruneServiceDeps,
    private readonly opts: PruneServiceOptions = {},
  ) {
    this.limits = opts.limits ?? DEFAULT_PRUNE_LIMITS;
    this.ttlMs = opts.ttlMs ?? 3_600_000;
    this.batchSize = opts.batchSize ?? 10;
    this.propagation = opts.propagationPolicy ?? 'Background';
  }

  private discovery(cluster: string): Discovery {
    let d = this.discoveries.get(cluster);
    if (!d) this.discoveries.set(cluster, (d = new Discovery(this.deps.conn(cluster))));
    return d;
  }

  /** An object read from the apiserver (not the cache); undefined when it does not exist. */
  private async readLive(r: ObjectRef): Promise<Obj | undefined> {
    const conn = this.deps.conn(r.cluster);
    const path = await this.discovery(r.cluster).path(apiVersionOf(r), r.kind, r.namespace, r.name);
    // Secrets: metadata only (the console never reads Secret data)
    const secret = r.group === '' && r.kind === 'Secret';
    const res = await conn.request('GET', path, {
      timeoutMs: 10_000,
      ...(secret ? { headers: { Accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' } } : {}),
    });
    if (res.status === 404) return undefined;
    if (res.status !== 200) throw conn.httpError(res, `GET ${r.kind} ${r.name}`);
    const o = JSON.parse(res.body) as Obj;
    return secret ? { apiVersion: apiVersionOf(r), kind: r.kind, metadata: o.metadata } : o;
  }

  /** A candidate's live object: the informer cache for watched kinds, else the apiserver. */
  private async live(r: ObjectRef): Promise<Obj | undefined> {
    if (this.deps.index.watches(r.group, r.kind)) return this.deps.index.get(r.cluster, r);
    return this.readLive(r);
  }

  /** What deleting `roots` takes with it, from the cache: owner-reference descendants and a Namespace's contents. */
  private descendants(cluster: string, roots: Obj[]): Obj[] {
    const out = new Map<string, Obj>();
    const queue = [...roots];
    for (let i = 0; i < queue.length; i++) {
      const o = queue[i] as Obj;
      const next: KubeObject[] = [];
      const uid = meta(o).uid;
      if (uid) next.push(...this.deps.index.childrenOf(cluster, uid));
      if (o.kind === 'Namespace' && String(o.apiVersion) === 'v1' && this.deps.inNamespace)
        next.push(...this.deps.inNamespace(cluster, String((o.metadata as { name?: string } | undefined)?.name ?? '')));
      for (const c of next) {
        const key = meta(c).uid ?? JSON.stringify(refOf(cluster, c));
        if (!out.has(key)) {
          out.set(key, c);
          queue.push(c);
        }
      }
    }
    return [...out.values()];
  }

  /** Plans a prune of the app now (no store, no evidence): what a preview stores. */
  async plan(a: App, user: Principal): Promise<PreviewDoc> {
    const base = {
      controller: a.controller,
      limits: this.limits,
      propagationPolicy: this.propagation,
      batchSize: this.batchSize,
      confirmation: null,
      deletedBy: a.automation.prune ? ('controller' as const) : ('console' as const),
    };
    const unknown = (reason: string, render?: RenderResult): PreviewDoc => ({
      ...base,
      revision: render?.revision ?? a.source.revisionObserved ?? null,
      renderHash: render?.renderHash ?? null,
      renderer: render?.renderer ?? null,
      planState: 'unknown',
      reasons: [reason],
      candidates: [],
    });
    let render: RenderResult;
    try {
      render = await this.deps.render(a, user);
    } catch (e) {
      return unknown(`the render failed, so nothing can be planned: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (!this.deps.listed(a.cluster))
      return unknown(
        `cluster ${a.cluster} is not fully listed (informers not synced): the live state is unknown`,
        render,
      );
    // the controller's inventory, plus live objects carrying its tracking labels that the inventory dropped
    const inventory = new Map<string, ObjectRef>();
    for (const r of a.inventory) inventory.set(pruneKey(r), r);
    for (const o of this.deps.index.trackedBy(a.cluster, trackerOf(a))) {
      const r = refOf(a.cluster, o);
      if (!inventory.has(pruneKey(r))) inventory.set(pruneKey(r), r);
    }
    const desired: ObjectRef[] = render.objects.map((o) => refOf(a.cluster, o));
    const desiredKeys = new Set(desired.map(pruneKey));
    const candidates = [...inventory.values()].filter((r) => !desiredKeys.has(pruneKey(r)));
    const liveByKey = new Map<string, Obj>();
    try {
      for (const r of candidates) {
        const o = await this.live(r);
        if (o) liveByKey.set(pruneKey(r), o);
      }
    } catch (e) {
      return unknown(
        `reading the candidates live failed, so nothing can be planned: ${e instanceof Error ? e.message : String(e)}`,
        render,
      );
    }
    const roots = [...liveByKey.values()];
    const plan = planPrune({
      controller: a.controller,
      inventory: [...inventory.values()],
      desired,
      live: [...roots, ...this.descendants(a.cluster, roots)],
      limits: this.limits,
    });
    const out: PreviewCandidate[] = plan.candidates.map((c) => {
      const o = liveByKey.get(pruneKey(c.ref));
      const m = o ? meta(o) : undefined;
      return {
        ref: c.ref,
        id: refId(c.ref),
        uid: m?.uid ?? null,
        resourceVersion: m?.resourceVersion ?? null,
        protectedBy: c.protectedBy,
        cascades: c.cascades,
        finalizers: c.finalizers,
        createdAt: m?.creationTimestamp ?? null,
        lastWriter: o ? lastWriter(o) : null,
        deletable: !c.protectedBy && !!m?.uid && !!m.resourceVersion,
      };
    });
    return {
      ...base,
      confirmation:
        plan.state === 'needs-override' ? `delete ${out.filter((c) => c.deletable).length} objects of ${a.name}` : null,
      revision: render.revision,
      renderHash: render.renderHash,
      renderer: render.renderer,
      planState: plan.state,
      reasons: plan.reasons,
      candidates: out,
    };
  }

  /** POST …/prune-previews: plans, records the request (fail closed) and stores the preview. */
  async create(a: App, user: Principal): Promise<PreviewView> {
    const doc = await this.plan(a, user);
    const now = new Date();
    const id = randomUUID();
    const open = doc.planState === 'ready' || doc.planState === 'needs-override';
    const status: PreviewStatus = open ? 'pending' : 'void';
    const hash = snapshotHash(doc.revision, doc.candidates);
    const requester = identityOf(user);
    await this.deps.recorder.act(
      {
        time: now.toISOString(),
        type: 'prune.requested',
        actor: user.name,
        app: a.id,
        cluster: a.cluster,
        env: a.env,
        data: {
          previewId: id,
          requester,
          revision: doc.revision,
          renderHash: doc.renderHash,
          snapshotHash: hash,
          plan: doc.planState,
          reasons: doc.reasons,
          candidates: doc.candidates.map((c) => ({
            object: c.id,
            uid: c.uid,
            resourceVersion: c.resourceVersion,
            protectedBy: c.protectedBy,
            cascades: c.cascades.length,
          })),
        },
      },
      () =>
        this.deps.store.create({
          id,
          app: a.id,
          cluster: a.cluster,
          env: a.env,
          status,
          statusReason: open
            ? null
            : doc.planState === 'nothing'
              ? 'nothing will be deleted'
              : 'the plan is unknown: nothing can be approved',
          snapshotHash: hash,
          requiredApprovals: doc.planState === 'needs-override' ? 2 : 1,
          requester,
          createdAt: now.toISOString(),
          expiresAt: new Date(now.getTime() + this.ttlMs).toISOString(),
          doc,
        }),
      () => ({ previewId: id, status }),
    );
    return this.view(id, user);
  }

  private async must(id: string): Promise<StoredPreview> {
    const p = await this.deps.store.get(id);
    if (!p) throw new HttpError(404, 'NotFound', `no prune preview ${id}`);
    return p;
  }

  /** Why this user may not approve this preview now (undefined: may). */
  private whyNotApprove(p: StoredPreview, user: Principal): string | undefined {
    const role = whyNot(user.grants, 'prune.approve', { cluster: p.cluster, env: p.env });
    if (role) return role;
    if (samePerson(identityOf(user), p.requester))
      return 'You requested this prune: a different person must approve it';
    if (p.decisions.some((d) => samePerson(d, identityOf(user)))) return 'You already decided on this prune';
    if (p.status !== 'pending') return `This prune is ${p.status}${p.statusReason ? `: ${p.statusReason}` : ''}`;
    if (Date.parse(p.expiresAt) <= Date.now()) return 'This preview expired: request a new one';
    return undefined;
  }

  async view(id: string, user: Principal): Promise<PreviewView> {
    const preview = await this.must(id);
    if (!can(user.grants, 'app.read', { cluster: preview.cluster, env: preview.env }))
      throw new HttpError(404, 'NotFound', `no prune preview ${id}`);
    const reason = this.whyNotApprove(preview, user) ?? null;
    return { preview, journal: await this.deps.store.journal(id), viewer: { canApprove: !reason, reason } };
  }

  /** The previews this user may see (the reviewer queue: status pending). */
  async list(user: Principal, status?: PreviewStatus): Promise<StoredPreview[]> {
    return (await this.deps.store.list(status)).filter((p) =>
      can(user.grants, 'app.read', { cluster: p.cluster, env: p.env }),
    );
  }

  /** Whether the candidates still are what the preview saw (the same uid and resourceVersion, read live now). */
  private async snapshotMatches(p: StoredPreview): Promise<{ ok: boolean; reason?: string }> {
    for (const c of p.doc.candidates) {
      if (!c.deletable) continue;
      let o: Obj | undefined;
      try {
        o = await this.readLive(c.ref);
      } catch (e) {
        return { ok: false, reason: `cannot read ${c.id}: ${e instanceof Error ? e.message : String(e)}` };
      }
      const m = o ? meta(o) : undefined;
      if (!m) return { ok: false, reason: `${c.id} no longer exists` };
      if (m.uid !== c.uid || m.resourceVersion !== c.resourceVersion)
        return { ok: false, reason: `${c.id} changed since the preview (uid/resourceVersion)` };
    }
    // Flux renders the source artifact: a newer artifact is another snapshot
    const a = this.deps.app(p.app);
    if (
      a?.controller === 'flux' &&
      p.doc.revision &&
      a.source.revisionWanted &&
      a.source.revisionWanted !== p.doc.revision
    )
      return { ok: false, reason: `the app's source moved to ${a.source.revisionWanted} since the preview` };
    return { ok: true };
  }

  private async voidPreview(p: StoredPreview, reason: string, actor: string): Promise<void> {
    const now = new Date().toISOString();
    if (await this.deps.store.transition(p.id, ['pending'], 'void', reason, now))
      await this.deps.recorder.record({
        time: now,
        type: 'prune.voided',
        actor,
        app: p.app,
        cluster: p.cluster,
        env: p.env,
        data: { previewId: p.id, snapshotHash: p.snapshotHash, reason },
      });
  }

  /**
   * An approval or a rejection by `user`. `onDenied` records a refusal (role, requester) as evidence.
   * Returns the preview as it is after the decision (an approval that completes it starts the execution).
   */
  async decide(
    id: string,
    user: Principal,
    input: { decision: 'approve' | 'reject'; comment: string; confirmation?: string | undefined },
    onDenied: (reason: string, scope: { cluster: string; env: string; app: string }) => void,
  ): Promise<PreviewView> {
    const p = await this.must(id);
    const scope = { cluster: p.cluster, env: p.env, app: p.app };
    if (!can(user.grants, 'app.read', scope)) throw new HttpError(404, 'NotFound', `no prune preview ${id}`);
    const role = whyNot(user.grants, 'prune.approve', scope);
    if (role) {
      onDenied(role, scope);
      throw new HttpError(403, 'Forbidden', role);
    }
    const me = identityOf(user);
    if (samePerson(me, p.requester)) {
      const reason = 'the requester of a prune cannot approve or reject it: a different person must';
      onDenied(reason, scope);
      throw new HttpError(403, 'Forbidden', reason);
    }
    if (p.status !== 'pending')
      throw new HttpError(409, 'Conflict', `this prune is ${p.status}${p.statusReason ? `: ${p.statusReason}` : ''}`);
    if (Date.parse(p.expiresAt) <= Date.now()) {
      await this.voidPreview(p, 'the preview expired', user.name);
      throw new HttpError(409, 'Conflict', 'this preview expired: request a new one');
    }
    if (input.decision === 'approve') {
      if (p.doc.planState === 'needs-override' && input.confirmation !== p.doc.confirmation)
        throw new HttpError(400, 'BadRequest', `this prune needs an override: type "${p.doc.confirmation}" to confirm`);
      const snap = await this.snapshotMatches(p);
      if (!snap.ok) {
        await this.voidPreview(p, `the live state no longer matches the preview: ${snap.reason}`, user.name);
        throw new HttpError(409, 'Conflict', `approval void: ${snap.reason}; request a new preview`);
      }
    }
    const time = new Date().toISOString();
    const result = await this.deps.recorder.act(
      {
        time,
        type: input.decision === 'approve' ? 'prune.approved' : 'prune.rejected',
        actor: user.name,
        app: p.app,
        cluster: p.cluster,
        env: p.env,
        data: {
          previewId: p.id,
          snapshotHash: p.snapshotHash,
          approver: me,
          requester: p.requester,
          comment: input.comment,
          ...(p.doc.planState === 'needs-override' ? { override: true, reasons: p.doc.reasons } : {}),
        },
      },
      async (intent) => {
        const r = await this.deps.store.decide(id, {
          ...me,
          decision: input.decision,
          comment: input.comment,
          time,
          evidenceSeq: intent.seq,
        });
        if (!r.ok)
          throw new HttpError(
            409,
            'Conflict',
            r.reason === 'already-decided'
              ? 'you already decided on this prune'
              : `this prune is ${r.reason === 'not-pending' ? (r.status ?? 'decided') : 'gone'}`,
          );
        return r;
      },
      (o) => (o.ok ? { previewId: id, status: o.value.preview.status } : { previewId: id }),
    );
    if (result.preview.status === 'approved') await this.start(id);
    return this.view(id, user);
  }

  /** Claims an approved preview and runs it in the background (exactly one claimant runs it). */
  private async start(id: string): Promise<void> {
    const p = await this.must(id);
    const deletable = p.doc.candidates.filter((c) => c.deletable);
    const entries = deletable.map((c, i) => ({
      batch: Math.floor(i / p.doc.batchSize),
      object: c.id,
      uid: c.uid ?? '',
      resourceVersion: c.resourceVersion ?? '',
    }));
    if (!(await this.deps.store.claim(id, this.executor, entries, new Date().toISOString()))) return;
    const run = this.execute(p).catch(async (e: unknown) => {
      await this.deps.store
        .transition(
          id,
          ['executing'],
          'failed',
          `stopped: ${e instanceof Error ? e.message : String(e)}`,
          new Date().toISOString(),
        )
        .catch(() => undefined);
    });
    this.running.set(
      id,
      run.finally(() => this.running.delete(id)),
    );
  }

  /** Waits for executions running in this process. */
  async settled(): Promise<void> {
    await Promise.all([...this.running.values()]);
  }

  private async execute(p: StoredPreview): Promise<void> {
    const journal = await this.deps.store.journal(p.id);
    const byId = new Map(p.doc.candidates.map((c) => [c.id, c]));
    const batches = [...new Set(journal.map((j) => j.batch))].sort((a, b) => a - b);
    const startHealth = this.deps.app(p.app)?.health ?? 'Unknown';
    const base = { app: p.app, cluster: p.cluster, env: p.env, actor: 'console' };
    const byController = p.doc.deletedBy === 'controller';
    let stop: string | undefined;
    let deleted = 0;
    for (const b of batches) {
      const health = this.deps.app(p.app)?.health ?? 'Unknown';
      if (b > 0 && HEALTH_RANK[health] > HEALTH_RANK[startHealth]) {
        stop = `the app's health regressed from ${startHealth} to ${health} between batches`;
        break;
      }
      const items = journal.filter((j) => j.batch === b);
      try {
        await this.deps.recorder.act(
          {
            ...base,
            time: new Date().toISOString(),
            type: 'prune.batch',
            data: { previewId: p.id, batch: b, of: batches.length, objects: items.map((j) => j.object) },
          },
          async () => {
            for (const j of items) {
              const c = byId.get(j.object);
              if (!c) throw new Error(`journal names ${j.object}, which the preview does not`);
              if (byController) await this.stampOne(p, j, c);
              else await this.deleteOne(p, j, c);
              deleted++;
            }
          },
          () => ({ previewId: p.id, batch: b }),
        );
      } catch (e) {
        stop = e instanceof Error ? e.message : String(e);
        break;
      }
    }
    if (byController && !stop && p.doc.controller === 'argocd')
      try {
        await this.approveArgoDeletions(p);
      } catch (e) {
        stop = e instanceof Error ? e.message : String(e);
      }
    const now = new Date().toISOString();
    const final = await this.deps.store.journal(p.id);
    const notDeleted = final.filter((j) => j.state === 'planned').map((j) => j.object);
    for (const j of final)
      if (j.state === 'planned')
        await this.deps.store.mark(p.id, j.position, ['planned'], 'not-deleted', stop ?? null, now);
    const status = stop ? 'failed' : 'done';
    const controllerName = p.doc.controller === 'flux' ? 'kustomize-controller' : 'the Argo CD application controller';
    // a recovery by another replica (this one looked dead: its journal idle too long) may have reported it
    // already: then that report stands, and no second outcome is recorded
    const finished = await this.deps.store.transition(
      p.id,
      ['executing'],
      status,
      stop ??
        (byController
          ? `${deleted} object${deleted === 1 ? '' : 's'} stamped with the approval: ${controllerName}'s next prune deletes ${deleted === 1 ? 'it' : 'them'}`
          : null),
      now,
    );
    if (!finished) return;
    await this.deps.recorder.record({
      ...base,
      time: now,
      type: 'prune.executed',
      data: {
        previewId: p.id,
        status,
        ...(byController
          ? { deletedBy: 'controller', stamped: deleted, notStamped: notDeleted }
          : { deleted, notDeleted }),
        ...(stop ? { stoppedBecause: stop } : {}),
      },
    });
  }

  /**
   * The console's approval on one object the controller will prune: a merge patch of the annotation with the
   * object's uid and resourceVersion (from the preview) as preconditions. Intent in the journal and the evidence
   * first, the outcome after; the controller's own prune deletes the object (the admission policy lets it).
   */
  private async stampOne(p: StoredPreview, j: JournalEntry, c: PreviewCandidate): Promise<void> {
    const conn = this.deps.conn(c.ref.cluster);
    const stamp = approvalStamp(p.id, p.snapshotHash);
    await this.deps.recorder.act(
      {
        time: new Date().toISOString(),
        type: 'prune.stamp',
        actor: 'console',
        app: p.app,
        cluster: p.cluster,
        env: p.env,
        data: {
          previewId: p.id,
          object: c.id,
          uid: j.uid,
          resourceVersion: j.resourceVersion,
          annotation: { [PRUNE_APPROVED_ANNOTATION]: stamp },
        },
      },
      async () => {
        if (!(await this.deps.store.mark(p.id, j.position, ['planned'], 'stamping', null, new Date().toISOString())))
          throw new Error(`${c.id} was already attempted (journal)`);
        const path = await this.discovery(c.ref.cluster).path(
          apiVersionOf(c.ref),
          c.ref.kind,
          c.ref.namespace,
          c.ref.name,
        );
        // uid and resourceVersion in a merge patch are preconditions: another object or a newer version is a 409
        const body = JSON.stringify({
          metadata: {
            uid: j.uid,
            resourceVersion: j.resourceVersion,
            annotations: { [PRUNE_APPROVED_ANNOTATION]: stamp },
          },
        });
        const res = await conn.request('PATCH', `${path}?fieldManager=gitops-console`, {
          timeoutMs: 15_000,
          contentType: 'application/merge-patch+json',
          headers: { 'Content-Length': String(Buffer.byteLength(body)) },
          body,
        });
        const now = new Date().toISOString();
        if (res.status === 200) {
          const rv = (JSON.parse(res.body) as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
          await this.deps.store.mark(p.id, j.position, ['stamping'], 'stamped', stamp, now);
          return rv ?? null;
        }
        const err = conn.httpError(res, `PATCH ${c.ref.kind} ${c.ref.name}`);
        await this.deps.store.mark(
          p.id,
          j.position,
          ['stamping'],
          'failed',
          `${res.status}: ${err.message}`.slice(0, 500),
          now,
        );
        const changed = res.status === 409 || res.status === 404 || res.status === 422;
        throw new HttpError(
          changed ? 409 : 502,
          changed ? 'Conflict' : 'ClusterError',
          changed
            ? `${c.id} changed since the preview (precondition failed): stopped`
            : `stamping ${c.id} failed (${res.status}): stopped`,
        );
      },
      (o) => ({ previewId: p.id, object: c.id, ...(o.ok ? { resourceVersion: o.value } : {}) }),
    );
  }

  /**
   * Argo CD with the sync option `Prune=confirm` waits for `argocd.argoproj.io/deletion-approved` on the
   * Application before it prunes: written once every approved object carries the console's stamp (the stamps,
   * not this annotation, decide what may be deleted: it approves every pending deletion of the app).
   */
  private async approveArgoDeletions(p: StoredPreview): Promise<void> {
    const a = this.deps.app(p.app);
    if (!a) throw new Error(`the app ${p.app} is gone`);
    const ref: ObjectRef = {
      cluster: a.cluster,
      group: 'argoproj.io',
      version: 'v1alpha1',
      kind: 'Application',
      namespace: a.namespace,
      name: a.name,
    };
    const o = await this.readLive(ref);
    if (!o) throw new Error(`the Application ${a.namespace}/${a.name} is gone`);
    const spec = (o.spec ?? {}) as { syncPolicy?: { syncOptions?: string[] } };
    const md = (o.metadata ?? {}) as { annotations?: Record<string, string> };
    const options = [
      ...(spec.syncPolicy?.syncOptions ?? []),
      ...(md.annotations?.['argocd.argoproj.io/sync-options'] ?? '').split(','),
    ].map((x) => x.trim());
    if (!options.includes('Prune=confirm')) return;
    const value = new Date().toISOString();
    const conn = this.deps.conn(a.cluster);
    await this.deps.recorder.act(
      {
        time: value,
        type: 'prune.deletion-approved',
        actor: 'console',
        app: p.app,
        cluster: p.cluster,
        env: p.env,
        data: {
          previewId: p.id,
          application: `${a.namespace}/${a.name}`,
          annotation: { [ARGO_DELETION_APPROVED]: value },
        },
      },
      async () => {
        const path = await this.discovery(a.cluster).path('argoproj.io/v1alpha1', 'Application', a.namespace, a.name);
        const body = JSON.stringify({ metadata: { annotations: { [ARGO_DELETION_APPROVED]: value } } });
        const res = await conn.request('PATCH', `${path}?fieldManager=gitops-console`, {
          timeoutMs: 15_000,
          contentType: 'application/merge-patch+json',
          headers: { 'Content-Length': String(Buffer.byteLength(body)) },
          body,
        });
        if (res.status !== 200) throw conn.httpError(res, `PATCH Application ${a.name}`);
      },
      () => ({ previewId: p.id }),
    );
  }

  /** One DELETE with preconditions: intent in the journal and the evidence first, the outcome after. */
  private async deleteOne(p: StoredPreview, j: JournalEntry, c: PreviewCandidate): Promise<void> {
    const conn = this.deps.conn(c.ref.cluster);
    await this.deps.recorder.act(
      {
        time: new Date().toISOString(),
        type: 'prune.delete',
        actor: 'console',
        app: p.app,
        cluster: p.cluster,
        env: p.env,
        data: {
          previewId: p.id,
          object: c.id,
          uid: j.uid,
          resourceVersion: j.resourceVersion,
          propagationPolicy: p.doc.propagationPolicy,
        },
      },
      async () => {
        if (!(await this.deps.store.mark(p.id, j.position, ['planned'], 'deleting', null, new Date().toISOString())))
          throw new Error(`${c.id} was already attempted (journal)`);
        const path = await this.discovery(c.ref.cluster).path(
          apiVersionOf(c.ref),
          c.ref.kind,
          c.ref.namespace,
          c.ref.name,
        );
        const body = JSON.stringify({
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          preconditions: { uid: j.uid, resourceVersion: j.resourceVersion },
          propagationPolicy: p.doc.propagationPolicy,
        });
        // an explicit length: a chunked DELETE body leaves the apiserver's keep-alive connection unusable
        // (the next request on it gets a bare "400 Bad Request")
        const res = await conn.request('DELETE', path, {
          timeoutMs: 15_000,
          contentType: 'application/json',
          headers: { 'Content-Length': String(Buffer.byteLength(body)) },
          body,
        });
        const now = new Date().toISOString();
        if (res.status === 200 || res.status === 202) {
          await this.deps.store.mark(p.id, j.position, ['deleting'], 'deleted', String(res.status), now);
          return;
        }
        const err = conn.httpError(res, `DELETE ${c.ref.kind} ${c.ref.name}`);
        await this.deps.store.mark(
          p.id,
          j.position,
          ['deleting'],
          'failed',
          `${res.status}: ${err.message}`.slice(0, 500),
          now,
        );
        throw new HttpError(
          res.status === 409 ? 409 : 502,
          res.status === 409 ? 'Conflict' : 'ClusterError',
          res.status === 409
            ? `${c.id} changed since the preview (precondition failed): stopped`
            : `DELETE ${c.id} failed (${res.status}): stopped`,
        );
      },
      () => ({ previewId: p.id, object: c.id }),
    );
  }

  /**
   * At start: executions that were interrupted (this host's earlier process, or a journal idle longer than
   * `staleExecutionMs`) are reported exactly: each object whose delete was in flight is read live (gone or
   * another uid: deleted; the same uid: not deleted); nothing is deleted again.
   */
  async recover(): Promise<string[]> {
    const recovered: string[] = [];
    const host = `${hostname()}/`;
    const staleMs = this.opts.staleExecutionMs ?? 120_000;
    for (const p of await this.deps.store.list('executing', 1000)) {
      if (this.running.has(p.id)) continue;
      const journal = await this.deps.store.journal(p.id);
      const last = Math.max(Date.parse(p.updatedAt), ...journal.map((j) => Date.parse(j.updatedAt)));
      // this host's earlier process (gone) is recovered at once; another replica's only once its journal is stale
      const [exHost, exPid] = (p.executor ?? '').split('/');
      const ownDead = `${exHost}/` === host && Number(exPid) !== process.pid && !alive(Number(exPid));
      if (!ownDead && Date.now() - last < staleMs) continue;
      const now = new Date().toISOString();
      let deleted = 0;
      const notDeleted: string[] = [];
      for (const j of journal) {
        if (j.state === 'deleted' || j.state === 'gone' || j.state === 'stamped') deleted++;
        if (j.state === 'planned') {
          await this.deps.store.mark(
            p.id,
            j.position,
            ['planned'],
            'not-deleted',
            'interrupted before its delete',
            now,
          );
          notDeleted.push(j.object);
        }
        if (j.state !== 'deleting' && j.state !== 'stamping') continue;
        const c = p.doc.candidates.find((x) => x.id === j.object);
        let o: Obj | undefined;
        try {
          o = c ? await this.readLive(c.ref) : undefined;
        } catch {
          continue; // unknown: stays `deleting` and the preview stays failed-with-unknowns
        }
        if (j.state === 'stamping') {
          // the stamp is on the object (the controller prunes it), or it is not (nothing will delete it)
          const stamp = approvalStamp(p.id, p.snapshotHash);
          const on =
            !!o &&
            meta(o).uid === j.uid &&
            (o.metadata as { annotations?: Record<string, string> }).annotations?.[PRUNE_APPROVED_ANNOTATION] === stamp;
          if (on || !o) deleted++;
          else notDeleted.push(j.object);
          await this.deps.store.mark(
            p.id,
            j.position,
            ['stamping'],
            on ? 'stamped' : o ? 'not-deleted' : 'gone',
            on
              ? 'interrupted; found stamped at restart'
              : o
                ? 'interrupted; not stamped'
                : 'interrupted; gone at restart',
            now,
          );
          continue;
        }
        if (!o || meta(o).uid !== j.uid) {
          await this.deps.store.mark(
            p.id,
            j.position,
            ['deleting'],
            'deleted',
            'interrupted; found gone at restart',
            now,
          );
          deleted++;
        } else {
          await this.deps.store.mark(
            p.id,
            j.position,
            ['deleting'],
            'not-deleted',
            'interrupted; still live at restart',
            now,
          );
          notDeleted.push(j.object);
        }
      }
      const reason = `interrupted (the console stopped mid-prune): ${deleted} deleted, ${notDeleted.length} not deleted`;
      if (await this.deps.store.transition(p.id, ['executing'], 'failed', reason, now)) {
        recovered.push(p.id);
        await this.deps.recorder.record({
          time: now,
          type: 'prune.executed',
          actor: 'console',
          app: p.app,
          cluster: p.cluster,
          env: p.env,
          data: { previewId: p.id, status: 'failed', deleted, notDeleted, stoppedBecause: reason, recovered: true },
        });
      }
    }
    return recovered;
  }
}
