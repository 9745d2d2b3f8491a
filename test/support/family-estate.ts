// One app in three environments on a test file's own estate (./own-estate.ts): the seed's digital-human service
// (base/ and overlays/dev|staging|prod/) in the estate's repository, reconciled by three Flux Kustomizations named
// like the seed's family (`<id>-dev`, `<id>-staging`, `<id>-prod`: the console's "same app" across environments
// is the same source URL and the name without its env suffix), each into a namespace of its own mapped to its
// environment (`t-dev-<id>` and `t-staging-<id>` on nonprod, `t-prod-<id>` on prod; the prod cluster has its own
// GitRepository on the same repository). Only the test pushes there; teardown deletes all of it.
//
//   const fam = await familyEstate('releases');
//   const sha = fam.estate.push('…', (w) => …);
//   await fam.waitApplied(sha, 'dev');
//   …
//   await fam.teardown();
import { waitFor } from '../../sandbox/procs.ts';
import { getJson, requestReconcile, waitForKustomizationRevision } from '../../sandbox/scenario.ts';
import { seedFiles } from '../../sandbox/seed.ts';
import { kubectl } from '../../sandbox/state.ts';
import { ownEstate, type Estate, type EstateEnv } from './own-estate.ts';

const LABEL = 'gitops-console.dev/test-estate';
const CLUSTER: Record<EstateEnv, string> = { dev: 'nonprod', staging: 'nonprod', prod: 'prod' };
const ENVS: EstateEnv[] = ['dev', 'staging', 'prod'];

export interface FamilyEstate {
  /** the dev estate: its repository (push, forge, state) is the family's */
  estate: Estate;
  cluster(env: EstateEnv): string;
  namespace(env: EstateEnv): string;
  /** an environment's Kustomization (`<id>-<env>`) */
  kustomization(env: EstateEnv): string;
  /** an environment's app id in the console */
  appId(env: EstateEnv): string;
  /** asks the family's GitRepositories to fetch now (at most every 5 s): for a commit Flux will not apply */
  fetch(): void;
  /** until that environment's Kustomization applied `sha` (or a later commit pushed through the estate) and is Ready */
  waitApplied(sha: string, env: EstateEnv, timeoutMs?: number): Promise<void>;
  teardown(): Promise<void>;
}

/** The seed's digital-human files (base/ and the three overlays). */
function familyTemplate(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(seedFiles()).filter(
      ([p]) => p.startsWith('base/') || ENVS.some((e) => p.startsWith(`overlays/${e}/`)),
    ),
  );
}

export async function familyEstate(name: string): Promise<FamilyEstate> {
  const estate = await ownEstate({
    name,
    env: 'dev',
    files: familyTemplate(),
    apps: [{ name: 'dev', path: 'overlays/dev' }],
  });
  const { id } = estate;
  const namespace = (env: EstateEnv) => (env === 'dev' ? estate.namespace : `t-${env}-${id}`);
  const kustomization = (env: EstateEnv) => `${id}-${env}`;
  const apply = (cluster: string, o: unknown) =>
    kubectl(cluster, ['apply', '--server-side', '--field-manager=test-estate', '-f', '-'], JSON.stringify(o));
  const labels = { [LABEL]: id };
  const made: Array<{ cluster: string; args: string[] }> = [];
  const teardown = async () => {
    // prune off first (a pruning Kustomization's deletion deletes its objects), then the rest, then the estate
    for (const env of ['staging', 'prod'] as const)
      try {
        kubectl(CLUSTER[env], [
          ...['-n', 'flux-system', 'patch', 'kustomization', kustomization(env), '--type=merge', '-p'],
          JSON.stringify({ spec: { prune: false, suspend: true } }),
        ]);
      } catch {
        /* not made, or gone */
      }
    for (const m of made.reverse())
      try {
        kubectl(m.cluster, [...m.args, '--ignore-not-found', '--wait=false']);
      } catch {
        /* gone */
      }
    await waitFor(
      `${id}'s staging and prod Kustomizations gone`,
      async () =>
        (['staging', 'prod'] as const).every((env) => {
          try {
            getJson(CLUSTER[env], ['-n', 'flux-system', 'get', 'kustomization', kustomization(env)]);
            return false;
          } catch {
            return true;
          }
        }),
      { timeoutMs: 60_000, intervalMs: 500 },
    ).catch(() => undefined);
    await estate.teardown();
  };
  let fetched = 0;
  const fam: FamilyEstate = {
    fetch() {
      if (Date.now() - fetched < 5000) return;
      fetched = Date.now();
      for (const cluster of new Set(Object.values(CLUSTER))) requestReconcile(cluster, 'gitrepository', estate.source);
    },
    estate,
    cluster: (env) => CLUSTER[env],
    namespace,
    kustomization,
    appId: (env) => `${CLUSTER[env]}/flux-system/kustomization/${kustomization(env)}`,
    waitApplied: (sha, env, timeoutMs = 180_000) =>
      waitForKustomizationRevision(CLUSTER[env], kustomization(env), sha, timeoutMs, estate.atOrAfter(sha).slice(1)),
    teardown,
  };
  try {
    for (const env of ['staging', 'prod'] as const) {
      const cluster = CLUSTER[env];
      apply(cluster, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace(env), labels } });
      made.push({ cluster, args: ['delete', 'namespace', namespace(env)] });
      if (cluster !== estate.cluster) {
        apply(cluster, {
          apiVersion: 'source.toolkit.fluxcd.io/v1',
          kind: 'GitRepository',
          metadata: { name: estate.source, namespace: 'flux-system', labels },
          spec: { url: estate.forge.repo.cloneUrl, interval: '10m', timeout: '20s', ref: { branch: 'main' } },
        });
        made.push({ cluster, args: ['-n', 'flux-system', 'delete', 'gitrepository', estate.source] });
      }
      apply(cluster, {
        apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
        kind: 'Kustomization',
        metadata: { name: kustomization(env), namespace: 'flux-system', labels: { env, ...labels } },
        spec: {
          interval: '10m',
          retryInterval: '5s',
          timeout: '2m',
          path: `./overlays/${env}`,
          targetNamespace: namespace(env),
          prune: true,
          wait: false,
          sourceRef: { kind: 'GitRepository', name: estate.source },
        },
      });
      made.push({ cluster, args: ['-n', 'flux-system', 'delete', 'kustomization', kustomization(env)] });
    }
    for (const env of ['staging', 'prod'] as const) await fam.waitApplied(estate.seedCommit, env);
  } catch (e) {
    await teardown().catch(() => undefined);
    throw e;
  }
  return fam;
}
