// Scenario helpers for tests and demos: change Git, change live state as a
// given field manager, inject faults, wait for Flux and Argo CD (their real controllers), sync an Argo CD app. Git is the forge's repo
// (state.git.url): read anonymously, pushed to as the forge admin.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { kubectl, mustState, RUN_DIR, type SandboxState } from './state.ts';
import { sleep, tail, waitFor } from './procs.ts';
import { forgeAuthEnv } from './forge.ts';
import { forgeUser, makeForgeReachable, makeForgeUnreachable } from './scenario-forge.ts';
import { ledgerFiles } from './seed.ts';

type Json = Record<string, unknown>;

/**
 * git as the scenario author. Reads are anonymous (the forge's repo is public); with `push`, as the forge
 * admin, the only user main's protection lets push directly: its token travels in an environment-only
 * http.extraHeader (forgeAuthEnv), never in a URL, a file under git or a log line. Errors carry git's stderr.
 */
function git(args: string[], cwd: string, push?: 'push'): string {
  try {
    return execFileSync('git', args, {
      cwd,
      encoding: 'utf8',
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'Scenario Author',
        GIT_AUTHOR_EMAIL: 'author@sandbox.invalid',
        GIT_COMMITTER_NAME: 'Scenario Author',
        GIT_COMMITTER_EMAIL: 'author@sandbox.invalid',
        GIT_TERMINAL_PROMPT: '0',
        ...(push ? forgeAuthEnv(forgeUser('admin')) : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(`git ${args.find((a) => !a.startsWith('-')) ?? ''}: ${err.stderr?.trim() || err.message}`);
  }
}

/** The HEAD commit of the seed repo's main branch (the forge's, what the controllers fetch), read over HTTP. */
export function repoHead(st = mustState()): string {
  const out = git(['ls-remote', st.git.url, 'refs/heads/main'], tmpdir());
  return out.split(/\s+/)[0] ?? '';
}

/**
 * Clones the seed repo over HTTP, lets `edit` change files in the work tree,
 * commits and pushes to main (as the forge admin, see git()). Returns the new commit sha.
 */
/**
 * commitAndPush, tried again (up to 5 times) when the push is rejected because someone else (a write-back, a
 * rollback, another test) pushed first.
 */
export function commitAndPushRetrying(message: string, edit: (workTree: string) => void): string {
  for (let attempt = 1; ; attempt++)
    try {
      return commitAndPush(message, edit);
    } catch (e) {
      if (attempt >= 5 || !String(e).includes('rejected')) throw e;
    }
}

export function commitAndPush(message: string, edit: (workTree: string) => void, st = mustState()): string {
  const work = mkdtempSync(join(tmpdir(), 'seed-edit-'));
  try {
    git(['clone', '-q', st.git.url, work], tmpdir());
    edit(work);
    git(['add', '-A'], work);
    git(['commit', '-q', '--allow-empty', '-m', message], work);
    git(['push', '-q', 'origin', 'HEAD:main'], work, 'push');
    return git(['rev-parse', 'HEAD'], work).trim();
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The files that differ between two commits of the seed repo (git diff --name-only, renames off), sorted. */
export function changedBetween(from: string, to: string, st = mustState()): string[] {
  const work = mkdtempSync(join(tmpdir(), 'seed-diff-'));
  try {
    git(['clone', '-q', st.git.url, work], tmpdir());
    return git(['diff', '--no-renames', '--name-only', from, to], work).split('\n').filter(Boolean).sort();
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** One file of the seed repo as it was at a commit. */
export function readRepoFileAt(path: string, sha: string, st = mustState()): string {
  const work = mkdtempSync(join(tmpdir(), 'seed-show-'));
  try {
    git(['clone', '-q', st.git.url, work], tmpdir());
    return git(['show', `${sha}:${path}`], work);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** One file of the seed repo at a branch (default main), read from a fresh shallow clone. */
export function readRepoFile(path: string, branch = 'main', st = mustState()): string {
  const work = mkdtempSync(join(tmpdir(), 'seed-read-'));
  try {
    git(['clone', '-q', '--depth', '1', '--branch', branch, st.git.url, work], tmpdir());
    return readFileSync(join(work, path), 'utf8');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The branch merged into main with a merge commit and pushed directly as the forge admin, with no pull
 * request and no review (a reviewer's merge of a forge PR: approvePullRequest + mergePullRequest). Returns the
 * merge commit.
 */
export function mergeBranch(branch: string, st = mustState()): string {
  const work = mkdtempSync(join(tmpdir(), 'seed-merge-'));
  try {
    git(['clone', '-q', st.git.url, work], tmpdir());
    // others may push to main meanwhile (tests share the sandbox): merge again onto the new main and retry
    for (let attempt = 1; ; attempt++) {
      git(['fetch', '-q', 'origin', 'main', `+refs/heads/${branch}:refs/remotes/origin/${branch}`], work);
      git(['reset', '-q', '--hard', 'origin/main'], work);
      git(['merge', '-q', '--no-ff', '-m', `Merge branch '${branch}'`, `origin/${branch}`], work);
      try {
        git(['push', '-q', 'origin', 'HEAD:main'], work, 'push');
        return git(['rev-parse', 'HEAD'], work).trim();
      } catch (e) {
        if (attempt >= 5) throw e;
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Deletes a branch of the seed repo (nothing when it does not exist). */
export function deleteBranch(branch: string, st = mustState()): void {
  const out = git(['ls-remote', st.git.url, `refs/heads/${branch}`], tmpdir());
  if (!out.trim()) return;
  // git push needs a repository to run in, even to delete a remote ref
  const work = mkdtempSync(join(tmpdir(), 'seed-delete-'));
  try {
    git(['init', '-q'], work);
    git(['push', '-q', st.git.url, '--delete', branch], work, 'push');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export function writeRepoFile(work: string, path: string, content: string): void {
  mkdirSync(dirname(join(work, path)), { recursive: true });
  writeFileSync(join(work, path), content);
}

/** Removes a resource file from base/ and from base/kustomization.yaml. */
export function removeFromGit(file: string, st = mustState()): string {
  return commitAndPush(
    `Remove ${file}`,
    (w) => {
      rmSync(join(w, 'base', file), { force: true });
      const k = join(w, 'base', 'kustomization.yaml');
      writeFileSync(
        k,
        readFileSync(k, 'utf8')
          .split('\n')
          .filter((l) => l.trim() !== `- ${file}`)
          .join('\n'),
      );
    },
    st,
  );
}

/** Makes an overlay render to zero objects (the dangerous-prune scenario). */
export function makeRenderEmpty(env: string, st = mustState()): string {
  return commitAndPush(
    `Empty ${env} render`,
    (w) => {
      writeFileSync(
        join(w, 'overlays', env, 'kustomization.yaml'),
        'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n',
      );
    },
    st,
  );
}

/** What `kubectl edit` does: a strategic merge patch with field manager kubectl-edit (operation Update). */
/** A kubectl-edit style patch; returns the object as the apiserver wrote it (a controller may revert it a moment later). */
export function kubectlEdit(cluster: string, kindName: string, namespace: string, patch: Json): Json {
  const out = kubectl(cluster, [
    '-n',
    namespace,
    'patch',
    kindName,
    '--type',
    'strategic',
    '--field-manager',
    'kubectl-edit',
    '-o',
    'json',
    '--show-managed-fields',
    '-p',
    JSON.stringify(patch),
  ]);
  return JSON.parse(out) as Json;
}

/** The incident edit used by tests and fixtures: render-worker to 12 replicas plus a DEBUG_TRACE env var, by kubectl-edit. */
export function incidentEditRenderWorker(cluster: string, namespace: string): void {
  kubectlEdit(cluster, 'deployment/render-worker', namespace, {
    spec: {
      replicas: 12,
      template: {
        spec: {
          containers: [
            {
              name: 'render',
              env: [
                { name: 'RENDER_QUALITY', value: 'standard' },
                { name: 'DEBUG_TRACE', value: '1' },
              ],
            },
          ],
        },
      },
    },
  });
}

/** What `kubectl scale` does: an Update of the scale subresource. */
export function kubectlScale(cluster: string, kindName: string, namespace: string, replicas: number): void {
  kubectl(cluster, ['-n', namespace, 'scale', kindName, `--replicas=${replicas}`]);
}

/** A second controller (the cloud-controller pattern) writing a Service annotation. */
export function annotateServiceAsController(
  cluster: string,
  namespace: string,
  service: string,
  key: string,
  value: string,
  manager = 'cloud-lb-controller',
): void {
  kubectl(cluster, [
    '-n',
    namespace,
    'patch',
    'service',
    service,
    '--type',
    'merge',
    '--field-manager',
    manager,
    '-p',
    JSON.stringify({ metadata: { annotations: { [key]: value } } }),
  ]);
}

/** Makes the Git source the controllers fetch (the forge) unreachable: its process is stopped. */
export async function gitOffline(): Promise<void> {
  await makeForgeUnreachable();
}
/** The forge back, on the same URL. */
export async function gitOnline(): Promise<void> {
  await makeForgeReachable();
}

export function getJson(cluster: string, args: string[]): Json {
  return JSON.parse(kubectl(cluster, [...args, '-o', 'json', '--show-managed-fields'])) as Json;
}

const conditions = (o: Json): Array<{ type: string; status: string; reason?: string; message?: string }> =>
  ((o.status as Json | undefined)?.conditions as Array<{ type: string; status: string }>) ?? [];

/** A merge patch of a Flux object's spec with kubectl (`manager`: the field manager, as the flux CLI names itself). */
export function patchFluxSpec(
  cluster: string,
  target: { kind: 'kustomization' | 'helmrelease'; namespace?: string; name: string },
  spec: Json,
  manager?: string,
): void {
  kubectl(cluster, [
    ...['-n', target.namespace ?? 'flux-system', 'patch', target.kind, target.name, '--type', 'merge'],
    ...(manager ? ['--field-manager', manager] : []),
    ...['-p', JSON.stringify({ spec })],
  ]);
}

/** Points a Kustomization at another path, as someone with kubectl would (the sandbox applies it, not Git). */
export function setKustomizationPath(cluster: string, name: string, path: string): void {
  patchFluxSpec(cluster, { kind: 'kustomization', name }, { path });
}

/** Asks Flux to reconcile now (what `flux reconcile` does: the requestedAt annotation). */
export function requestReconcile(cluster: string, kind: 'gitrepository' | 'kustomization', name: string): void {
  kubectl(cluster, [
    '-n',
    'flux-system',
    'annotate',
    '--overwrite',
    `${kind}/${name}`,
    `reconcile.fluxcd.io/requestedAt=${new Date().toISOString()}`,
  ]);
}

/** One line on a Flux object's state: what a timed-out wait prints (suspend, revisions, Ready's reason and message). */
function fluxStatusLine(cluster: string, kind: 'gitrepository' | 'kustomization', name: string): string {
  try {
    const o = getJson(cluster, ['-n', 'flux-system', 'get', kind, name]);
    const spec = (o.spec ?? {}) as Json;
    const st = (o.status ?? {}) as Json;
    const ready = conditions(o).find((c) => c.type === 'Ready');
    const artifact = (st.artifact ?? {}) as Json;
    return [
      `${cluster} ${kind}/${name}:`,
      spec.suspend === true ? 'SUSPENDED' : '',
      kind === 'kustomization'
        ? `applied=${String(st.lastAppliedRevision ?? '-')} attempted=${String(st.lastAttemptedRevision ?? '-')}`
        : `artifact=${String(artifact.revision ?? '-')}`,
      `Ready=${String(ready?.status ?? '-')} ${String(ready?.reason ?? '')}: ${String(ready?.message ?? '').slice(0, 300)}`,
    ]
      .filter(Boolean)
      .join(' ');
  } catch (e) {
    return `${cluster} ${kind}/${name}: unreadable (${e instanceof Error ? e.message.split('\n')[0] : String(e)})`;
  }
}

/**
 * Waits until a Kustomization applied `sha` and is Ready, nudging the source and it every 5 s. A timeout says why:
 * the Kustomization's, its source's and its dependencies' states, and the tail of the cluster's kustomize-controller
 * and source-controller logs (a CI log is all there is of a run on a machine that is gone).
 */
export async function waitForKustomizationRevision(
  cluster: string,
  name: string,
  sha: string,
  timeoutMs = 120_000,
): Promise<void> {
  requestReconcile(cluster, 'gitrepository', 'digital-human');
  let lastNudge = Date.now();
  let dependsOn: string[] = [];
  try {
    await waitFor(
      `${cluster}/${name} at ${sha.slice(0, 8)}`,
      async () => {
        const k = getJson(cluster, ['-n', 'flux-system', 'get', 'kustomization', name]);
        const st = k.status as Json | undefined;
        const ready = conditions(k).find((c) => c.type === 'Ready');
        dependsOn = (((k.spec as Json | undefined)?.dependsOn as Json[] | undefined) ?? []).map((d) => String(d.name));
        if (Date.now() - lastNudge > 5000) {
          lastNudge = Date.now();
          requestReconcile(cluster, 'gitrepository', 'digital-human');
          requestReconcile(cluster, 'kustomization', name);
          // a dependent waits until its dependencies on the same source applied the same revision
          for (const d of dependsOn) requestReconcile(cluster, 'kustomization', d);
        }
        return String(st?.lastAppliedRevision ?? '').endsWith(sha) && ready?.status === 'True';
      },
      { timeoutMs, intervalMs: 500 },
    );
  } catch (e) {
    // the controllers' last lines about this object, or errors, each cut to 400 characters
    const logs = ['kustomize-controller', 'source-controller']
      .map((c) => {
        const lines = tail(join(RUN_DIR, 'clusters', cluster, `${c}.log`), 400)
          .split('\n')
          .filter((l) => l.includes(`"name":"${name}"`) || l.includes('digital-human') || /"level":"error"/.test(l))
          .slice(-10)
          .map((l) => l.slice(0, 400));
        return `--- ${c}\n${lines.join('\n')}`;
      })
      .join('\n');
    const states = [
      fluxStatusLine(cluster, 'kustomization', name),
      fluxStatusLine(cluster, 'gitrepository', 'digital-human'),
      ...dependsOn.map((d) => fluxStatusLine(cluster, 'kustomization', d)),
    ].join('\n');
    throw new Error(`${e instanceof Error ? e.message : String(e)}\n${states}\n${logs}`);
  }
}

/**
 * Test clean-up in a governed namespace: waits for a Kustomization at `sha` while deleting `objects` (e.g.
 * `secret/leak-probe`) as the sandbox admin, because the console's prune admission policy
 * (deploy/prune-admission-policy.yaml) denies kustomize-controller's own prune of them without an approved preview.
 */
export async function waitForRevisionPrunedByAdmin(
  cluster: string,
  name: string,
  sha: string,
  namespace: string,
  objects: string[],
  timeoutMs = 180_000,
): Promise<void> {
  let done = false;
  const deleter = (async () => {
    while (!done) {
      kubectl(cluster, ['-n', namespace, 'delete', ...objects, '--ignore-not-found', '--wait=false']);
      await sleep(2000);
    }
  })();
  try {
    await waitForKustomizationRevision(cluster, name, sha, timeoutMs);
  } finally {
    done = true;
    await deleter;
  }
}

export async function waitForDeploymentAvailable(
  cluster: string,
  ns: string,
  name: string,
  timeoutMs = 120_000,
): Promise<Json> {
  let last: Json = {};
  await waitFor(
    `${cluster}/${ns}/deployment/${name} available`,
    async () => {
      last = getJson(cluster, ['-n', ns, 'get', 'deployment', name]);
      const st = last.status as Json | undefined;
      const spec = last.spec as Json;
      const avail = conditions(last).find((c) => c.type === 'Available');
      return (
        avail?.status === 'True' && st?.updatedReplicas === spec.replicas && st?.availableReplicas === spec.replicas
      );
    },
    { timeoutMs, intervalMs: 500 },
  );
  return last;
}

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

/** After `up`: every Kustomization Ready at HEAD, Argo CD's apps Synced there and Healthy, the cloud-controller annotation written. */
export async function waitForAllReady(st: SandboxState): Promise<void> {
  const head = repoHead(st);
  await Promise.all(
    st.clusters.flatMap((c) =>
      c.namespaces.map((env) => waitForKustomizationRevision(c.name, `digital-human-${env}`, head, 180_000)),
    ),
  );
  for (const c of st.clusters) {
    const apps = (getJson(c.name, ['-n', 'argocd', 'get', 'applications']).items as Json[]) ?? [];
    await Promise.all(
      apps.map((a) => waitForArgoSynced(c.name, String((a.metadata as Json).name), { revision: head }, st)),
    );
    for (const env of c.namespaces) {
      await waitFor(
        `${c.name}/${env}/tts-gateway service`,
        async () => {
          kubectl(c.name, ['-n', env, 'get', 'service', 'tts-gateway']);
          return true;
        },
        { timeoutMs: 60_000 },
      );
      annotateServiceAsController(
        c.name,
        env,
        'tts-gateway',
        'service.beta.kubernetes.io/load-balancer-id',
        `lb-${c.name}-${env}-7f3a`,
      );
    }
  }
  await sleep(0);
}

/** Compacts the cluster's etcd history (what the apiserver does every few minutes): old resourceVersions then answer 410 Gone. */
export async function compactEtcd(cluster: string, st = mustState()): Promise<number> {
  const c = st.clusters.find((x) => x.name === cluster);
  if (!c) throw new Error(`no cluster ${cluster}`);
  const base = `http://127.0.0.1:${c.ports.etcd}`;
  const range = (await (
    await fetch(`${base}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key: 'AA==', limit: 1 }) })
  ).json()) as { header: { revision: string } };
  const revision = Number(range.header.revision);
  const res = await fetch(`${base}/v3/kv/compaction`, {
    method: 'POST',
    body: JSON.stringify({ revision, physical: true }),
  });
  if (!res.ok) throw new Error(`etcd compaction failed: ${res.status} ${await res.text()}`);
  return revision;
}

/** What the HPA controller does: an Update of the scale subresource, as field manager kube-controller-manager. */
export function scaleAsController(
  cluster: string,
  deployment: string,
  namespace: string,
  replicas: number,
  manager = 'kube-controller-manager',
): void {
  kubectl(cluster, [
    '-n',
    namespace,
    'patch',
    'deployment',
    deployment,
    '--subresource=scale',
    '--type',
    'merge',
    '--field-manager',
    manager,
    '-p',
    JSON.stringify({ spec: { replicas } }),
  ]);
}

/** Suspends or resumes a Flux Kustomization (what `flux suspend|resume kustomization` does). */
export function setSuspended(cluster: string, name: string, suspend: boolean): void {
  patchFluxSpec(cluster, { kind: 'kustomization', name }, { suspend }, 'flux-client-side-apply');
}

/**
 * Suspends a Kustomization and waits until no reconcile is still in flight (no `Reconciling` condition): a
 * reconcile that began before the suspend still applies, and would revert an edit a test makes right after.
 */
export async function suspendSettled(cluster: string, name: string, timeoutMs = 60_000): Promise<void> {
  setSuspended(cluster, name, true);
  await waitFor(
    `${cluster}/${name} suspended with no reconcile in flight`,
    async () => {
      const k = getJson(cluster, ['-n', 'flux-system', 'get', 'kustomization', name]);
      return !conditions(k).some((c) => c.type === 'Reconciling' && c.status === 'True');
    },
    { timeoutMs, intervalMs: 250 },
  );
}

// forge, registry and business-endpoint scenarios
export * from './scenario-forge.ts';
