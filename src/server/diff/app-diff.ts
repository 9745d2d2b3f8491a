// Git versus live, field by field, with the owner of every live field.
// For each desired object: a server-side dry-run apply as the controller's field manager (what the
// apiserver would make of Git, defaults included), compared with the live object, like
// `kubectl diff --server-side`. Where dry-run is forbidden or fails, a normalized comparison, labelled.
import { stringify } from 'yaml';
import type { App } from '../../domain/app.ts';
import { fieldDiff, flattenObject, type FieldChange } from '../../domain/field-diff.ts';
import { argoInstanceName, withArgoTracking, type ArgoTrackingSettings } from '../../domain/argo-tracking.ts';
import { controllerManagersOf, isGitOpsControllerManager } from '../../domain/field-managers.ts';
import { ownersByPath } from '../../domain/managed-fields.ts';
import { refOf } from '../../domain/tree.ts';
import { DEFAULT_PRUNE_LIMITS, planPrune, willDelete, type PruneLimits, type PruneState } from '../../domain/prune.ts';
import type { ObjectRef } from '../../domain/refs.ts';
import type { ClusterConnection } from '../kube/connection.ts';
import { KubeError } from '../kube/connection.ts';
import type { Discovery } from '../kube/discovery.ts';
import type { Obj, RenderResult } from './render.ts';
import { maskSecrets, maskSecretsInText } from '../kube/secret-mask.ts';
import { ignoreFor, jqDelete } from './argo-ignore.ts';
import { renderDesired, withFluxOwnerLabels, type DesiredDeps } from './desired.ts';
import { describeSops, sopsMetaOf } from '../../domain/secrets-in-git.ts';
import { applyChangesNothing } from '../../domain/apply-noop.ts';
import { argoHookOf, hookKey, listedHooksOf, type HookRun } from '../../domain/argo-hooks.ts';
import { hookNote, hookRowOf, leftHookNote, NO_OBJECTS } from './hook-rows.ts';
import { argoSyncOperationOf } from '../../domain/argo-sync.ts';
import {
  applyableSopsSecret,
  isCoreSecret,
  secretDiffInfo,
  secretInGitFor,
  type SecretDiffInfo,
} from './sops-secret.ts';

/** `hook`: an Argo CD hook (domain/argo-hooks.ts): Argo CD compares none, so neither `unchanged` nor a drift */
export type ObjectStatus = 'changed' | 'missing' | 'extraneous' | 'unchanged' | 'unknown' | 'hook';

export interface ObjectDiff {
  ref: ObjectRef;
  status: ObjectStatus;
  /**
   * `apply-noop`: applying Git's object provably changes nothing live (domain/apply-noop.ts), so no dry-run;
   * `not-compared`: a hook, whose fields Argo CD compares none of
   */
  mode: 'server-dry-run' | 'normalized' | 'apply-noop' | 'not-compared';
  note?: string;
  changes: FieldChange[];
  desiredYaml?: string;
  liveYaml?: string;
  predictedYaml?: string;
  /** a Secret: the file Git holds it in, SOPS or plaintext per key, and whether the live Secret has each key */
  secret?: SecretDiffInfo;
  /** an Argo CD hook's type and last run (status `hook`) */
  hook?: HookRun;
}

export interface OwnershipRow {
  manager: string;
  fields: number;
  objects: number;
  /** fields this manager shares with another manager, or that Git declares while another manager owns them */
  conflicts: Array<{ object: string; path: string; with: string[] }>;
}

/**
 * Each object's share of the ownership table (label → manager → fields), kept under a symbol: never sent (JSON
 * leaves symbol keys out), but copied by spreads, so diff-seen-by.ts can take a hidden object's share out of the totals.
 */
export const OWNERSHIP_BY_OBJECT: unique symbol = Symbol('ownershipByObject');

export interface AppDiff {
  [OWNERSHIP_BY_OBJECT]?: Map<string, Map<string, number>>;
  appId: string;
  generatedAt: string;
  state: 'ok' | 'unknown';
  error?: string;
  render?: Omit<RenderResult, 'objects'>;
  counts: Record<ObjectStatus, number>;
  summary: string;
  objects: ObjectDiff[];
  ownership: OwnershipRow[];
  /**
   * What a prune preview would plan from these extraneous rows (domain/prune.ts planPrune, the same rules): the
   * diff and the prune plan agree. `needs-override` with the reasons for an empty render or a prune over the limits.
   */
  prune?: { state: PruneState; reasons: string[]; deletions: number; protected: number };
  /** the render has no objects while the app tracks some: never "ok, nothing to do" (see `summary`) */
  emptyRender?: boolean;
}

export interface DiffDeps extends DesiredDeps {
  conn: ClusterConnection;
  discovery: Discovery;
  /** live object by ref (cache or apiserver); undefined when it does not exist */
  getLive(ref: { apiVersion: string; kind: string; namespace?: string; name: string }): Promise<Obj | undefined>;
  /** live objects tracked by the app but not in the desired set are found by the caller */
  tracked(): Obj[];
  /** the render to use (a cache, render-cache.ts); default: renderDesired now */
  render?: () => Promise<RenderResult>;
  /** per-object results for unchanged inputs (object-diff-memo.ts): a hit skips the dry-run and the field diff */
  memo?: ObjectDiffMemo;
  /** the prune limits of prune previews (default DEFAULT_PRUNE_LIMITS) */
  pruneLimits?: PruneLimits;
  /** prove "nothing to apply" from managedFields instead of a dry-run where it can (domain/apply-noop.ts) */
  applyNoop?: boolean;
  /** Argo CD: its resource tracking settings (argocd-cm); default: Argo CD's own (annotation tracking) */
  argoTracking?: ArgoTrackingSettings;
}

/**
 * Remembers an object's result by what it depends on (the desired object, the live object apart from its
 * status, and whatever the memo's owner scoped it to: manager, identity, ignore rules). Results are shared:
 * never mutate one.
 */
export interface ObjectDiffMemo {
  recall(desired: Obj, live: Obj | undefined): ObjectDiff | undefined;
  remember(desired: Obj, live: Obj | undefined, result: ObjectDiff): void;
}

/** The app's controller's field managers (the first is the one the dry-run applies as). */
export function controllerManagers(app: App): readonly string[] {
  return controllerManagersOf(app.controller);
}

const strip = (o: Obj | undefined): Obj | undefined => {
  if (!o) return o;
  const md = { ...((o.metadata ?? {}) as Obj) };
  for (const k of ['managedFields', 'uid', 'resourceVersion', 'generation', 'creationTimestamp']) delete md[k];
  const { status: _status, ...rest } = o;
  return { ...rest, metadata: md };
};
const toYaml = (o: Obj | undefined) => (o ? stringify(strip(o), { lineWidth: 0 }) : undefined);

/** live's YAML, and the dry-run's (the same text when nothing would change: written once) */
function yamlOfLiveAndPredicted(l: Obj | undefined, p: Obj | undefined, same: boolean) {
  const liveYaml = toYaml(l);
  return { liveYaml, predictedYaml: same ? liveYaml : toYaml(p) };
}

const derivedObjects = new WeakMap<Obj, Map<string, Obj>>();
/** `make()` for this object and key, made once while the object lives (render objects are never mutated). */
function derived(o: Obj, key: string, make: () => Obj): Obj {
  let byKey = derivedObjects.get(o);
  if (!byKey) derivedObjects.set(o, (byKey = new Map()));
  let d = byKey.get(key);
  if (!d) byKey.set(key, (d = make()));
  return d;
}

const managerLists = new WeakMap<Obj, Array<[string, string[]]>>();
/**
 * Each live field's distinct managers, decoded once per live object (the informer replaces an object on every
 * change, so a new version is decoded again). Shared: never mutate.
 */
function managersByPath(live: Obj): Array<[string, string[]]> {
  let l = managerLists.get(live);
  if (!l)
    managerLists.set(
      live,
      (l = Object.entries(ownersByPath(live)).map(([path, os]) => [path, [...new Set(os.map((x) => x.manager))]])),
    );
  return l;
}

async function pool<T, R>(items: T[], n: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let i = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (i < items.length) {
        const k = i++;
        out[k] = await fn(items[k] as T);
      }
    }),
  );
  return out;
}

export async function diffApp(app: App, deps: DiffDeps): Promise<AppDiff> {
  const counts: Record<ObjectStatus, number> = { ...NO_OBJECTS };
  const base = {
    appId: app.id,
    generatedAt: new Date().toISOString(),
    counts,
    objects: [] as ObjectDiff[],
    ownership: [] as OwnershipRow[],
  };
  const owners = new Map<string, { fields: number; objects: Set<string>; conflicts: OwnershipRow['conflicts'] }>();
  const own = (m: string) => {
    let r = owners.get(m);
    if (!r) owners.set(m, (r = { fields: 0, objects: new Set(), conflicts: [] }));
    return r;
  };
  const shares = new Map<string, Map<string, number>>();
  let render: RenderResult;
  try {
    render = await (deps.render ? deps.render() : renderDesired(app, deps));
  } catch (e) {
    // unknown is not empty: no desired state means no diff and no prune candidates
    const msg = maskSecretsInText(e instanceof Error ? e.message : String(e));
    return {
      ...base,
      state: 'unknown',
      error: msg,
      summary: `desired state unknown: ${msg.split('\n')[0]}`,
      prune: {
        state: 'unknown',
        reasons: ['the desired state is unknown: nothing can be planned'],
        deletions: 0,
        protected: 0,
      },
    };
  }
  const mgrs = controllerManagers(app);
  const manager = mgrs[0] as string;
  const desiredKeys = new Set<string>();
  // the ownership table: every live field's managers, and the fields Git sets that another controller owns
  const account = (ref: ObjectRef, live: Obj, changes: FieldChange[]) => {
    const label = `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
    for (const [path, names] of managersByPath(live)) {
      for (const m of names) {
        const row = own(m);
        row.fields++;
        row.objects.add(label);
        let share = shares.get(label);
        if (!share) shares.set(label, (share = new Map()));
        share.set(m, (share.get(m) ?? 0) + 1);
        if (names.length > 1 && row.conflicts.length < 200)
          row.conflicts.push({ object: label, path, with: names.filter((n) => n !== m) });
      }
    }
    for (const c of changes.filter((x) => x.class === 'conflict')) {
      for (const o of c.owners) {
        const row = own(o.manager);
        if (row.conflicts.length < 200 && !row.conflicts.some((k) => k.object === label && k.path === c.path))
          row.conflicts.push({ object: label, path: c.path, with: mgrs.slice(0, 1) });
      }
    }
  };
  // kustomize-controller labels every object it applies with its Kustomization's name and namespace, and Argo CD
  // annotates (or labels) each with its tracking id (domain/argo-tracking.ts); the render carries neither: add
  // them, as the controller does, so they are Git's and not "pending"
  const destination = ((deps.appObject.spec as Obj | undefined)?.destination as { namespace?: string } | undefined)
    ?.namespace;
  // derived once per render object and labels (renders are cached): the same object again keeps the object
  // memo's hash of it (a re-diff of 1,000 objects hashed all 1,000 again)
  const desiredObjects =
    app.kind === 'Kustomization'
      ? render.objects.map((o) => derived(o, `flux\n${app.namespace}\n${app.name}`, () => withFluxOwnerLabels(o, app)))
      : app.controller === 'argocd'
        ? render.objects.map((o) =>
            derived(
              o,
              `argocd\n${argoInstanceName(app)}\n${destination ?? ''}\n${JSON.stringify(deps.argoTracking ?? null)}`,
              () => withArgoTracking(o, argoInstanceName(app), destination, deps.argoTracking),
            ),
          )
        : render.objects;
  // Argo CD's hooks (domain/argo-hooks.ts): rows of their own, with their last run from the Application's operation
  // state. Flux has no hooks: under a Kustomization an object annotated as one is compared like any other.
  const argoOp = app.controller === 'argocd' ? argoSyncOperationOf(deps.appObject) : undefined;
  const listedHooks = app.controller === 'argocd' ? listedHooksOf(deps.appObject) : new Set<string>();
  const hookOf = (ref: ObjectRef, objects: { live?: Obj; rendered?: Obj }) =>
    app.controller === 'argocd' ? argoHookOf(ref, objects, argoOp, listedHooks.has(hookKey(ref))) : undefined;
  const hookRow = (ref: ObjectRef, hook: HookRun, note: string, desired?: Obj, live?: Obj): ObjectDiff =>
    hookRowOf(ref, hook, note, {
      desired: desired && toYaml(maskSecrets(desired)),
      live: live && toYaml(maskSecrets(live)),
    });
  const objects = await pool(desiredObjects, 8, async (desired): Promise<ObjectDiff> => {
    const md = (desired.metadata ?? {}) as { name?: string; namespace?: string };
    const ref = refOf(app.cluster, desired);
    desiredKeys.add(`${ref.group}/${ref.kind}/${ref.namespace ?? ''}/${ref.name}`);
    let live: Obj | undefined;
    let predicted: Obj | undefined;
    let mode: ObjectDiff['mode'] = 'server-dry-run';
    let note: string | undefined;
    let liveUnreadable = false;
    try {
      live = await deps.getLive({
        apiVersion: String(desired.apiVersion),
        kind: String(desired.kind),
        ...(md.namespace ? { namespace: md.namespace } : {}),
        name: md.name ?? '',
      });
    } catch (e) {
      liveUnreadable = true;
      note = `live object unreadable: ${maskSecretsInText(e instanceof Error ? e.message : String(e), [desired])}`;
    }
    // a hook: no dry-run and no field diff (its run, not its fields, is what Argo CD tracks); never memoized, as its
    // run changes with the Application and not with the objects
    const hook = hookOf(ref, { ...(live ? { live } : {}), rendered: desired });
    if (hook) {
      counts.hook++;
      return hookRow(ref, hook, hookNote(hook, note), desired, live);
    }
    // unchanged inputs, unchanged result: no dry-run, no field diff (a live object we could not read is never reused)
    const known = liveUnreadable ? undefined : deps.memo?.recall(desired, live);
    if (known) {
      if (live) account(ref, live, known.changes);
      counts[known.status]++;
      return known;
    }
    // SOPS-encrypted in Git (sops-secret.ts): the console holds no key; what it applies and compares is Git's
    // Secret with the live values (keys and metadata compared, values not)
    const sops = isCoreSecret(desired) ? sopsMetaOf(desired) : undefined;
    const toApply = sops ? applyableSopsSecret(desired, live) : desired;
    if (sops)
      note = [
        note,
        `${describeSops(sops)}: the console holds no key, so keys and metadata are compared and the values are not`,
      ]
        .filter(Boolean)
        .join('; ');
    // nothing to apply, proved from live's managedFields (domain/apply-noop.ts): predicted is live, no dry-run
    const noop =
      !!deps.applyNoop &&
      !sops &&
      !isCoreSecret(desired) &&
      live !== undefined &&
      applyChangesNothing(toApply, live, manager);
    if (noop) {
      mode = 'apply-noop';
      predicted = live;
    } else
      try {
        const path = await deps.discovery.path(
          String(desired.apiVersion),
          String(desired.kind),
          md.namespace,
          md.name ?? '',
        );
        predicted = await deps.conn.json<Obj>(
          'PATCH',
          `${path}?dryRun=All&fieldManager=${encodeURIComponent(manager)}&force=true`,
          {
            body: JSON.stringify(toApply),
            contentType: 'application/apply-patch+yaml',
            timeoutMs: 20_000,
          },
        );
      } catch (e) {
        mode = 'normalized';
        const why =
          e instanceof KubeError
            ? e.status === 403
              ? 'server-side dry-run forbidden (403)'
              : `server-side dry-run failed: ${maskSecretsInText(e.message, [desired, live])}`
            : maskSecretsInText(String(e), [desired, live]);
        note = note ? `${note}; ${why}` : why;
        predicted = toApply;
      }
    // Secret values never leave the BFF: mask all three sides before comparing (equal values, equal masks)
    const [d, p, l] = [maskSecrets(desired), maskSecrets(predicted), maskSecrets(live)];
    const changes = live
      ? fieldDiff({
          desired: sops ? maskSecrets(toApply) : d,
          predicted: p,
          live: l,
          controllerManagers: mgrs,
          mode: mode === 'normalized' ? 'normalized' : 'server-dry-run',
          ...(app.controller === 'argocd' ? { ignore: ignoreFor(deps.appObject, desired) } : {}),
        })
      : [];
    // Argo CD jqPathExpressions: whatever the expressions delete from both sides is ignored (as Argo CD does)
    const jq = app.controller === 'argocd' ? (ignoreFor(deps.appObject, desired)?.jqPathExpressions ?? []) : [];
    if (jq.length && live && deps.tools.jqDel) {
      const kept = [await jqDelete(deps.tools.jqDel, p, jq), await jqDelete(deps.tools.jqDel, l, jq)].map((x) =>
        flattenObject(x),
      );
      for (const c of changes) if (!kept.some((k) => k.has(c.path))) c.class = 'ignored';
    } else if (jq.length && live) {
      note = `${note ? `${note}; ` : ''}jqPathExpressions not applied: no jq-del binary configured`;
    }
    // Flux's own ignore rules: `kustomize.toolkit.fluxcd.io/ssa: Ignore` (never applied) and `IfNotPresent`
    // (applied only when missing) mean kustomize-controller will not reconcile these fields
    if (app.controller === 'flux' && live) {
      const dmd = (desired.metadata ?? {}) as { annotations?: Record<string, string>; labels?: Record<string, string> };
      const ssa =
        dmd.annotations?.['kustomize.toolkit.fluxcd.io/ssa'] ?? dmd.labels?.['kustomize.toolkit.fluxcd.io/ssa'];
      if (ssa === 'Ignore' || ssa === 'IfNotPresent')
        for (const c of changes) if (c.class !== 'defaulted') c.class = 'ignored';
    }
    // a progressive-delivery controller's own writes (domain/delivery-writes.ts) are not a difference from Git
    const real = changes.filter((c) => c.class !== 'defaulted' && c.class !== 'ignored' && c.class !== 'delivery');
    if (live) account(ref, live, changes);
    // a live object we could not read is unknown, never "missing" (unknown is not empty)
    const status: ObjectStatus = liveUnreadable ? 'unknown' : !live ? 'missing' : real.length ? 'changed' : 'unchanged';
    counts[status]++;
    const result: ObjectDiff = {
      ref,
      status,
      mode,
      ...(note ? { note } : {}),
      changes,
      desiredYaml: toYaml(d),
      ...yamlOfLiveAndPredicted(l, p, noop),
      ...(isCoreSecret(desired)
        ? { secret: secretDiffInfo(desired, live, liveUnreadable, secretInGitFor(render.secretsInGit, desired)) }
        : {}),
    };
    if (!liveUnreadable) deps.memo?.remember(desired, live, result);
    return result;
  });
  // extraneous: tracked by the app, not in the render. An empty render makes every tracked object extraneous:
  // that is what a wrong path or a failed generator looks like, so the diff says so (and so does the plan)
  const empty = render.objects.length === 0;
  const tracked = deps.tracked();
  const hooksLeft = new Set<Obj>();
  for (const o of tracked) {
    const ref = refOf(app.cluster, o);
    if (desiredKeys.has(`${ref.group}/${ref.kind}/${ref.namespace ?? ''}/${ref.name}`)) continue;
    // a live hook no longer in Git is no extraneous object: Argo CD never prunes a hook (its delete policy does)
    const hook = hookOf(ref, { live: o });
    if (hook) {
      counts.hook++;
      hooksLeft.add(o);
      objects.push(hookRow(ref, hook, leftHookNote(hook), undefined, o));
      continue;
    }
    counts.extraneous++;
    objects.push({
      ref,
      status: 'extraneous',
      mode: 'server-dry-run',
      note: empty
        ? 'live and tracked by the app; the render is empty (nothing in Git for this app)'
        : 'live and tracked by the app, no longer in Git',
      changes: [],
      liveYaml: toYaml(maskSecrets(o)),
    });
  }
  const plan = planPrune({
    controller: app.controller,
    inventory: tracked.filter((o) => !hooksLeft.has(o)).map((o) => refOf(app.cluster, o)),
    desired: render.objects.map((o) => refOf(app.cluster, o)),
    live: tracked,
    limits: deps.pruneLimits ?? DEFAULT_PRUNE_LIMITS,
  });
  const deletions = plan.candidates.filter(willDelete).length;
  const prune = {
    state: plan.state,
    reasons: plan.reasons,
    deletions,
    protected: plan.candidates.length - deletions,
  };
  const emptyRender = empty && tracked.length > 0;
  const order: Record<ObjectStatus, number> = {
    changed: 0,
    unknown: 1,
    missing: 2,
    extraneous: 3,
    hook: 4,
    unchanged: 5,
  };
  objects.sort(
    (a, b) =>
      order[a.status] - order[b.status] || `${a.ref.kind}/${a.ref.name}`.localeCompare(`${b.ref.kind}/${b.ref.name}`),
  );
  const { objects: _o, ...renderInfo } = render;
  const ownership = [...owners.entries()]
    .map(([manager, r]) => ({ manager, fields: r.fields, objects: r.objects.size, conflicts: r.conflicts }))
    .sort((a, b) => b.conflicts.length - a.conflicts.length || b.fields - a.fields);
  const summary = emptyRender
    ? `${emptyRenderSummary(deletions, prune.protected, app.automation.prune)}; ${summarizeDiff(objects)}`
    : summarizeDiff(objects);
  return {
    ...base,
    [OWNERSHIP_BY_OBJECT]: shares,
    objects,
    ownership,
    state: 'ok',
    render: renderInfo,
    summary,
    prune,
    ...(emptyRender ? { emptyRender } : {}),
  };
}

/** The first words of the summary of an empty render: what the controller would do, and what a preview needs. */
export function emptyRenderSummary(deletions: number, protectedCount: number, controllerPrunes: boolean): string {
  const n = `${deletions} object${deletions === 1 ? '' : 's'}`;
  const kept = protectedCount ? ` (${protectedCount} protected from pruning stay)` : '';
  return controllerPrunes
    ? `the render is empty: the controller would delete ${n}${kept}; a prune preview would need an override`
    : `the render is empty: ${n} would be left live and untracked (the controller does not prune)${kept}; a prune preview would need an override`;
}

export function summarizeDiff(objects: ObjectDiff[], now = Date.now()): string {
  const drift = objects.flatMap((o) => o.changes.filter((c) => c.class === 'drift'));
  const pending = objects.flatMap((o) => o.changes.filter((c) => c.class === 'pending')).length;
  const conflicts = objects.flatMap((o) => o.changes.filter((c) => c.class === 'conflict')).length;
  const parts: string[] = [];
  if (drift.length) {
    const owners = drift.flatMap((c) => c.owners.filter((x) => !isGitOpsControllerManager(x.manager)));
    const names = [...new Set(owners.map((o) => o.manager))];
    const latest = owners
      .map((o) => o.time ?? '')
      .sort()
      .at(-1);
    const ago = latest ? ` ${Math.max(0, Math.round((now - Date.parse(latest)) / 60_000))} min ago` : '';
    parts.push(
      `${drift.length} field${drift.length === 1 ? '' : 's'} drifted, written by ${names.join(', ') || 'another manager'}${ago}`,
    );
  }
  if (pending) parts.push(`${pending} field${pending === 1 ? '' : 's'} pending (Git changed, not applied yet)`);
  if (conflicts) parts.push(`${conflicts} field${conflicts === 1 ? '' : 's'} in conflict with another controller`);
  const missing = objects.filter((o) => o.status === 'missing').length;
  const extra = objects.filter((o) => o.status === 'extraneous').length;
  if (missing) parts.push(`${missing} object${missing === 1 ? '' : 's'} missing`);
  if (extra) parts.push(`${extra} extraneous`);
  const unknown = objects.filter((o) => o.status === 'unknown').length;
  if (unknown) parts.push(`${unknown} object${unknown === 1 ? '' : 's'} unknown (live state unreadable)`);
  const normalized = objects.filter((o) => o.mode === 'normalized').length;
  if (normalized) parts.push(`${normalized} compared without server-side dry-run (normalized comparison)`);
  return parts.length ? parts.join('; ') : 'no differences: live matches Git';
}
