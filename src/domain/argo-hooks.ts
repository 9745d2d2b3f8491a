// Argo CD resource hooks (issue 40 item 13): an object annotated `argocd.argoproj.io/hook` (or, in an Argo CD app,
// Helm's `helm.sh/hook`) is a task Argo CD runs at a phase of a sync (PreSync, Sync, PostSync, SyncFail, PreDelete,
// PostDelete), not an object it keeps in sync: gitops-engine leaves hooks out of the comparison (no sync status),
// out of pruning and out of the app's health (controller/health.go). So a hook gets no sync verdict here either —
// not Synced, not "unchanged", not a drift — but its last run: the phase and message Argo CD recorded for it in the
// Application's `status.operationState.syncResult.resources[]` (domain/argo-sync.ts reads them), else what the live
// object says of itself (a Job's conditions, a Pod's phase).
//
// Argo CD only: Flux has no hooks. Under a Flux Kustomization the annotation means nothing to kustomize-controller,
// which applies and compares such a Job like any object (and helm-controller runs a chart's Helm hooks itself, outside
// the release's inventory; the diff's Helm render leaves them out: server/diff/render-helm.ts). Callers ask only for
// Argo CD apps.
import type { ArgoSyncOperation, ArgoSyncTask } from './argo-sync.ts';
import type { Obj } from './object-meta.ts';

export const ARGO_HOOK = 'argocd.argoproj.io/hook';
export const HELM_HOOK = 'helm.sh/hook';

/** A hook's last run, as the tree and the diff show it. */
export interface HookRun {
  /** PreSync, Sync, PostSync, SyncFail, PreDelete, PostDelete (several joined by `,`, as annotated) */
  type: string;
  /** Running, Succeeded, Failed, Error, Terminating (absent: no run known) */
  phase?: string;
  /** Argo CD's message for the run, or the live object's own (a failed Job's condition) */
  message?: string;
  /** when the run ended (a Job's completion or failure, a Pod's last container, else the operation's end) */
  finishedAt?: string;
  /** where `phase` comes from: Argo CD's record of its last sync operation, or the live object's own status */
  from?: 'argocd' | 'live';
}

type Ref = { group: string; kind: string; namespace?: string; name: string };

const asObj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
const annotationsOf = (o: Obj | undefined) => asObj(asObj(o?.metadata).annotations);

/** Helm hook → Argo CD hook, as Argo CD maps them (its Helm support: the install/upgrade hooks, the delete ones). */
const HELM_TO_ARGO: Record<string, string> = {
  'pre-install': 'PreSync',
  'pre-upgrade': 'PreSync',
  'post-install': 'PostSync',
  'post-upgrade': 'PostSync',
  'pre-delete': 'PreDelete',
  'post-delete': 'PostDelete',
};

/**
 * The hook types an object is annotated with, as Argo CD reads them; empty when it is no hook. `Skip` alone is no
 * hook (Argo CD skips the object, it does not run it); Helm's `crd-install` is no hook (an ordinary CRD to Argo CD);
 * another Helm hook Argo CD does not run (test, rollback) is still a hook, named `helm:<hook>`.
 */
export function hookTypesOf(o: Obj | undefined): string[] {
  const a = annotationsOf(o);
  const argo = str(a[ARGO_HOOK]);
  if (argo !== undefined) {
    const types = argo
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
    return types.length === 1 && types[0] === 'Skip' ? [] : types.filter((t) => t !== 'Skip');
  }
  const helm = str(a[HELM_HOOK]);
  if (helm === undefined) return [];
  const hooks = helm
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t && t !== 'crd-install');
  return [...new Set(hooks.map((h) => HELM_TO_ARGO[h] ?? `helm:${h}`))];
}

export const isHook = (o: Obj | undefined): boolean => hookTypesOf(o).length > 0;

export const hookKey = (r: Ref): string => `${r.group}/${r.kind}/${r.namespace ?? ''}/${r.name}`;

/** The objects the Application's `status.resources` lists as hooks (`hook: true`), by hookKey. */
export function listedHooksOf(application: Obj | undefined): Set<string> {
  const out = new Set<string>();
  const rs = asObj(application?.status).resources;
  for (const r of Array.isArray(rs) ? rs : []) {
    const x = asObj(r);
    const kind = str(x.kind);
    const name = str(x.name);
    if (x.hook !== true || !kind || !name) continue;
    out.add(
      hookKey({ group: str(x.group) ?? '', kind, ...(str(x.namespace) ? { namespace: str(x.namespace) } : {}), name }),
    );
  }
  return out;
}

const condition = (o: Obj, type: string) =>
  (Array.isArray(asObj(o.status).conditions) ? (asObj(o.status).conditions as unknown[]) : [])
    .map(asObj)
    .find((c) => c.type === type && c.status === 'True');

/** A live hook's own account of its run: a Job's Complete/Failed condition, a Pod's phase. */
export function liveHookRun(o: Obj): Pick<HookRun, 'phase' | 'message' | 'finishedAt'> {
  const kind = String(o.kind ?? '');
  const s = asObj(o.status);
  if (kind === 'Job') {
    const failed = condition(o, 'Failed');
    if (failed)
      return {
        phase: 'Failed',
        ...(str(failed.message) ? { message: str(failed.message) } : {}),
        ...(str(failed.lastTransitionTime) ? { finishedAt: str(failed.lastTransitionTime) } : {}),
      };
    const done = condition(o, 'Complete');
    if (done)
      return {
        phase: 'Succeeded',
        ...(str(done.message) ? { message: str(done.message) } : {}),
        ...((str(s.completionTime) ?? str(done.lastTransitionTime))
          ? { finishedAt: str(s.completionTime) ?? str(done.lastTransitionTime) }
          : {}),
      };
    return { phase: 'Running' };
  }
  if (kind === 'Pod') {
    const phase = str(s.phase);
    const ends = (Array.isArray(s.containerStatuses) ? (s.containerStatuses as unknown[]) : [])
      .map((c) => str(asObj(asObj(asObj(c).state).terminated).finishedAt))
      .filter((t): t is string => !!t)
      .sort();
    if (phase === 'Succeeded' || phase === 'Failed')
      return { phase, ...(ends.length ? { finishedAt: ends[ends.length - 1] } : {}) };
    if (phase === 'Running' || phase === 'Pending') return { phase: 'Running' };
  }
  return {};
}

const ENDED = new Set(['Succeeded', 'Failed', 'Error']);

/**
 * An object of an Argo CD app as a hook, or undefined when it is none. It is a hook when the live or the rendered
 * object is annotated as one, when the Application lists it with `hook: true` (`listed`), or when its last sync
 * operation ran it as one. Its run: the operation's task for it (Argo CD's hookPhase and message), else the live
 * object's own status; the end time from the live object, else from the operation when it has ended.
 */
export function argoHookOf(
  ref: Ref,
  objects: { live?: Obj; rendered?: Obj },
  op?: ArgoSyncOperation,
  listed = false,
): HookRun | undefined {
  const task: ArgoSyncTask | undefined = op?.tasks.find(
    (t) =>
      !!t.hookType &&
      t.group === ref.group &&
      t.kind === ref.kind &&
      (t.namespace ?? '') === (ref.namespace ?? '') &&
      t.name === ref.name,
  );
  const annotated = hookTypesOf(objects.live).length ? hookTypesOf(objects.live) : hookTypesOf(objects.rendered);
  if (!annotated.length && !task && !listed) return undefined;
  const type = task?.hookType ?? (annotated.join(',') || 'unknown');
  const own = objects.live ? liveHookRun(objects.live) : {};
  const phase = task?.hookPhase ?? own.phase;
  const message = task?.message ?? own.message;
  const finishedAt =
    phase && ENDED.has(phase)
      ? ((own.phase === phase ? own.finishedAt : undefined) ?? (op && ENDED.has(op.phase) ? op.finishedAt : undefined))
      : undefined;
  return {
    type,
    ...(phase ? { phase, from: task?.hookPhase ? ('argocd' as const) : ('live' as const) } : {}),
    ...(message ? { message } : {}),
    ...(finishedAt ? { finishedAt } : {}),
  };
}

/** "hook · PreSync · Succeeded", "hook · PostSync · Failed: <message>", "hook · PreSync · no run recorded". */
export function hookText(h: HookRun, ago?: string): string {
  const run = h.phase
    ? `${h.phase}${ago ? ` ${ago}` : ''}${ENDED.has(h.phase) && h.phase !== 'Succeeded' && h.message ? `: ${h.message}` : ''}`
    : 'no run recorded';
  return `hook · ${h.type} · ${run}`;
}
