// Out-of-band changes of a frozen app object (resumed by hand, annotations dropped, deleted), observed from
// the informers and recorded once per state; the claims they are checked against, cached for a few seconds.
import { argoFlagPruned, FROZEN_STATE_TEXT, frozenState, pauseHandled } from '../../domain/freeze.ts';
import { lastWriter, metaOf, type Obj } from '../../domain/object-meta.ts';
import { patchObject } from './app-objects.ts';
import type { FreezeStore, FreezeTarget } from './store.ts';
import type { FreezeContext } from './types.ts';

/** how long observe() trusts its copy of the freeze claims */
const CLAIMS_TTL_MS = 3_000;

/**
 * The claims, read from the store at most every few seconds: every app object change comes through
 * observe(), and almost none belongs to a frozen app (no query per informer event). A freeze made here
 * drops the copy at once; one made by another replica is seen within CLAIMS_TTL_MS.
 */
export class FreezeClaims {
  private cache: { at: number; claims: Promise<Map<string, string> | undefined> } | undefined;

  constructor(
    private readonly store: FreezeStore,
    private readonly now: () => number,
  ) {}

  get(): Promise<Map<string, string> | undefined> {
    const now = this.now();
    if (!this.cache || now - this.cache.at > CLAIMS_TTL_MS)
      this.cache = { at: now, claims: this.store.claims().catch(() => undefined) };
    return this.cache.claims;
  }

  drop(): void {
    this.cache = undefined;
  }
}

/**
 * Called for every app object change (catalog `app` events): a frozen app resumed directly, its freeze
 * annotations dropped, or the app deleted, is recorded once per state and shown on the freeze.
 */
export async function observeApp(
  ctx: FreezeContext,
  claims: FreezeClaims,
  appId: string,
  deleted: boolean,
): Promise<void> {
  const { deps } = ctx;
  const freezeId = (await claims.get())?.get(appId);
  if (!freezeId) return;
  const f = await deps.store.get(freezeId);
  if (!f || f.status !== 'active') return;
  const t = f.doc.targets.find((x) => x.appId === appId);
  if (!t?.applied) return;
  const obj = deleted ? undefined : deps.apps.raw(appId);
  if (!deleted && !obj) return;
  const state = deleted ? 'app-deleted' : frozenState(t.controller, obj as Obj, f.id);
  if (state === 'frozen') return confirmPause(ctx, f.id, t, obj as Obj);
  // the start's patch came after the start gave up waiting (unconfirmed), on an Argo CD CRD that pruned its
  // `automated.enabled: false`: not a resume, a pause that did not hold — made as the start makes it then
  if (
    state === 'resumed-directly' &&
    t.interference?.state === 'unconfirmed' &&
    argoFlagPruned(t.prior, obj as Obj, f.id)
  )
    return pauseByRemoval(ctx, f.id, f.cluster, t, obj as Obj);
  if (t.interference?.state === state) return;
  const at = new Date(ctx.now()).toISOString();
  const interference = { state, at, message: FROZEN_STATE_TEXT[state] };
  // on the row as stored now: an extension (or another record) written since the read above stays
  const done = await deps.store.modify(f.id, 'active', (row) => {
    const target = row.doc.targets.find((x) => x.appId === appId);
    // recorded meanwhile (another replica saw the same change): once per state
    if (!target?.applied || target.interference?.state === state) return undefined;
    target.interference = interference;
    return { doc: row.doc };
  });
  if (!done?.changed) return;
  deps.recorder.observe({
    time: at,
    type: 'freeze.interfered',
    // the field manager of the app object's newest managedFields entry (who resumed it)
    actor: deleted ? 'unknown' : (lastWriter(obj as Obj) ?? 'unknown'),
    app: appId,
    cluster: f.cluster,
    env: t.env,
    data: { freezeId: f.id, state, message: FROZEN_STATE_TEXT[state] },
  });
}

/**
 * A frozen app whose controller has handled the pause — Flux echoes the freeze's reconcile request, Argo CD has no
 * sync operation pending or running — confirmed (once).
 */
export async function confirmPause(ctx: FreezeContext, id: string, t: FreezeTarget, obj: Obj): Promise<void> {
  const p = t.controllerPause;
  if (!p || p.confirmed || !pauseHandled(obj, p.requested, t.prior.controller)) return;
  const confirmed = new Date(ctx.now()).toISOString();
  await ctx.deps.store.modify(id, 'active', (row) => {
    const target = row.doc.targets.find((x) => x.appId === t.appId);
    if (!target?.controllerPause || target.controllerPause.confirmed) return undefined;
    if (target.controllerPause.requested !== p.requested) return undefined;
    target.controllerPause = { ...target.controllerPause, confirmed };
    return { doc: row.doc };
  });
}

/**
 * Pauses an Argo CD Application whose CRD pruned the freeze's `automated.enabled` by removing `automated` (at the
 * version seen), and stores the prior's shape `removed` with the pause no longer unconfirmed. A patch that fails is
 * left to the next change of the object (the target stays unconfirmed, so on-call sees it and can end the freeze).
 */
async function pauseByRemoval(
  ctx: FreezeContext,
  id: string,
  cluster: string,
  t: FreezeTarget,
  obj: Obj,
): Promise<void> {
  const { deps } = ctx;
  const rv = String(metaOf(obj).resourceVersion ?? '');
  try {
    await patchObject(
      deps.conn(cluster),
      t,
      {
        contentType: 'application/merge-patch+json',
        body: { metadata: { resourceVersion: rv }, spec: { syncPolicy: { automated: null } } },
      },
      `cannot pause ${t.name}`,
    );
  } catch (e) {
    deps.log?.warn(
      { app: t.appId, freeze: id, err: String(e) },
      'freeze: a pause by removal failed (tried again on the next change)',
    );
    return;
  }
  await deps.store.modify(id, 'active', (row) => {
    const target = row.doc.targets.find((x) => x.appId === t.appId);
    if (!target || target.prior.controller !== 'argocd' || target.prior.shape === 'removed') return undefined;
    target.prior = { ...target.prior, shape: 'removed' };
    if (target.interference?.state === 'unconfirmed') delete target.interference;
    return { doc: row.doc };
  });
}
