// An Argo CD sync operation as it runs: its phases (PreSync hooks, Sync in waves, PostSync hooks), which task it
// waits on and which failed — read from the Application's `status.operationState` (Argo CD 3.6, gitops-engine's
// sync_context.go) and the sync waves of the objects (`argocd.argoproj.io/sync-wave`, default 0). It answers the
// question people ask most about Argo CD: "why is this app not synced yet?", in one sentence.
import type { Obj } from './object-meta.ts';

export const ARGO_SYNC_WAVE = 'argocd.argoproj.io/sync-wave';

export interface ArgoSyncTask {
  group: string;
  kind: string;
  namespace?: string;
  name: string;
  /** PreSync, Sync, PostSync, SyncFail (Argo CD's syncPhase) */
  syncPhase: string;
  /** a hook's type (PreSync, PostSync, …); absent for the app's own objects */
  hookType?: string;
  /** Running, Succeeded, Failed, Error, Terminating (the task's operation phase) */
  hookPhase?: string;
  /** Synced, SyncFailed, Pruned, PruneSkipped (the apply's result) */
  status?: string;
  message?: string;
  /** the object's sync wave, when known */
  wave?: number;
}

export interface ArgoSyncOperation {
  /** Running, Succeeded, Failed, Error, Terminating */
  phase: string;
  message?: string;
  revision?: string;
  startedAt?: string;
  finishedAt?: string;
  initiatedBy?: string;
  tasks: ArgoSyncTask[];
}

const asObj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

/** A sync wave annotation as Argo CD reads it (an integer; anything else is wave 0). */
export function syncWaveOf(o: Obj | undefined): number {
  const v = asObj(asObj(o?.metadata).annotations)[ARGO_SYNC_WAVE];
  const n = typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v.trim()) : 0;
  return Number.isSafeInteger(n) ? n : 0;
}

/**
 * The Application's last (or running) sync operation, or undefined when it has none. `waveOf` gives an object's
 * sync wave (from the live object or the render); tasks keep Argo CD's order.
 */
export function argoSyncOperationOf(
  application: Obj,
  waveOf?: (t: Pick<ArgoSyncTask, 'group' | 'kind' | 'namespace' | 'name'>) => number | undefined,
): ArgoSyncOperation | undefined {
  const op = asObj(asObj(application.status).operationState);
  const phase = str(op.phase);
  if (!phase) return undefined;
  const result = asObj(op.syncResult);
  const tasks: ArgoSyncTask[] = [];
  for (const r of Array.isArray(result.resources) ? (result.resources as unknown[]) : []) {
    const x = asObj(r);
    const kind = str(x.kind);
    const name = str(x.name);
    if (!kind || !name) continue;
    const t: ArgoSyncTask = {
      group: str(x.group) ?? '',
      kind,
      ...(str(x.namespace) ? { namespace: str(x.namespace) } : {}),
      name,
      syncPhase: str(x.syncPhase) ?? 'Sync',
      ...(str(x.hookType) ? { hookType: str(x.hookType) } : {}),
      ...(str(x.hookPhase) ? { hookPhase: str(x.hookPhase) } : {}),
      ...(str(x.status) ? { status: str(x.status) } : {}),
      ...(str(x.message) ? { message: str(x.message)?.slice(0, 1000) } : {}),
    };
    const w = waveOf?.(t);
    if (w !== undefined) t.wave = w;
    tasks.push(t);
  }
  const operation = asObj(op.operation);
  const initiated = asObj(operation.initiatedBy);
  return {
    phase,
    ...(str(op.message) ? { message: str(op.message) } : {}),
    ...(str(result.revision) || str(asObj(operation.sync).revision)
      ? { revision: str(result.revision) ?? str(asObj(operation.sync).revision) }
      : {}),
    ...(str(op.startedAt) ? { startedAt: str(op.startedAt) } : {}),
    ...(str(op.finishedAt) ? { finishedAt: str(op.finishedAt) } : {}),
    ...(initiated.automated === true
      ? { initiatedBy: 'automated sync' }
      : str(initiated.username)
        ? { initiatedBy: str(initiated.username) }
        : {}),
    tasks,
  };
}

const FAILED = new Set(['Failed', 'Error']);
const label = (t: Pick<ArgoSyncTask, 'kind' | 'name'>) => `${t.kind} ${t.name}`;

/** The task a running sync's message names ("waiting for healthy state of apps/Deployment/api and 1 more …"). */
function waitedOn(
  op: ArgoSyncOperation,
): { task?: ArgoSyncTask; kind: string; name: string; more: string; reason: string } | undefined {
  const m =
    /^waiting for (completion of hook|healthy state of|deletion of hook|deletion of|pruning confirmation of) ([^/\s]*)\/([^/\s]+)\/(\S+)( and \d+ more \w+)?/.exec(
      op.message ?? '',
    );
  if (!m) return undefined;
  const [, reason = '', group = '', kind = '', name = '', more = ''] = m;
  const task = op.tasks.find((t) => t.group === group && t.kind === kind && t.name === name);
  return { ...(task ? { task } : {}), kind, name, more: more.trim(), reason };
}

/** The task that failed in the operation (a hook first), if any: in a failed sync, or the last attempt of a retrying one. */
function failedTask(op: ArgoSyncOperation): ArgoSyncTask | undefined {
  return (
    op.tasks.find((t) => t.hookType && FAILED.has(t.hookPhase ?? '')) ??
    op.tasks.find((t) => t.status === 'SyncFailed' || FAILED.has(t.hookPhase ?? ''))
  );
}

/**
 * Whether the operation failed: it ended Failed or Error, or it is retrying after an attempt in which a task
 * failed (Argo CD 3.x retries an automated sync: the phase stays Running meanwhile).
 */
export function argoSyncFailing(op: ArgoSyncOperation | undefined): boolean {
  return !!op && (FAILED.has(op.phase) || (op.phase === 'Running' && !!failedTask(op)));
}

/**
 * "Why is this app not synced yet?" in one sentence, from its sync operation: the hook that failed and its
 * message (and Argo CD's next retry), or what a running sync waits on (its phase, wave and, for an object, its
 * health message). Undefined when the last operation succeeded (then Argo CD's sync status and the diff say the
 * rest).
 */
export function argoSyncWhy(
  op: ArgoSyncOperation | undefined,
  healthOf?: (
    t: Pick<ArgoSyncTask, 'group' | 'kind' | 'namespace' | 'name'>,
  ) => { status: string; message?: string } | undefined,
): string | undefined {
  if (!op || op.phase === 'Succeeded') return undefined;
  const f = failedTask(op);
  const failed = f
    ? f.hookType
      ? `${f.hookType} hook ${f.name} failed: ${f.message ?? op.message ?? 'no message'}`
      : `${label(f)} failed to sync${f.wave !== undefined ? ` (wave ${f.wave})` : ''}: ${f.message ?? op.message ?? 'no message'}`
    : undefined;
  if (FAILED.has(op.phase))
    return failed ?? `the sync ${op.phase === 'Error' ? 'errored' : 'failed'}: ${op.message ?? 'no message'}`;
  if (op.phase === 'Running') {
    const retry = /Retrying attempt #(\d+) at (\S+?)\.?$/.exec(op.message ?? '');
    if (failed) return `${failed}${retry ? `; Argo CD retries (attempt #${retry[1]} at ${retry[2]})` : ''}`;
    if (/^Retrying operation/.test(op.message ?? '')) return `the last attempt failed; Argo CD retries: ${op.message}`;
    const w = waitedOn(op);
    const more = w?.more ? ` (${w.more})` : '';
    if (w?.reason === 'completion of hook')
      return `waiting on the ${w.task?.hookType ?? w.task?.syncPhase ?? 'sync'} hook ${w.kind} ${w.name} to complete${more}`;
    if (w?.reason.startsWith('deletion of'))
      return `waiting for the previous ${w.kind} ${w.name} to be deleted before it runs again${more}`;
    if (w?.reason === 'pruning confirmation of')
      return `waiting for the confirmation to prune ${w.kind} ${w.name}${more} (Prune=confirm: its prune preview needs a reviewer's approval)`;
    if (w) {
      const wave = w.task?.wave;
      const at = wave !== undefined ? `wave ${wave}` : 'the sync';
      const h = healthOf?.({ group: w.task?.group ?? '', kind: w.kind, namespace: w.task?.namespace, name: w.name });
      if (h?.status === 'Healthy') {
        // Argo CD names one of the wave's resources (in its own order); the one it names may be healthy while
        // another of the same wave is not: name the one that holds the wave
        const other = w.more
          ? op.tasks.find(
              (t) =>
                t !== w.task &&
                !t.hookType &&
                t.syncPhase === (w.task?.syncPhase ?? 'Sync') &&
                t.wave === wave &&
                (healthOf?.(t)?.status ?? 'Healthy') !== 'Healthy',
            )
          : undefined;
        const oh = other && healthOf?.(other);
        if (other && oh)
          return `waiting on ${at}: ${label(other)} not healthy (${oh.status}${oh.message ? `: ${oh.message}` : ''})${more}`;
        // healthy by the console's look already: Argo CD's next look at it moves the sync on (a moment, said so)
        return `waiting on ${at}: Argo CD has not seen ${w.kind} ${w.name} healthy yet${more}`;
      }
      const why = h ? `${h.status}${h.message ? `: ${h.message}` : ''}` : 'not healthy yet';
      return `waiting on ${at}: ${w.kind} ${w.name} not healthy (${why})${more}`;
    }
    return `syncing${op.message ? `: ${op.message}` : ''}`;
  }
  return `the sync is ${op.phase}${op.message ? `: ${op.message}` : ''}`;
}

/** The operation's tasks grouped as they run: PreSync, then Sync by wave, then PostSync (and SyncFail). */
export function argoSyncSteps(op: ArgoSyncOperation): Array<{ phase: string; wave?: number; tasks: ArgoSyncTask[] }> {
  const order = ['PreSync', 'Sync', 'PostSync', 'SyncFail'];
  const groups = new Map<string, { phase: string; wave?: number; tasks: ArgoSyncTask[] }>();
  for (const t of op.tasks) {
    const k = `${t.syncPhase}|${t.syncPhase === 'Sync' ? (t.wave ?? 0) : ''}`;
    let g = groups.get(k);
    if (!g)
      groups.set(k, (g = { phase: t.syncPhase, ...(t.syncPhase === 'Sync' ? { wave: t.wave ?? 0 } : {}), tasks: [] }));
    g.tasks.push(t);
  }
  const rank = (p: string) => (order.includes(p) ? order.indexOf(p) : order.length);
  return [...groups.values()].sort((a, b) => rank(a.phase) - rank(b.phase) || (a.wave ?? 0) - (b.wave ?? 0));
}
