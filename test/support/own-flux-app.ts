// A Flux app of a test's own in the sandbox's seed repo: its namespace, its files under `dir`, a Kustomization
// (env dev) applying them into that namespace; ready once every named object exists live. Removed again (files,
// Kustomization, namespace) by removeOwnFluxApp. The repo is shared: another test may push meanwhile, so
// "applied" means at this commit or a later one that still holds `dir`.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../../sandbox/procs.ts';
import { commitAndPush, requestReconcile, writeRepoFile } from '../../sandbox/scenario.ts';
import { kubectl } from '../../sandbox/state.ts';

export interface OwnFluxApp {
  cluster: string;
  /** the namespace, and the Kustomization's name in flux-system */
  name: string;
  /** the directory in the seed repo */
  dir: string;
  /** the field manager that creates the namespace and the Kustomization */
  fieldManager: string;
}

export async function applyOwnFluxApp(
  app: OwnFluxApp,
  files: Record<string, string>,
  /** kubectl get arguments (`deployment/web`) of the objects that must exist live */
  objects: string[],
): Promise<void> {
  const { cluster, name, dir, fieldManager } = app;
  const apply = (o: unknown) =>
    kubectl(cluster, ['apply', '--server-side', `--field-manager=${fieldManager}`, '-f', '-'], JSON.stringify(o));
  apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  commitAndPush(`${name} test: an app of its own`, (w) => {
    for (const [f, text] of Object.entries(files)) writeRepoFile(w, `${dir}/${f}`, text);
  });
  apply({
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name, namespace: 'flux-system', labels: { env: 'dev' } },
    spec: {
      interval: '10m',
      path: `./${dir}`,
      targetNamespace: name,
      prune: true,
      sourceRef: { kind: 'GitRepository', name: 'digital-human' },
    },
  });
  let nudged = 0;
  await waitFor(
    `the ${name} app applied`,
    async () => {
      if (Date.now() - nudged > 5000) {
        nudged = Date.now();
        requestReconcile(cluster, 'gitrepository', 'digital-human');
        requestReconcile(cluster, 'kustomization', name);
      }
      const live = kubectl(cluster, ['-n', name, 'get', ...objects, '--ignore-not-found', '-o', 'name']);
      return live.split('\n').filter(Boolean).length === objects.length;
    },
    { timeoutMs: 180_000, intervalMs: 1000 },
  );
}

export function removeOwnFluxApp(app: OwnFluxApp): void {
  const { cluster, name, dir } = app;
  commitAndPush(`${name} test: remove its app`, (w) => rmSync(join(w, dir), { recursive: true, force: true }));
  kubectl(cluster, ['-n', 'flux-system', 'delete', 'kustomization', name, '--ignore-not-found', '--wait=false']);
  kubectl(cluster, ['delete', 'namespace', name, '--ignore-not-found', '--wait=false']);
}
