// A test file's own estate on the real sandbox (docs/develop/testing.md): its own repository on the forge (seeded from a
// template), its own GitRepository, Kustomizations and namespace (governed when asked), mapped to an environment
// by the test consoles' mapping (./sandbox-environments.ts: `t-<env>-*` namespaces). Nothing of it is shared, so
// files that own estates run side by side; the seed estate stays read-only. Waits are on the exact commit the
// test pushed, or a later one pushed through the estate (its busy() committer, as in a monorepo where others
// commit all day); teardown deletes what it made (no restore commits).
//
//   const estate = await ownEstate({ name: 'diff', env: 'dev', template: digitalHumanTemplate('dev') });
//   const sha = estate.push('scale the worker', (w) => …);
//   await estate.waitApplied(sha);
//   …
//   await estate.teardown();
import { randomBytes } from 'node:crypto';
import { createForgeRepo, deleteForgeRepo, type ForgeState } from '../../sandbox/forge.ts';
import {
  commitAndPushRetrying,
  getJson,
  repoHead,
  sandboxForge,
  waitForArgoSynced,
  waitForKustomizationRevision,
  writeRepoFile,
} from '../../sandbox/scenario.ts';
import { seedFiles } from '../../sandbox/seed.ts';
import { kubectl, mustState, type SandboxState } from '../../sandbox/state.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { GOVERNED_LABEL } from '../../sandbox/identities.ts';

export type EstateEnv = 'dev' | 'staging' | 'prod';

export interface EstateApp {
  /** the app's short name: its Kustomization is `<estate id>-<name>` */
  name: string;
  /** its path in the estate's repository */
  path: string;
  /** Flux's prune (default true) */
  prune?: boolean;
  /** other apps of the estate (short names) this one depends on */
  dependsOn?: string[];
  /** more of the Kustomization's spec (decryption, suspend, wait, healthChecks, …) */
  spec?: Record<string, unknown>;
}

export interface EstateArgoApp {
  /** the app's short name: its Application (in argocd) is `<estate id>-<name>` */
  name: string;
  /** its path in the estate's repository */
  path: string;
  /** spec.syncPolicy (default: automated with prune and selfHeal); null for none (manual sync) */
  syncPolicy?: Record<string, unknown> | null;
  /** its AppProject (default `default`; a test that changes a project's sync windows makes its own) */
  project?: string;
}

export interface EstateOptions {
  /** the test file's short name (part of every name the estate makes, so a leftover says whose it is) */
  name: string;
  env: EstateEnv;
  /** the repository's first commit (a template, e.g. digitalHumanTemplate(env), or a test's own files) */
  files: Record<string, string>;
  /**
   * more of the first commit, made from the estate's names (merged over `files`): e.g. an overlay that declares
   * the estate's namespace as Git's own, where a test reads Git's namespace (the freeze write-back's placement)
   */
  namedFiles?: (names: { id: string; namespace: string }) => Record<string, string>;
  /** Flux Kustomizations; default: one app `app` at `overlays/<env>` (none when only argoApps are given) */
  apps?: EstateApp[];
  /** Argo CD Applications on the estate's repository, into the estate's namespace */
  argoApps?: EstateArgoApp[];
  /** label the namespace governed (the console's prune admission policy applies to it) */
  governed?: boolean;
}

export interface Estate {
  /** unique: `<name>-<random>` */
  id: string;
  cluster: string;
  env: EstateEnv;
  /** the estate's one namespace (every app's targetNamespace): `t-<env>-<id>` */
  namespace: string;
  /** the GitRepository in flux-system (named like the estate) */
  source: string;
  /** the forge with this estate's repository as its repo (for the forge scenario helpers: PRs, reviews, merges) */
  forge: ForgeState;
  /** the sandbox state with this estate's repository as its Git (for the Git scenario helpers) */
  state: SandboxState;
  /** the first commit */
  seedCommit: string;
  /** an app's Kustomization name */
  kustomization(app?: string): string;
  /** an app's id in the console (`<cluster>/flux-system/kustomization/<name>`) */
  appId(app?: string): string;
  /** an Argo CD app's Application name */
  application(app: string): string;
  /** an Argo CD app's id in the console (`<cluster>/argocd/application/<name>`) */
  argoAppId(app: string): string;
  /** commit and push to the estate's main as the forge admin; the new commit */
  push(message: string, edit: (workTree: string) => void): string;
  /** every commit pushed to main through this estate, the first commit first */
  pushes: readonly string[];
  /** `sha` and the commits pushed through this estate after it (what a wait on `sha` accepts) */
  atOrAfter(sha: string): string[];
  /** until the app's Kustomization applied `sha` (or a later commit of this estate) and is Ready */
  waitApplied(sha: string, app?: string, timeoutMs?: number): Promise<void>;
  /**
   * A background committer, as others commit to a monorepo all day: every `everyMs` (default 20 s) a commit that
   * changes only `unrelated/` (outside every app's path). stop() waits for nothing: each push is synchronous.
   */
  busy(opts?: { everyMs?: number }): { commits: string[]; stop(): void };
  /** until Argo CD reports the Application Synced (and Healthy unless healthy: false) at `sha` */
  waitArgoSynced(app: string, sha: string, opts?: { healthy?: boolean; timeoutMs?: number }): Promise<void>;
  teardown(): Promise<void>;
}

const ENV_CLUSTER: Record<EstateEnv, string> = { dev: 'nonprod', staging: 'nonprod', prod: 'prod' };

/** The seed's digital-human service files for one environment (base/ and overlays/<env>/), as a template. */
export function digitalHumanTemplate(env: EstateEnv): Record<string, string> {
  const all = seedFiles();
  return Object.fromEntries(
    Object.entries(all).filter(([path]) => path.startsWith('base/') || path.startsWith(`overlays/${env}/`)),
  );
}

export async function ownEstate(opts: EstateOptions): Promise<Estate> {
  const st = mustState();
  const forgeOfSandbox = sandboxForge();
  const cluster = ENV_CLUSTER[opts.env];
  // Kubernetes names: lower case, at most 63 characters for a namespace
  const id = `${opts.name
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .slice(0, 30)}-${randomBytes(3).toString('hex')}`;
  const namespace = `t-${opts.env}-${id}`;
  const argoApps = opts.argoApps ?? [];
  const apps = opts.apps ?? (argoApps.length ? [] : [{ name: 'app', path: `overlays/${opts.env}` }]);
  const application = (app: string) => `${id}-${app}`;
  const server = st.clusters.find((c) => c.name === cluster)?.apiserver;
  if (argoApps.length && !server) throw new Error(`no cluster ${cluster} in the sandbox`);
  const kustomization = (app = apps[0]?.name ?? 'app') => `${id}-${app}`;
  const files = { ...opts.files, ...opts.namedFiles?.({ id, namespace }) };
  const repo = await createForgeRepo(forgeOfSandbox, `t-${id}`, files, `Seed ${opts.name}'s own estate`);
  const forge: ForgeState = { ...forgeOfSandbox, repo };
  const state: SandboxState = { ...st, git: { ...st.git, url: repo.cloneUrl } };
  const seedCommit = repoHead(state);
  const pushes: string[] = [seedCommit];
  const atOrAfter = (sha: string): string[] => {
    const i = pushes.indexOf(sha);
    return i < 0 ? [sha] : pushes.slice(i);
  };
  const apply = (o: unknown) =>
    kubectl(cluster, ['apply', '--server-side', '--field-manager=test-estate', '-f', '-'], JSON.stringify(o));
  apply({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: namespace,
      labels: { 'gitops-console.dev/test-estate': id, ...(opts.governed ? { [GOVERNED_LABEL]: 'true' } : {}) },
    },
  });
  apply({
    apiVersion: 'source.toolkit.fluxcd.io/v1',
    kind: 'GitRepository',
    metadata: { name: id, namespace: 'flux-system', labels: { 'gitops-console.dev/test-estate': id } },
    spec: { url: repo.cloneUrl, interval: '10m', timeout: '20s', ref: { branch: 'main' } },
  });
  for (const app of apps)
    apply({
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: {
        name: kustomization(app.name),
        namespace: 'flux-system',
        labels: { env: opts.env, 'gitops-console.dev/test-estate': id },
      },
      spec: {
        // the test waits on what it pushed and nudges: a long interval keeps the controllers free for others
        interval: '10m',
        retryInterval: '5s',
        timeout: '2m',
        path: `./${app.path}`,
        targetNamespace: namespace,
        prune: app.prune ?? true,
        wait: false,
        sourceRef: { kind: 'GitRepository', name: id },
        ...(app.dependsOn?.length ? { dependsOn: app.dependsOn.map((d) => ({ name: kustomization(d) })) } : {}),
        ...app.spec,
      },
    });
  for (const app of argoApps)
    apply({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: {
        name: application(app.name),
        namespace: 'argocd',
        labels: { env: opts.env, 'gitops-console.dev/test-estate': id },
      },
      spec: {
        project: app.project ?? 'default',
        source: { repoURL: repo.cloneUrl, targetRevision: 'main', path: app.path },
        destination: { server, namespace },
        ...(app.syncPolicy === null
          ? {}
          : { syncPolicy: app.syncPolicy ?? { automated: { prune: true, selfHeal: true } } }),
      },
    });
  const estate: Estate = {
    id,
    cluster,
    env: opts.env,
    namespace,
    source: id,
    forge,
    state,
    seedCommit,
    kustomization,
    appId: (app) => `${cluster}/flux-system/kustomization/${kustomization(app)}`,
    application,
    argoAppId: (app) => `${cluster}/argocd/application/${application(app)}`,
    pushes,
    atOrAfter,
    push: (message, edit) => {
      const sha = commitAndPushRetrying(message, edit, state);
      pushes.push(sha);
      return sha;
    },
    async waitApplied(sha, app, timeoutMs = 180_000) {
      await waitForKustomizationRevision(cluster, kustomization(app), sha, timeoutMs, atOrAfter(sha).slice(1));
    },
    busy(o = {}) {
      const commits: string[] = [];
      const timer = setInterval(() => {
        try {
          commits.push(
            estate.push(`unrelated change ${commits.length + 1}`, (w) =>
              writeRepoFile(w, 'unrelated/tick.txt', `${commits.length + 1} ${new Date().toISOString()}\n`),
            ),
          );
        } catch {
          // a push the forge refused under load: the next tick pushes again
        }
      }, o.everyMs ?? 20_000);
      timer.unref();
      return { commits, stop: () => clearInterval(timer) };
    },
    async waitArgoSynced(app, sha, o = {}) {
      await waitForArgoSynced(cluster, application(app), { revision: sha, ...o }, state);
    },
    async teardown() {
      await teardownEstate({
        cluster,
        id,
        namespace,
        kustomizations: apps.map((a) => kustomization(a.name)),
        applications: argoApps.map((a) => application(a.name)),
        forge: forgeOfSandbox,
        repo: repo.name,
      });
    },
  };
  try {
    for (const app of apps) await estate.waitApplied(seedCommit, app.name);
    for (const app of argoApps)
      if (app.syncPolicy !== null) await estate.waitArgoSynced(app.name, seedCommit, { healthy: false });
  } catch (e) {
    await estate.teardown().catch(() => undefined);
    throw e;
  }
  return estate;
}

/**
 * Deletes the estate: prune off first (deleting a pruning Kustomization makes Flux delete its objects, which the
 * prune policy holds in a governed namespace; Argo CD's Applications carry no deletion finalizer here), then the
 * Kustomizations, Applications, the source, the namespace and the repository.
 */
async function teardownEstate(e: {
  cluster: string;
  id: string;
  namespace: string;
  kustomizations: string[];
  applications: string[];
  forge: ForgeState;
  repo: string;
}): Promise<void> {
  const { cluster, id } = e;
  for (const k of e.kustomizations)
    try {
      kubectl(cluster, ['-n', 'flux-system', 'patch', 'kustomization', k, '--type=merge', '-p', NO_PRUNE]);
    } catch {
      /* already gone */
    }
  for (const k of e.kustomizations)
    kubectl(cluster, ['-n', 'flux-system', 'delete', 'kustomization', k, '--ignore-not-found', '--wait=false']);
  for (const a of e.applications)
    kubectl(cluster, ['-n', 'argocd', 'delete', 'application', a, '--ignore-not-found', '--wait=false']);
  kubectl(cluster, ['-n', 'flux-system', 'delete', 'gitrepository', id, '--ignore-not-found', '--wait=false']);
  kubectl(cluster, ['delete', 'namespace', e.namespace, '--ignore-not-found', '--wait=false']);
  await waitFor(`${id}'s Kustomizations gone`, async () => e.kustomizations.every((k) => !exists(cluster, k)), {
    timeoutMs: 60_000,
    intervalMs: 500,
  }).catch(() => undefined);
  await deleteForgeRepo(e.forge, e.repo);
}

function exists(cluster: string, kustomization: string): boolean {
  try {
    getJson(cluster, ['-n', 'flux-system', 'get', 'kustomization', kustomization]);
    return true;
  } catch {
    return false;
  }
}

const NO_PRUNE = JSON.stringify({ spec: { prune: false, suspend: true } });
