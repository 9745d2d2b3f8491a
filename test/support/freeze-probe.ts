// A Flux app of its own for freeze tests on the sandbox, whose Git a test controls: a bare repository served by
// a local Git server (./git-http-server.ts: slow or broken on demand; the sandbox's source-controller and the
// console both fetch from it on 127.0.0.1), a GitRepository on it and a Kustomization of one ConfigMap
// (`data.mode: normal`). prune is off, so removing the probe deletes nothing by the controller.
import { randomBytes } from 'node:crypto';
import { kubectl } from '../../sandbox/state.ts';
import { requestReconcile } from '../../sandbox/scenario.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { startGitHttpServer, type GitHttpServer } from './git-http-server.ts';

export interface FreezeProbe {
  git: GitHttpServer;
  /** the GitRepository, the Kustomization and the ConfigMap */
  name: string;
  appId: string;
  repoUrl: string;
  /** the ConfigMap's data.mode on the cluster now */
  liveMode(): string;
  /** whether its Kustomization is suspended (frozen) now */
  suspended(): boolean;
  /** a hand edit of data.mode (a merge patch by field manager `incident-fix`) */
  editMode(value: string): void;
  remove(): Promise<void>;
}

export async function startFreezeProbe(cluster: string, namespace: string): Promise<FreezeProbe> {
  const git = await startGitHttpServer();
  // unique across the files that run at once (each freeze file has its own probe)
  const name = `freeze-probe-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
  git.createRepo('probe', {
    'probe/kustomization.yaml':
      'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - configmap.yaml\n',
    'probe/configmap.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\ndata:\n  mode: normal\n`,
  });
  const repoUrl = git.url('probe');
  const objects = `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: ${name}
  namespace: flux-system
spec:
  url: ${repoUrl}
  interval: 10s
  timeout: 20s
  ref:
    branch: main
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: ${name}
  namespace: flux-system
  labels:
    env: ${namespace}
spec:
  interval: 15s
  retryInterval: 5s
  timeout: 2m
  path: ./probe
  prune: false
  wait: false
  sourceRef:
    kind: GitRepository
    name: ${name}
`;
  kubectl(cluster, ['apply', '-f', '-'], objects);
  const liveMode = () =>
    kubectl(cluster, ['-n', namespace, 'get', 'configmap', name, '-o', 'jsonpath={.data.mode}']).trim();
  await waitFor(
    `${name} applied by Flux`,
    async () => {
      requestReconcile(cluster, 'gitrepository', name);
      requestReconcile(cluster, 'kustomization', name);
      return liveMode() === 'normal';
    },
    { timeoutMs: 120_000, intervalMs: 2000 },
  );
  return {
    git,
    name,
    appId: `${cluster}/flux-system/kustomization/${name}`,
    repoUrl,
    liveMode,
    suspended: () =>
      kubectl(cluster, ['-n', 'flux-system', 'get', 'kustomization', name, '-o', 'jsonpath={.spec.suspend}']).trim() ===
      'true',
    editMode(value) {
      kubectl(cluster, [
        '-n',
        namespace,
        'patch',
        'configmap',
        name,
        '--type',
        'merge',
        '--field-manager',
        'incident-fix',
        '-p',
        JSON.stringify({ data: { mode: value } }),
      ]);
    },
    async remove() {
      try {
        for (const kind of ['kustomization', 'gitrepository'])
          kubectl(cluster, ['-n', 'flux-system', 'delete', kind, name, '--ignore-not-found', '--wait=false']);
        kubectl(cluster, ['-n', namespace, 'delete', 'configmap', name, '--ignore-not-found']);
      } finally {
        await git.close();
      }
    },
  };
}
