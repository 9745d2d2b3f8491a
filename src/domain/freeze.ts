// Incident freezes, pure: what a freeze request must say, what is patched on each controller's app object
// to pause it and to restore it exactly, how a frozen object is read back (a freeze undone out of band),
// and which live changes were made since a freeze began. No I/O; the service (src/server/freeze) acts.
import { canonicalJson } from './evidence.ts';
import type { FieldChange } from './field-diff.ts';
import type { Obj } from './object-meta.ts';
import type { ObjectRef } from './refs.ts';

export const FREEZE_DEFAULT_MINUTES = 120;
export const FREEZE_MAX_MINUTES = 24 * 60;
export const FREEZE_MAX_REASON = 500;

/** Stamped on the frozen app object: who, why, until, which freeze (readable with kubectl, by every replica). */
export const FREEZE_ANNOTATIONS = {
  id: 'gitops-console.dev/freeze-id',
  reason: 'gitops-console.dev/freeze-reason',
  until: 'gitops-console.dev/frozen-until',
  incident: 'gitops-console.dev/freeze-incident',
  /** the Flux Operator's own annotation, so its UI and CLI name the same person */
  by: 'fluxcd.controlplane.io/suspendedBy',
} as const;

export interface FreezeRequest {
  reason: string;
  incident?: string | undefined;
  minutes?: number | undefined;
}

export interface FieldError {
  field: string;
  message: string;
}

/** The problems of a freeze (or extension) request, each naming its field; empty when it is valid. */
export function freezeRequestErrors(r: FreezeRequest): FieldError[] {
  const errors: FieldError[] = [];
  const reason = typeof r.reason === 'string' ? r.reason.trim() : '';
  if (!reason) errors.push({ field: 'reason', message: 'a reason is required' });
  else if (reason.length > FREEZE_MAX_REASON)
    errors.push({ field: 'reason', message: `the reason is longer than ${FREEZE_MAX_REASON} characters` });
  if (r.incident !== undefined && r.incident !== '') {
    let ok = false;
    try {
      const u = new URL(r.incident);
      ok = (u.protocol === 'https:' || u.protocol === 'http:') && !u.username && !u.password;
    } catch {
      ok = false;
    }
    if (!ok) errors.push({ field: 'incident', message: 'the incident link must be an http(s) URL' });
  }
  const m = r.minutes ?? FREEZE_DEFAULT_MINUTES;
  if (!Number.isInteger(m) || m <= 0)
    errors.push({ field: 'minutes', message: 'the expiry must be a whole number of minutes in the future' });
  else if (m > FREEZE_MAX_MINUTES)
    errors.push({ field: 'minutes', message: `a freeze lasts at most ${FREEZE_MAX_MINUTES} minutes (24 h)` });
  return errors;
}

const asObj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});

/**
 * An Argo Rollouts Rollout of a frozen app: its `spec.paused` before the freeze paused it (null: absent); or, with
 * `kind: 'Canary'`, a Flagger Canary and its `spec.suspend`.
 */
export interface RolloutPrior {
  kind?: 'Canary';
  namespace: string;
  name: string;
  paused: boolean | null;
}

/**
 * What the app object looked like before the freeze, kept in the store so the end restores it exactly; and the
 * app's Rollouts, which the freeze pauses too (a canary does not step on while its app is frozen).
 */
export type PriorAutomation = (
  | { controller: 'flux'; suspend: boolean | null; annotations: Record<string, string | null> }
  | {
      controller: 'argocd';
      /** `spec.syncPolicy` exactly as it was (null: absent) */
      syncPolicy: unknown;
      /** how automation is paused: Argo CD 3.x's `automated.enabled: false`, or (older CRDs) `automated` removed */
      shape: 'enabled-flag' | 'removed';
      /** an Application an ApplicationSet generates: what the freeze changes on the ApplicationSet (appSetFreezeOps) */
      appSet?: AppSetPrior;
    }
) & { rollouts?: RolloutPrior[] };

/**
 * The ApplicationSet of a frozen Application, as it was: its controller rewrites the Application from the template
 * (the sync policy, and every annotation but the ones it preserves), so the freeze also adds, on the ApplicationSet,
 * an `ignoreApplicationDifferences` entry for the Application's `/spec/syncPolicy` (Argo CD's documented way to let
 * one generated Application's auto-sync be toggled) and the freeze annotations to `preservedFields.annotations`. The
 * end takes exactly those additions back.
 */
export interface AppSetPrior {
  namespace: string;
  name: string;
  /** `spec.ignoreApplicationDifferences` as it was (null: absent) */
  ignoreApplicationDifferences: unknown;
  /** `spec.preservedFields` as it was (null: absent) */
  preservedFields: unknown;
}

export interface FreezeMeta {
  id: string;
  by: string;
  reason: string;
  until: string;
  incident?: string | undefined;
}

function freezeAnnotations(m: FreezeMeta): Record<string, string> {
  return {
    [FREEZE_ANNOTATIONS.id]: m.id,
    [FREEZE_ANNOTATIONS.reason]: m.reason,
    [FREEZE_ANNOTATIONS.until]: m.until,
    [FREEZE_ANNOTATIONS.by]: m.by,
    ...(m.incident ? { [FREEZE_ANNOTATIONS.incident]: m.incident } : {}),
  };
}

/** Why an app cannot be frozen by the console (undefined: it can), read from its object. */
export function cannotFreeze(controller: 'flux' | 'argocd', obj: Obj): string | undefined {
  const md = asObj(obj.metadata);
  const ann = asObj(md.annotations);
  const spec = asObj(obj.spec);
  if (ann[FREEZE_ANNOTATIONS.id])
    return `already frozen (freeze ${String(ann[FREEZE_ANNOTATIONS.id])}): extend it instead`;
  if (controller === 'flux') {
    if (spec.suspend === true)
      return `already suspended outside the console${ann[FREEZE_ANNOTATIONS.by] ? ` by ${String(ann[FREEZE_ANNOTATIONS.by])}` : ''}: nothing to pause`;
    return undefined;
  }
  const automated = asObj(spec.syncPolicy).automated;
  if (automated === undefined || automated === null || asObj(automated).enabled === false)
    return 'automated sync is off: nothing reverts live changes, nothing to pause';
  return undefined;
}

/** The ApplicationSet that generated an Argo CD Application (its controller owner), if any. */
export function appSetOwnerOf(obj: Obj): string | undefined {
  const md = asObj(obj.metadata);
  const owner = (Array.isArray(md.ownerReferences) ? (md.ownerReferences as Obj[]) : []).find(
    (r) => r.kind === 'ApplicationSet' && typeof r.name === 'string',
  );
  return owner ? String(owner.name) : undefined;
}

export function appSetPriorOf(appSet: Obj): AppSetPrior {
  const md = asObj(appSet.metadata);
  const spec = asObj(appSet.spec);
  const copy = (v: unknown) => (v === undefined ? null : (JSON.parse(JSON.stringify(v)) as unknown));
  return {
    namespace: String(md.namespace ?? ''),
    name: String(md.name ?? ''),
    ignoreApplicationDifferences: copy(spec.ignoreApplicationDifferences),
    preservedFields: copy(spec.preservedFields),
  };
}

/** The ignore entry a freeze adds for one Application. */
export const appSetIgnoreEntry = (app: string) => ({ name: app, jsonPointers: ['/spec/syncPolicy'] });
/** Equal as JSON whatever the key order (the apiserver returns an object's keys in its own order). */
const sameJson = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);

/**
 * The JSON Patch that adds, on the ApplicationSet as it is live now, the ignore entry for `app` and the freeze
 * annotations to the preserved ones. Each list is tested first (`test` of its live value): a concurrent change is a
 * 409/422, read again and retried. Null: nothing to add.
 */
export function appSetFreezeOps(live: Obj, app: string): unknown[] | null {
  const spec = asObj(live.spec);
  const ops: unknown[] = [];
  const ignores = Array.isArray(spec.ignoreApplicationDifferences)
    ? (spec.ignoreApplicationDifferences as unknown[])
    : null;
  const entry = appSetIgnoreEntry(app);
  if (!ignores?.some((e) => sameJson(e, entry))) {
    if (ignores) ops.push({ op: 'test', path: '/spec/ignoreApplicationDifferences', value: ignores });
    ops.push({ op: 'add', path: '/spec/ignoreApplicationDifferences', value: [...(ignores ?? []), entry] });
  }
  const pf = asObj(spec.preservedFields);
  const anns = Array.isArray(pf.annotations) ? (pf.annotations as unknown[]) : [];
  const missing = Object.values(FREEZE_ANNOTATIONS).filter((k) => !anns.includes(k));
  if (missing.length) {
    if (spec.preservedFields !== undefined)
      ops.push({ op: 'test', path: '/spec/preservedFields', value: spec.preservedFields });
    ops.push({ op: 'add', path: '/spec/preservedFields', value: { ...pf, annotations: [...anns, ...missing] } });
  }
  return ops.length ? ops : null;
}

/**
 * The JSON Patch that takes back, on the ApplicationSet as it is live now, what the freeze of `app` added: its ignore
 * entry (unless the prior had it) and — once no other freeze's entry remains — the freeze annotations the prior did
 * not preserve; a list the prior did not have and that is empty then is removed. Null: nothing to take back.
 */
export function appSetRestoreOps(prior: AppSetPrior, live: Obj, app: string): unknown[] | null {
  const spec = asObj(live.spec);
  const ops: unknown[] = [];
  const priorIgnores = Array.isArray(prior.ignoreApplicationDifferences)
    ? (prior.ignoreApplicationDifferences as unknown[])
    : [];
  const ignores = Array.isArray(spec.ignoreApplicationDifferences)
    ? (spec.ignoreApplicationDifferences as unknown[])
    : [];
  const entry = appSetIgnoreEntry(app);
  const keepOurs = priorIgnores.some((e) => sameJson(e, entry));
  const nextIgnores = keepOurs ? ignores : ignores.filter((e) => !sameJson(e, entry));
  if (nextIgnores.length !== ignores.length) {
    ops.push({ op: 'test', path: '/spec/ignoreApplicationDifferences', value: ignores });
    if (nextIgnores.length === 0 && prior.ignoreApplicationDifferences === null)
      ops.push({ op: 'remove', path: '/spec/ignoreApplicationDifferences' });
    else ops.push({ op: 'replace', path: '/spec/ignoreApplicationDifferences', value: nextIgnores });
  }
  // another Application of this ApplicationSet still frozen (an ignore entry of the same shape the prior lacked)
  const otherFreezes = nextIgnores.some(
    (e) =>
      sameJson(asObj(e).jsonPointers, ['/spec/syncPolicy']) &&
      typeof asObj(e).name === 'string' &&
      !priorIgnores.some((p) => sameJson(p, e)),
  );
  if (!otherFreezes && spec.preservedFields !== undefined) {
    const pf = asObj(spec.preservedFields);
    const priorAnns = Array.isArray(asObj(prior.preservedFields).annotations)
      ? (asObj(prior.preservedFields).annotations as unknown[])
      : [];
    const freezeKeys: unknown[] = Object.values(FREEZE_ANNOTATIONS);
    const anns = Array.isArray(pf.annotations) ? (pf.annotations as unknown[]) : [];
    const nextAnns = anns.filter((k) => !freezeKeys.includes(k) || priorAnns.includes(k));
    if (nextAnns.length !== anns.length) {
      ops.push({ op: 'test', path: '/spec/preservedFields', value: spec.preservedFields });
      const { annotations: _a, ...rest } = pf;
      const next =
        nextAnns.length || asObj(prior.preservedFields).annotations !== undefined
          ? { ...rest, annotations: nextAnns }
          : rest;
      if (prior.preservedFields === null && Object.keys(next).length === 0)
        ops.push({ op: 'remove', path: '/spec/preservedFields' });
      else ops.push({ op: 'replace', path: '/spec/preservedFields', value: next });
    }
  }
  return ops.length ? ops : null;
}

export function priorOf(controller: 'flux' | 'argocd', obj: Obj): PriorAutomation {
  const spec = asObj(obj.spec);
  if (controller === 'flux') {
    const ann = asObj(asObj(obj.metadata).annotations);
    const annotations: Record<string, string | null> = {};
    // the reconcile request too: the freeze patch replaces it (freezePatch), the end puts it back
    for (const k of [...Object.values(FREEZE_ANNOTATIONS), FLUX_RECONCILE_REQUEST])
      annotations[k] = typeof ann[k] === 'string' ? ann[k] : null;
    return { controller, suspend: typeof spec.suspend === 'boolean' ? spec.suspend : null, annotations };
  }
  const sp = spec.syncPolicy;
  return {
    controller,
    syncPolicy: sp === undefined ? null : (JSON.parse(JSON.stringify(sp)) as unknown),
    shape: 'enabled-flag',
  };
}

export interface Patch {
  contentType: 'application/merge-patch+json' | 'application/json-patch+json';
  body: unknown;
}

/** RFC 6901 escaping of one key. */
const ptr = (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1');

/** Flux's reconcile request; its controllers echo the value in `status.lastHandledReconcileAt` once handled. */
export const FLUX_RECONCILE_REQUEST = 'reconcile.fluxcd.io/requestedAt';

/**
 * Whether Flux's controller has handled the suspended object: `status.lastHandledReconcileAt` echoes the request
 * the freeze patch carried. A reconcile that began before the suspend still applies until it ends,
 * and would revert a live edit made meanwhile; the controller writes the echo only from a reconcile that read the
 * suspended object, one object at a time, so once it is there no earlier reconcile of this object is in flight.
 */
export function pauseHandled(obj: Obj, requestedAt: string, controller: 'flux' | 'argocd' = 'flux'): boolean {
  if (controller === 'argocd') return argoSyncIdle(obj);
  // the exact value only: another request's echo may come from a reconcile that read the object before the patch
  return asObj(obj.status).lastHandledReconcileAt === requestedAt;
}

/**
 * Argo CD: turning automated sync off does not stop a sync operation already asked for (`operation`) or running
 * (`status.operationState.phase` Running or Terminating): it goes on applying Git, and would revert a live edit made
 * meanwhile. Once none is pending or running, none starts again while automated sync is off: the pause holds.
 */
export function argoSyncIdle(obj: Obj): boolean {
  if (obj.operation !== undefined && obj.operation !== null) return false;
  const phase = asObj(asObj(obj.status).operationState).phase;
  return phase !== 'Running' && phase !== 'Terminating';
}

/**
 * The patch that pauses the app. Flux: `spec.suspend: true` and the annotations, and (`requestedAt`) a reconcile
 * request whose echo says the controller handled the suspend (pauseHandled). Argo CD: the annotations
 * and `automated.enabled: false` (shape `enabled-flag`) or `automated` removed (shape `removed`). Both carry
 * the object's resourceVersion, so a concurrent change makes it fail (409) rather than freeze a state
 * nobody saw.
 */
export function freezePatch(
  prior: PriorAutomation,
  meta: FreezeMeta,
  resourceVersion: string,
  requestedAt?: string,
): Patch {
  const annotations = freezeAnnotations(meta);
  if (prior.controller === 'flux')
    return {
      contentType: 'application/merge-patch+json',
      body: {
        metadata: {
          resourceVersion,
          annotations: requestedAt ? { ...annotations, [FLUX_RECONCILE_REQUEST]: requestedAt } : annotations,
        },
        spec: { suspend: true },
      },
    };
  const sp = asObj(prior.syncPolicy);
  const automated = prior.shape === 'enabled-flag' ? { ...asObj(sp.automated), enabled: false } : null;
  return {
    contentType: 'application/merge-patch+json',
    body: { metadata: { resourceVersion, annotations }, spec: { syncPolicy: { automated } } },
  };
}

/**
 * The patch that restores the app exactly as it was: Flux's `spec.suspend` and the annotations the freeze
 * replaced; Argo CD's whole `spec.syncPolicy` as stored (a JSON Patch, so no key the freeze did not know of
 * survives), the freeze's annotations removed. `live` is the object now (its annotations decide what to remove).
 */
export function restorePatch(prior: PriorAutomation, live: Obj): Patch {
  const liveAnn = asObj(asObj(live.metadata).annotations);
  if (prior.controller === 'flux') {
    const annotations: Record<string, string | null> = {};
    for (const k of Object.values(FREEZE_ANNOTATIONS))
      if (prior.annotations[k] !== undefined || k in liveAnn) annotations[k] = prior.annotations[k] ?? null;
    // a freeze recorded before it carried the request left the request alone
    if (FLUX_RECONCILE_REQUEST in prior.annotations)
      annotations[FLUX_RECONCILE_REQUEST] = prior.annotations[FLUX_RECONCILE_REQUEST] ?? null;
    return {
      contentType: 'application/merge-patch+json',
      body: { metadata: { annotations }, spec: { suspend: prior.suspend } },
    };
  }
  const ops: unknown[] = Object.values(FREEZE_ANNOTATIONS)
    .filter((k) => k in liveAnn)
    .map((k) => ({ op: 'remove', path: `/metadata/annotations/${ptr(k)}` }));
  const liveSpec = asObj(live.spec);
  if (prior.syncPolicy === null) {
    if ('syncPolicy' in liveSpec) ops.push({ op: 'remove', path: '/spec/syncPolicy' });
  } else ops.push({ op: 'add', path: '/spec/syncPolicy', value: prior.syncPolicy });
  return { contentType: 'application/json-patch+json', body: ops };
}

/** How a frozen app object reads now: still frozen by this freeze, or how it was undone out of band. */
export type FrozenState = 'frozen' | 'resumed-directly' | 'annotation-dropped' | 'other-freeze';

export function frozenState(controller: 'flux' | 'argocd', obj: Obj, freezeId: string): FrozenState {
  const ann = asObj(asObj(obj.metadata).annotations);
  const spec = asObj(obj.spec);
  const paused =
    controller === 'flux'
      ? spec.suspend === true
      : (() => {
          const a = asObj(spec.syncPolicy).automated;
          return a === undefined || a === null || asObj(a).enabled === false;
        })();
  if (!paused) return 'resumed-directly';
  const id = ann[FREEZE_ANNOTATIONS.id];
  if (id === undefined) return 'annotation-dropped';
  return id === freezeId ? 'frozen' : 'other-freeze';
}

/**
 * Whether an Argo CD Application carries this freeze's patch with its `automated.enabled: false` pruned: the freeze's
 * annotation is there, `automated` is too, without `enabled` — a CRD that does not know the flag dropped it, so the
 * app was never paused. Only a freeze made with the flag (shape `enabled-flag`) can be in that state; the start sees
 * it on the patch's answer, and a patch that applied after the start gave up waiting is seen here (out-of-band.ts).
 */
export function argoFlagPruned(prior: PriorAutomation, obj: Obj, freezeId: string): boolean {
  if (prior.controller !== 'argocd' || prior.shape !== 'enabled-flag') return false;
  if (asObj(asObj(obj.metadata).annotations)[FREEZE_ANNOTATIONS.id] !== freezeId) return false;
  const automated = asObj(obj.spec).syncPolicy;
  const a = asObj(automated).automated;
  return !!a && typeof a === 'object' && !Array.isArray(a) && !('enabled' in a);
}

export const FROZEN_STATE_TEXT: Record<Exclude<FrozenState, 'frozen'> | 'app-deleted', string> = {
  'resumed-directly': 'automation was resumed directly in the cluster (not through the console): Git wins again',
  'annotation-dropped': "the freeze's annotations were removed from the app object (an upgrade or a hand edit)",
  'other-freeze': 'another freeze now holds the app object',
  'app-deleted': 'the app object was deleted',
};

/** A field changed in the cluster since a freeze began by someone other than the GitOps controller. */
export interface LiveChange {
  /** `<object ref id>#<path>`: what a decision names */
  id: string;
  ref: ObjectRef;
  path: string;
  /** what Git renders (the dry-run's prediction when there is one) */
  git: unknown;
  live: unknown;
  manager: string;
  operation: string;
  /** the managedFields time of that manager's entry */
  time: string;
}

/**
 * The live changes since `since` among an app's field diffs: fields where live differs from Git and a
 * manager other than the controller (an `Update` or a foreign apply) owns it with a managedFields time at
 * or after the freeze's start (managedFields times have second precision: the start is truncated).
 */
export function liveChangesSince(
  objects: ReadonlyArray<{ ref: ObjectRef; id: string; changes: readonly FieldChange[] }>,
  since: string,
  isController: (manager: string) => boolean,
): LiveChange[] {
  const from = Math.floor(Date.parse(since) / 1000) * 1000;
  const out: LiveChange[] = [];
  for (const o of objects)
    for (const c of o.changes) {
      if (c.class !== 'drift' && c.class !== 'conflict') continue;
      const w = c.owners
        .filter((x) => !isController(x.manager) && x.time && Date.parse(x.time) >= from)
        .sort((a, b) => String(b.time).localeCompare(String(a.time)))[0];
      if (!w) continue;
      out.push({
        id: `${o.id}#${c.path}`,
        ref: o.ref,
        path: c.path,
        git: c.predicted !== undefined ? c.predicted : c.desired,
        live: c.live,
        manager: w.manager,
        operation: w.operation,
        time: w.time as string,
      });
    }
  return out.sort((a, b) => a.time.localeCompare(b.time) || a.id.localeCompare(b.id));
}
