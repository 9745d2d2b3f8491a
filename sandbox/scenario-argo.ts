// Scenario helpers on Argo CD (re-exported by scenario.ts): refresh, wait until synced, sync, terminate an
// operation, and the seeded ledger app back to the seed.
import { kubectl, mustState } from './state.ts';
import { waitFor } from './procs.ts';
import { ledgerFiles } from './seed.ts';
import { commitAndPushRetrying, readRepoFile, repoHead, writeRepoFile } from './scenario-git.ts';
import { getJson } from './scenario-kube.ts';

type Json = Record<string, unknown>;

// ---- Argo CD (its real controllers run in every sandbox cluster: sandbox/argocd.ts) ------------------------

/** An Application as Argo CD reports it. */
export function argoApp(cluster: string, app: string): Json {
  return getJson(cluster, ['-n', 'argocd', 'get', 'application', app]);
}

/** Asks the application controller to compare the app with Git now: the refresh annotation (`argocd app get --refresh`). */
export function argoRefresh(cluster: string, app: string, hard = false): void {
  kubectl(cluster, [
    ...['-n', 'argocd', 'annotate', '--overwrite', 'application', app],
    `argocd.argoproj.io/refresh=${hard ? 'hard' : 'normal'}`,
  ]);
}

interface ArgoStatus {
  sync?: { status?: string; revision?: string };
  health?: { status?: string; message?: string };
  operationState?: {
    phase?: string;
    message?: string;
    startedAt?: string;
    finishedAt?: string;
    syncResult?: { revision?: string };
  };
}
const statusOf = (o: Json) => (o.status ?? {}) as ArgoStatus;

/**
 * Waits until Argo CD reports the app Synced at `revision` (default: the repo's HEAD; sha or its prefix) and, unless
 * `healthy: false`, Healthy. Returns the synced revision. A timeout names what Argo CD last said.
 */
export async function waitForArgoSynced(
  cluster: string,
  app: string,
  opts: { revision?: string; healthy?: boolean; timeoutMs?: number } = {},
  st = mustState(),
): Promise<string> {
  const want = opts.revision ?? repoHead(st);
  let last: ArgoStatus = {};
  let refreshed = 0;
  try {
    await waitFor(
      `${cluster} Application ${app} Synced at ${want.slice(0, 7)}`,
      async () => {
        last = statusOf(argoApp(cluster, app));
        const ok =
          last.sync?.status === 'Synced' &&
          !!last.sync.revision?.startsWith(want) &&
          (opts.healthy === false || last.health?.status === 'Healthy');
        // not there yet: ask for a comparison now and then, instead of waiting out the resync period
        if (!ok && Date.now() - refreshed > 10_000) {
          argoRefresh(cluster, app);
          refreshed = Date.now();
        }
        return ok;
      },
      { timeoutMs: opts.timeoutMs ?? 180_000, intervalMs: 1000 },
    );
  } catch (e) {
    throw new Error(
      `${e instanceof Error ? e.message : String(e)}; Argo CD says: sync ${last.sync?.status ?? '?'} at ${last.sync?.revision ?? '?'}, health ${last.health?.status ?? '?'} ${last.health?.message ?? ''}, operation ${last.operationState?.phase ?? 'none'} ${last.operationState?.message ?? ''}`,
    );
  }
  return last.sync?.revision ?? want;
}

/**
 * Stops the app's running sync operation, as `argocd app terminate-op` does (its phase set to Terminating; the
 * controller ends it). A sync that keeps retrying a failed hook holds every newer revision back until then.
 * Nothing when no operation runs.
 */
export async function argoTerminateOp(cluster: string, app: string, timeoutMs = 60_000): Promise<void> {
  const phase = () => statusOf(argoApp(cluster, app)).operationState?.phase;
  if (phase() !== 'Running') return;
  kubectl(cluster, [
    ...['-n', 'argocd', 'patch', 'application', app, '--type', 'merge', '-p'],
    JSON.stringify({ status: { operationState: { phase: 'Terminating' } } }),
  ]);
  await waitFor(
    `${cluster} Application ${app} operation terminated`,
    async () => !['Running', 'Terminating'].includes(phase() ?? ''),
    {
      timeoutMs,
      intervalMs: 500,
    },
  );
}

/**
 * The seeded `ledger-staging` (sync phases and waves) back to the seed after a scenario broke it: its running or
 * retrying sync stopped, the seed's files committed, Argo CD synced at HEAD, then one sync run to its end (the
 * app's last operation a successful one again, its hooks run), and the Failed pods a failing rollout left behind
 * deleted (kwok fails pods for good, a ReplicaSet replaces them: hundreds in minutes).
 */
export async function resetLedger(st = mustState()): Promise<void> {
  await argoTerminateOp('nonprod', 'ledger-staging');
  const files = ledgerFiles();
  const differs = Object.entries(files).some(([p, c]) => {
    try {
      return readRepoFile(p, 'main', st) !== c;
    } catch {
      return true;
    }
  });
  if (differs)
    commitAndPushRetrying('Ledger back to the seed', (w) => {
      for (const [p, c] of Object.entries(files)) writeRepoFile(w, p, c);
    });
  await waitForArgoSynced('nonprod', 'ledger-staging', { timeoutMs: 240_000 }, st);
  await argoSync('nonprod', 'ledger-staging', { timeoutMs: 180_000 }, st);
  kubectl('nonprod', [
    ...['-n', 'staging', 'delete', 'pods', '--field-selector=status.phase=Failed'],
    ...['-l', 'app.kubernetes.io/name=ledger', '--wait=false'],
  ]);
}

/**
 * Syncs the app to Git's HEAD now, as `argocd app sync` does: the Application's `operation` field (written by
 * the sandbox admin), then waits for Argo CD's controller to finish it. Returns the synced revision; throws with
 * the operation's message when it failed.
 */
export async function argoSync(
  cluster: string,
  app: string,
  opts: { prune?: boolean; timeoutMs?: number } = {},
  st = mustState(),
): Promise<string> {
  const head = repoHead(st);
  // one operation at a time: an automated sync still running would take (and clear) this one
  await waitFor(
    `${cluster} Application ${app} without a running operation`,
    async () => {
      const o = argoApp(cluster, app);
      return !o.operation && !['Running', 'Terminating'].includes(statusOf(o).operationState?.phase ?? '');
    },
    { timeoutMs: opts.timeoutMs ?? 120_000, intervalMs: 500 },
  );
  const current = argoApp(cluster, app);
  const before = statusOf(current).operationState?.startedAt ?? '';
  // the app's sync options go with the operation, as the CLI sends them (Prune=confirm, ServerSideApply=true, …)
  const syncOptions = ((current.spec as Json | undefined)?.syncPolicy as { syncOptions?: string[] } | undefined)
    ?.syncOptions;
  kubectl(cluster, [
    ...['-n', 'argocd', 'patch', 'application', app, '--type', 'merge', '-p'],
    JSON.stringify({
      operation: {
        initiatedBy: { username: 'sandbox-scenario' },
        sync: {
          revision: head,
          prune: opts.prune ?? false,
          syncStrategy: { hook: {} },
          ...(syncOptions ? { syncOptions } : {}),
        },
      },
    }),
  ]);
  let last: ArgoStatus = {};
  await waitFor(
    `${cluster} Application ${app} sync operation`,
    async () => {
      const o = argoApp(cluster, app);
      last = statusOf(o);
      const op = last.operationState;
      return !o.operation && !!op?.startedAt && op.startedAt !== before && !!op.finishedAt;
    },
    { timeoutMs: opts.timeoutMs ?? 120_000, intervalMs: 500 },
  );
  if (last.operationState?.phase !== 'Succeeded')
    throw new Error(`Argo CD sync of ${app}: ${last.operationState?.phase}: ${last.operationState?.message ?? ''}`);
  return last.operationState.syncResult?.revision ?? head;
}
