// The GitOps controllers' own identities in each sandbox cluster, as a real install has them: a ServiceAccount
// per controller with the RBAC its project ships, and a token for it (TokenRequest API, `kubectl create token`),
// so the apiserver, its audit and the console's admission policy (deploy/prune-admission-policy.yaml) can
// tell the controllers apart from the sandbox admin and from each other.
//
//   flux-system/source-controller              crd-controller-flux-system (Flux's own objects, events, leases)
//   flux-system/kustomize-controller           the same + cluster-admin (Flux's cluster-reconciler binding)
//   flux-system/helm-controller                the same as kustomize-controller (installs the HelmReleases' charts)
//   flux-system/image-reflector-controller     its shipped ClusterRole (image repositories and policies), Secrets
//                                              read in flux-system (sandbox/image-automation.ts)
//   flux-system/image-automation-controller    its shipped ClusterRole (image update automations, policies and
//                                              GitRepositories read), Secrets read in flux-system
//   argocd/argocd-application-controller       argocd-application-controller (Argo CD's: every verb on
//                                              everything; sandbox/argocd.ts runs the real controller with it)
//   argocd/argocd-applicationset-controller    its shipped Role in argocd (Applications, ApplicationSets)
//   argo-rollouts/argo-rollouts                Argo Rollouts' shipped ClusterRole (sandbox/rollouts.ts)
//   flagger-system/flagger                     Flagger's shipped ClusterRole (sandbox/flagger.ts)
//   external-secrets/external-secrets          the controller ClusterRole of ESO's chart (sandbox/eso.ts)
//
// Each controller process runs with `<cluster dir>/kubeconfig-<service account>`. The tokens are minted at
// cluster start for a year; they stay valid across an apiserver restart (same signing key, same issuer).
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ASSETS_DIR, REPO_ROOT, bin, readState, runKubectl } from './state.ts';
import { esoRbac } from './eso.ts';
import { imageAutomationRbac } from './image-automation.ts';

const execFileP = promisify(execFile);

export const CONTROLLER_IDENTITIES = {
  'source-controller': 'flux-system',
  'kustomize-controller': 'flux-system',
  'helm-controller': 'flux-system',
  'image-reflector-controller': 'flux-system',
  'image-automation-controller': 'flux-system',
  'argocd-application-controller': 'argocd',
  'argocd-applicationset-controller': 'argocd',
  'argo-rollouts': 'argo-rollouts',
  flagger: 'flagger-system',
  'external-secrets': 'external-secrets',
} as const;
export type ControllerIdentity = keyof typeof CONTROLLER_IDENTITIES;

/** The Kubernetes user name of a controller identity (what admission policies and the audit log see). */
export const identityUser = (sa: ControllerIdentity): string =>
  `system:serviceaccount:${CONTROLLER_IDENTITIES[sa]}:${sa}`;

/** The namespace label that puts a namespace under the console's prune approval (the sandbox's env namespaces). */
export const GOVERNED_LABEL = 'gitops-console.dev/governed';

/** What Flux (flux2 manifests/rbac) and Argo CD (argo-cd manifests/cluster-rbac) ship, trimmed to these controllers. */
const CONTROLLER_RBAC = `apiVersion: v1
kind: ServiceAccount
metadata:
  name: source-controller
  namespace: flux-system
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: kustomize-controller
  namespace: flux-system
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: helm-controller
  namespace: flux-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: crd-controller-flux-system
rules:
  - apiGroups: [source.toolkit.fluxcd.io, kustomize.toolkit.fluxcd.io, helm.toolkit.fluxcd.io, notification.toolkit.fluxcd.io, image.toolkit.fluxcd.io]
    resources: ['*']
    verbs: ['*']
  - apiGroups: ['']
    resources: [namespaces, secrets, configmaps, serviceaccounts]
    verbs: [get, list, watch]
  - apiGroups: ['']
    resources: [events]
    verbs: [create, patch]
  - apiGroups: [events.k8s.io]
    resources: [events]
    verbs: [create, patch]
  - apiGroups: ['']
    resources: [configmaps]
    verbs: [get, list, watch, create, update, patch, delete]
  - apiGroups: ['']
    resources: [configmaps/status]
    verbs: [get, update, patch]
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    verbs: ['*']
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: crd-controller-flux-system
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: crd-controller-flux-system
subjects:
  - kind: ServiceAccount
    name: source-controller
    namespace: flux-system
  - kind: ServiceAccount
    name: kustomize-controller
    namespace: flux-system
  - kind: ServiceAccount
    name: helm-controller
    namespace: flux-system
---
# Flux's default: kustomize-controller (and helm-controller) apply whatever Git holds, as cluster-admin
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: cluster-reconciler-flux-system
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cluster-admin
subjects:
  - kind: ServiceAccount
    name: kustomize-controller
    namespace: flux-system
  - kind: ServiceAccount
    name: helm-controller
    namespace: flux-system
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: argocd-application-controller
  namespace: argocd
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: argocd-application-controller
rules:
  - apiGroups: ['*']
    resources: ['*']
    verbs: ['*']
  - nonResourceURLs: ['*']
    verbs: ['*']
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: argocd-application-controller
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: argocd-application-controller
subjects:
  - kind: ServiceAccount
    name: argocd-application-controller
    namespace: argocd
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: argocd-applicationset-controller
  namespace: argocd
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: argocd-applicationset-controller
  namespace: argocd
rules:
  - apiGroups: [argoproj.io]
    resources: [applications, applicationsets, applicationsets/finalizers]
    verbs: [create, delete, get, list, patch, update, watch]
  - apiGroups: [argoproj.io]
    resources: [appprojects]
    verbs: [get, list, watch]
  - apiGroups: [argoproj.io]
    resources: [applicationsets/status]
    verbs: [get, patch, update]
  - apiGroups: ['']
    resources: [events]
    verbs: [create, get, list, patch, watch]
  - apiGroups: ['']
    resources: [secrets, configmaps]
    verbs: [get, list, watch]
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    verbs: [create]
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    resourceNames: [58ac56fa.applicationsets.argoproj.io]
    verbs: [get, update, create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: argocd-applicationset-controller
  namespace: argocd
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: argocd-applicationset-controller
subjects:
  - kind: ServiceAccount
    name: argocd-applicationset-controller
    namespace: argocd
`;

/** Where a cluster keeps the kubeconfig of a controller identity. */
export const identityKubeconfigPath = (clusterDir: string, sa: ControllerIdentity): string =>
  join(clusterDir, `kubeconfig-${sa}`);

/**
 * Argo Rollouts' identity: its namespace and ServiceAccount, the ClusterRole it ships (copied by build.sh from the
 * version that runs) and the binding. Not a GitOps controller for the prune policy: it scales and deletes its own
 * ReplicaSets in the governed namespaces, which nothing should hold.
 */
function rolloutsRbac(): string {
  const role = join(ASSETS_DIR, 'rollouts', 'clusterrole.yaml');
  if (!existsSync(role)) return '';
  return `apiVersion: v1
kind: Namespace
metadata:
  name: argo-rollouts
  labels:
    env: system
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: argo-rollouts
  namespace: argo-rollouts
---
${readFileSync(role, 'utf8').trim()}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: argo-rollouts
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: argo-rollouts
subjects:
  - kind: ServiceAccount
    name: argo-rollouts
    namespace: argo-rollouts
`;
}

/** Flagger's identity: the ServiceAccount and the ClusterRole and binding it ships (copied by build.sh). */
function flaggerRbac(): string {
  const rbac = join(ASSETS_DIR, 'flagger', 'rbac.yaml');
  if (!existsSync(rbac)) return '';
  return `apiVersion: v1
kind: Namespace
metadata:
  name: flagger-system
  labels:
    env: system
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: flagger
  namespace: flagger-system
---
${readFileSync(rbac, 'utf8').trim()}
`;
}

function tokenKubeconfig(cluster: string, server: string, caCert: string, user: string, token: string): string {
  const ca = readFileSync(caCert).toString('base64');
  return `apiVersion: v1
kind: Config
clusters:
- name: ${cluster}
  cluster:
    server: ${server}
    certificate-authority-data: ${ca}
users:
- name: ${user}
  user:
    token: ${token}
contexts:
- name: ${cluster}
  context:
    cluster: ${cluster}
    user: ${user}
current-context: ${cluster}
preferences: {}
`;
}

/**
 * Creates the controllers' ServiceAccounts and RBAC with the admin kubeconfig, mints a token per identity
 * (TokenRequest, 8760h) and writes a kubeconfig for each. Returns the kubeconfig path per identity.
 */
export async function ensureControllerIdentities(c: {
  name: string;
  dir: string;
  apiserver: string;
  kubeconfig: string;
  caCert: string;
}): Promise<Record<ControllerIdentity, string>> {
  const kubectlArgs = ['--kubeconfig', c.kubeconfig];
  await new Promise<void>((resolve, reject) => {
    const child = execFile(
      bin('kubectl'),
      [...kubectlArgs, 'apply', '--server-side', '--field-manager=sandbox', '-f', '-'],
      { timeout: 60_000 },
      (err, _stdout, stderr) => (err ? reject(new Error(`controller RBAC: ${stderr || err.message}`)) : resolve()),
    );
    child.stdin?.end(
      [CONTROLLER_RBAC, rolloutsRbac(), flaggerRbac(), esoRbac(), imageAutomationRbac()].join('\n---\n'),
    );
  });
  const out = {} as Record<ControllerIdentity, string>;
  await Promise.all(
    (Object.entries(CONTROLLER_IDENTITIES) as Array<[ControllerIdentity, string]>).map(async ([sa, ns]) => {
      const { stdout } = await execFileP(
        bin('kubectl'),
        [...kubectlArgs, 'create', 'token', sa, '-n', ns, '--duration=8760h'],
        { timeout: 60_000 },
      );
      const path = identityKubeconfigPath(c.dir, sa);
      writeFileSync(path, tokenKubeconfig(c.name, c.apiserver, c.caCert, identityUser(sa), stdout.trim()), {
        mode: 0o600,
      });
      out[sa] = path;
    }),
  );
  return out;
}

/**
 * The console's prune admission policy exactly as shipped in deploy/ (re-applied on reuse, like its RBAC), and
 * the governed label on the cluster's environment namespaces. The file creates the approvals ConfigMap (empty)
 * before its policies; the label goes on after, retried while the apiserver starts using a new policy (its
 * parameter informer syncs first: until then a request it matches is refused). The stamp-only policy of earlier
 * sandboxes is removed.
 */
export async function applyPruneAdmissionPolicy(kubeconfig: string, envNamespaces: string[]): Promise<void> {
  const k = (args: string[]) =>
    execFileP(bin('kubectl'), ['--kubeconfig', kubeconfig, ...args], { timeout: 60_000 }).catch((e: unknown) => {
      const err = e as { stderr?: string; message: string };
      throw new Error(`kubectl ${args.join(' ')}: ${err.stderr?.trim() || err.message}`);
    });
  await k([
    ...['delete', 'validatingadmissionpolicy,validatingadmissionpolicybinding'],
    ...['gitops-console-prune-approval-stamp', '--ignore-not-found'],
  ]);
  await k([
    ...['apply', '--server-side', '--field-manager=sandbox', '--force-conflicts'],
    ...['-f', join(REPO_ROOT, 'deploy', 'prune-admission-policy.yaml')],
  ]);
  if (!envNamespaces.length) return;
  for (let attempt = 1; ; attempt++) {
    try {
      await k(['label', '--overwrite', 'namespace', ...envNamespaces, `${GOVERNED_LABEL}=true`]);
      return;
    } catch (e) {
      if (attempt >= 20) throw e;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** The kubeconfig of a controller identity in a running sandbox cluster; undefined for a sandbox older than them. */
export function identityKubeconfig(cluster: string, sa: ControllerIdentity): string | undefined {
  const c = readState()?.clusters.find((x) => x.name === cluster);
  if (!c) return undefined;
  const path = identityKubeconfigPath(c.dir, sa);
  return existsSync(path) ? path : undefined;
}

/** kubectl as a controller identity (its ServiceAccount token). Throws when the sandbox has no such identity. */
export function kubectlAs(cluster: string, sa: ControllerIdentity, args: string[], input?: string): string {
  const kc = identityKubeconfig(cluster, sa);
  if (!kc)
    throw new Error(`the sandbox cluster ${cluster} has no ${sa} identity (restart it: npm run sandbox -- down, up)`);
  return runKubectl(kc, args, input, `kubectl as ${sa} ${args.join(' ')} (${cluster})`);
}
