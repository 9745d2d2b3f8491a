// Scenario helpers for tests and demos: change Git, change live state as a
// given field manager, inject faults, wait for Flux, and simulate Argo CD's
// apply (no Argo CD controller runs in the sandbox; see simulateArgoSync). Git is the forge's repo
// (state.git.url): read anonymously, pushed to as the forge admin.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { parseAllDocuments } from 'yaml';
import { dirname, join } from 'node:path';
import { bin, kubectl, mustState, type SandboxState } from './state.ts';
import { sleep, waitFor } from './procs.ts';
import { identityKubeconfig, kubectlAs } from './identities.ts';
import { forgeAuthEnv } from './forge.ts';
import { forgeUser, makeForgeReachable, makeForgeUnreachable } from './scenario-forge.ts';

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
export function kubectlEdit(cluster: string, kindName: string, namespace: string, patch: Json): void {
  kubectl(cluster, [
    '-n',
    namespace,
    'patch',
    kindName,
    '--type',
    'strategic',
    '--field-manager',
    'kubectl-edit',
    '-p',
    JSON.stringify(patch),
  ]);
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

export async function waitForKustomizationRevision(
  cluster: string,
  name: string,
  sha: string,
  timeoutMs = 120_000,
): Promise<void> {
  requestReconcile(cluster, 'gitrepository', 'digital-human');
  let lastNudge = Date.now();
  await waitFor(
    `${cluster}/${name} at ${sha.slice(0, 8)}`,
    async () => {
      const k = getJson(cluster, ['-n', 'flux-system', 'get', 'kustomization', name]);
      const st = k.status as Json | undefined;
      const ready = conditions(k).find((c) => c.type === 'Ready');
      if (Date.now() - lastNudge > 5000) {
        lastNudge = Date.now();
        requestReconcile(cluster, 'gitrepository', 'digital-human');
        requestReconcile(cluster, 'kustomization', name);
      }
      return String(st?.lastAppliedRevision ?? '').endsWith(sha) && ready?.status === 'True';
    },
    { timeoutMs, intervalMs: 500 },
  );
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

/** kubectl as Argo CD's application controller (its ServiceAccount); the admin in a sandbox older than the identities. */
function kubectlArgo(cluster: string, args: string[], input?: string): string {
  return identityKubeconfig(cluster, 'argocd-application-controller')
    ? kubectlAs(cluster, 'argocd-application-controller', args, input)
    : kubectl(cluster, args, input);
}

/**
 * SIMULATION of Argo CD's sync, clearly not Argo CD itself: renders the
 * Application's path at the repo HEAD with the sandbox's kustomize (as Argo
 * CD's repo-server would for a kustomize/plain directory), applies each object
 * with server-side apply as field manager `argocd-controller` carrying Argo
 * CD's tracking annotation, then writes the Application status as the
 * controller would (sync, health, resources, operationState). It acts as
 * Argo CD's own identity, the argocd/argocd-application-controller
 * ServiceAccount (sandbox/identities.ts). It does not prune.
 */
export async function simulateArgoSync(cluster: string, app: string, st = mustState()): Promise<string> {
  const appObj = getJson(cluster, ['-n', 'argocd', 'get', 'application', app]);
  const spec = appObj.spec as { source: { path: string; repoURL?: string }; destination: { namespace: string } };
  const work = mkdtempSync(join(tmpdir(), 'argo-sim-'));
  try {
    // the Application's own repoURL, as Argo CD's repo-server would (the forge's repo in the sandbox)
    git(['clone', '-q', spec.source.repoURL || st.git.url, work], tmpdir());
    const sha = git(['rev-parse', 'HEAD'], work).trim();
    const dir = join(work, spec.source.path);
    const files = readdirSync(dir);
    const helmOpts = (
      (appObj.spec as Json).source as {
        helm?: { parameters?: Array<{ name: string; value: string }>; releaseName?: string };
      }
    ).helm;
    const rendered = files.includes('Chart.yaml')
      ? execFileSync(
          bin('helm'),
          [
            'template',
            helmOpts?.releaseName ?? app,
            dir,
            '--namespace',
            spec.destination.namespace,
            ...(helmOpts?.parameters ?? []).flatMap((p) => ['--set', `${p.name}=${p.value}`]),
          ],
          { encoding: 'utf8' },
        )
      : files.includes('kustomization.yaml')
        ? execFileSync(bin('kustomize'), ['build', dir], { encoding: 'utf8' })
        : files
            .filter((f) => /\.ya?ml$/.test(f))
            .map((f) => readFileSync(join(dir, f), 'utf8'))
            .join('\n---\n');
    const items = parseAllDocuments(rendered)
      .map((d) => d.toJS() as Json | null)
      .filter((o): o is Json => !!o && typeof o === 'object' && typeof o.kind === 'string');
    const ns = spec.destination.namespace;
    const resources: Json[] = [];
    for (const o of items) {
      const md = (o.metadata ??= {}) as Json;
      md.namespace ??= ns;
      const [group, version] = String(o.apiVersion).includes('/')
        ? String(o.apiVersion).split('/')
        : ['', String(o.apiVersion)];
      md.annotations = {
        ...((md.annotations as Json) ?? {}),
        'argocd.argoproj.io/tracking-id': `${app}:${group}/${String(o.kind)}:${String(md.namespace)}/${String(md.name)}`,
      };
      resources.push({
        group,
        version,
        kind: o.kind,
        namespace: md.namespace,
        name: md.name,
        status: 'Synced',
        health: { status: 'Healthy' },
      });
    }
    kubectlArgo(
      cluster,
      ['apply', '--server-side', '--force-conflicts', '--field-manager=argocd-controller', '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items }),
    );
    const now = new Date().toISOString();
    // health as Argo CD would assess it: wait briefly for Deployments to become available
    let health = 'Healthy';
    for (const r of resources.filter((x) => x.kind === 'Deployment')) {
      try {
        await waitForDeploymentAvailable(cluster, String(r.namespace), String(r.name), 30_000);
      } catch {
        health = 'Progressing';
        r.health = { status: 'Progressing', message: 'Deployment has not become available' };
      }
    }
    const status = {
      sync: {
        status: 'Synced',
        revision: sha,
        comparedTo: { source: (appObj.spec as Json).source, destination: spec.destination },
      },
      health: { status: health, lastTransitionTime: now },
      resources,
      reconciledAt: now,
      sourceType: files.includes('Chart.yaml')
        ? 'Helm'
        : files.includes('kustomization.yaml')
          ? 'Kustomize'
          : 'Directory',
      operationState: {
        phase: 'Succeeded',
        message: 'successfully synced (all tasks run) [simulated by the sandbox]',
        startedAt: now,
        finishedAt: now,
        operation: { sync: { revision: sha }, initiatedBy: { automated: true } },
        syncResult: {
          revision: sha,
          resources: resources.map((r) => ({
            ...r,
            status: 'Synced',
            message: `${String(r.kind).toLowerCase()}/${String(r.name)} serverside-applied`,
            syncPhase: 'Sync',
          })),
        },
      },
    };
    // Application has no status subresource; Argo CD writes the whole object.
    kubectlArgo(cluster, [
      '-n',
      'argocd',
      'patch',
      'application',
      app,
      '--type',
      'merge',
      '--field-manager',
      'argocd-controller',
      '-p',
      JSON.stringify({ status }),
    ]);
    return sha;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * SIMULATION of one pass of Argo CD's application controller over an Application, honouring its sync policy
 * the way Argo CD does: no `automated` (or Argo CD 3.x's `automated.enabled: false`) → no automatic sync;
 * automated → sync when Git moved past the synced revision; with `selfHeal` also when only the live state
 * drifted (the sandbox re-applies: a server-side apply of the same render reverts hand edits).
 * Returns what it did.
 */
export async function argoControllerPass(
  cluster: string,
  app: string,
  st = mustState(),
): Promise<'paused' | 'synced' | 'self-healed' | 'in-sync'> {
  const o = getJson(cluster, ['-n', 'argocd', 'get', 'application', app]);
  const sp = ((o.spec as Json).syncPolicy ?? {}) as { automated?: { enabled?: boolean; selfHeal?: boolean } | null };
  if (!sp.automated || sp.automated.enabled === false) return 'paused';
  const synced = ((o.status as Json | undefined)?.sync as { revision?: string } | undefined)?.revision;
  if (synced !== repoHead(st)) {
    await simulateArgoSync(cluster, app, st);
    return 'synced';
  }
  if (sp.automated.selfHeal) {
    await simulateArgoSync(cluster, app, st);
    return 'self-healed';
  }
  return 'in-sync';
}

/** After `up`: every Kustomization Ready at HEAD, Argo apps synced, the cloud-controller annotation written. */
export async function waitForAllReady(st: SandboxState): Promise<void> {
  const head = repoHead(st);
  await Promise.all(
    st.clusters.flatMap((c) =>
      c.namespaces.map((env) => waitForKustomizationRevision(c.name, `digital-human-${env}`, head, 180_000)),
    ),
  );
  for (const c of st.clusters) {
    const apps = (getJson(c.name, ['-n', 'argocd', 'get', 'applications']).items as Json[]) ?? [];
    for (const a of apps) await simulateArgoSync(c.name, String((a.metadata as Json).name), st);
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
  kubectl(cluster, [
    '-n',
    'flux-system',
    'patch',
    'kustomization',
    name,
    '--type',
    'merge',
    '--field-manager',
    'flux-client-side-apply',
    '-p',
    JSON.stringify({ spec: { suspend } }),
  ]);
}

// forge, registry and business-endpoint scenarios
export * from './scenario-forge.ts';
