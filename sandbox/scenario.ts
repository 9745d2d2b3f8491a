// Scenario helpers for tests and demos: change Git, change live state as a
// given field manager, inject faults, wait for Flux and Argo CD (their real controllers), sync an Argo CD app. Git is the forge's repo
// (state.git.url): read anonymously, pushed to as the forge admin.
//
// By job: the seed repo (scenario-git.ts), live objects (scenario-kube.ts), Flux (scenario-flux.ts), Argo CD
// (scenario-argo.ts), the forge, registry and business endpoints (scenario-forge.ts); this module re-exports them
// all, and holds the faults and the wait for a started sandbox.
import { kubectl, mustState, type SandboxState } from './state.ts';
import { sleep, waitFor } from './procs.ts';
import { makeForgeReachable, makeForgeUnreachable } from './scenario-forge.ts';
import { repoHead } from './scenario-git.ts';
import { annotateServiceAsController, getJson } from './scenario-kube.ts';
import { waitForKustomizationRevision } from './scenario-flux.ts';
import { waitForArgoSynced } from './scenario-argo.ts';

type Json = Record<string, unknown>;

export {
  changedBetween,
  commitAndPush,
  commitAndPushRetrying,
  deleteBranch,
  makeRenderEmpty,
  mergeBranch,
  readRepoFile,
  readRepoFileAt,
  removeFromGit,
  repoHead,
  writeRepoFile,
} from './scenario-git.ts';
export {
  annotateServiceAsController,
  getJson,
  incidentEditRenderWorker,
  kubectlEdit,
  kubectlScale,
  scaleAsController,
  waitForDeploymentAvailable,
} from './scenario-kube.ts';
export {
  patchFluxSpec,
  requestReconcile,
  setKustomizationPath,
  setSuspended,
  suspendSettled,
  waitForKustomizationRevision,
  waitForRevisionPrunedByAdmin,
} from './scenario-flux.ts';
export { argoApp, argoRefresh, argoSync, argoTerminateOp, resetLedger, waitForArgoSynced } from './scenario-argo.ts';

/** Makes the Git source the controllers fetch (the forge) unreachable: its process is stopped. */
export async function gitOffline(): Promise<void> {
  await makeForgeUnreachable();
}
/** The forge back, on the same URL. */
export async function gitOnline(): Promise<void> {
  await makeForgeReachable();
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

// forge, registry and business-endpoint scenarios
export * from './scenario-forge.ts';
