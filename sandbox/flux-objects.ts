// The GitOps objects each sandbox cluster is given at start-up (sandbox/cluster.ts), all on the forge's seed
// repository (sandbox/seed.ts): Flux's GitRepository and each environment's Kustomizations (infra, then the app),
// Argo CD's AppProject and Applications, and on nonprod the seeded ApplicationSets.
import { SOPS_KEY_SECRET } from './sops.ts';

/**
 * how often Flux reapplies the seed's dev app (digital-human-dev) without a new commit: drift is reverted within
 * this, which Try-it's "Scale a Deployment by hand" shows (src/server/tryit/scenarios.ts)
 */
export const SEED_APP_INTERVAL = '15s';
/**
 * the seed's staging and prod apps: 1 m. Nobody waits on their periodic reapply (a new commit is applied as soon as
 * the source fetches it; tests and Try-it ask with "Reconcile now"). The idle sandbox used 18.4 core-s a minute
 * with these at 1 m, 21.3 with them at 15 s (measured: docs/develop/testing-measured.md)
 */
export const SEED_UPPER_APP_INTERVAL = '1m';
/** the seed's platform Kustomizations (infra-*, payments-staging): nobody waits on their periodic reapply */
export const SEED_INFRA_INTERVAL = '1m';

export function fluxObjects(namespaces: string[], gitUrl: string): string {
  const docs = [
    `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: digital-human
  namespace: flux-system
spec:
  url: ${gitUrl}
  interval: 10s
  timeout: 20s
  ref:
    branch: main
`,
  ];
  /**
   * one of the environment's Kustomizations on the seed repository; `spec` adds its own lines (2-space indent).
   * `interval`: how often Flux reapplies Git without a new commit (a new commit is applied when its source fetches
   * it). The dev app's 15 s is what Try-it's "Flux reverts it at its next reconcile" shows; infra's 1 m costs the
   * idle sandbox 8 core-s a minute less than 15 s (measured: docs/develop/testing-measured.md).
   */
  const kustomization = (
    name: string,
    env: string,
    path: string,
    spec: string,
    interval: string,
  ) => `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: ${name}
  namespace: flux-system
  labels:
    env: ${env}
spec:
  interval: ${interval}
  retryInterval: 5s
  timeout: 2m
  path: ${path}
  wait: false
${spec}  sourceRef:
    kind: GitRepository
    name: digital-human
`;
  for (const env of namespaces) {
    // infra first: the environment's platform objects (seed-infra.ts infraFiles), its Secrets decrypted with the
    // sandbox's age key (sops.ts); the app depends on it (issue 26)
    docs.push(
      kustomization(
        `infra-${env}`,
        env,
        `./infra/${env}`,
        `  prune: true\n  decryption:\n    provider: sops\n    secretRef:\n      name: ${SOPS_KEY_SECRET}\n`,
        SEED_INFRA_INTERVAL,
      ),
      kustomization(
        `digital-human-${env}`,
        env,
        `./overlays/${env}`,
        `  prune: ${env === 'prod' ? 'false' : 'true'}\n  dependsOn:\n    - name: infra-${env}\n`,
        env === 'dev' ? SEED_APP_INTERVAL : SEED_UPPER_APP_INTERVAL,
      ),
    );
  }
  return docs.join('---\n');
}

export function argoObjects(cluster: string, namespaces: string[], gitUrl: string, server: string): string {
  const env = namespaces.includes('staging') ? 'staging' : (namespaces[0] ?? cluster);
  return `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: default
  namespace: argocd
spec:
  sourceRepos: ['*']
  destinations:
    - namespace: '*'
      server: '*'
  clusterResourceWhitelist:
    - group: '*'
      kind: '*'
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: edge-gateway-${env}
  namespace: argocd
  labels:
    env: ${env}
spec:
  project: default
  source:
    repoURL: ${gitUrl}
    targetRevision: main
    path: argo/edge-gateway
  destination:
    server: ${server}
    namespace: ${env}
  syncPolicy:
    automated:
      prune: ${env === 'prod' ? 'false' : 'true'}
      selfHeal: true${
        // both of Argo CD's apply modes are seeded: prod applies server-side (field manager argocd-controller,
        // Apply), the others client-side (kubectl apply's last-applied annotation, argocd-controller, Update)
        env === 'prod' ? '\n    syncOptions:\n      - ServerSideApply=true' : ''
      }
${
  // sync phases and waves (sandbox/seed-argo.ts ledgerFiles): PreSync migration, wave 0 config, wave 1 workloads,
  // PostSync smoke test
  env === 'staging'
    ? `---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: ledger-staging
  namespace: argocd
  labels:
    env: staging
spec:
  project: default
  source:
    repoURL: ${gitUrl}
    targetRevision: main
    path: argo/ledger
  destination:
    server: ${server}
    namespace: staging
  syncPolicy:
    automated:
      prune: true
      selfHeal: true
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: checkout-staging
  namespace: argocd
  labels:
    env: staging
spec:
  project: default
  source:
    repoURL: ${gitUrl}
    targetRevision: main
    path: argo/checkout
  destination:
    server: ${server}
    namespace: staging
  syncPolicy:
    automated:
      prune: true
      selfHeal: true
---
${appSetObjects(gitUrl, server)}`
    : ''
}`;
}

/**
 * The seeded ApplicationSets (nonprod; issue 24): `web`, a Git directory generator over argo/web/* (one
 * Application per environment directory, prod excluded: it is the prod cluster's), and `tenants`, a list
 * generator (one Application per element, kustomize name prefix). Their shrink is held by the console's admission
 * policy (deploy/prune-admission-policy.yaml gitops-console-appset-shrink).
 */
export function appSetObjects(gitUrl: string, server: string): string {
  const policy = `  syncPolicy:
        automated:
          prune: true
          selfHeal: true`;
  return `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: web
  namespace: argocd
spec:
  generators:
    - git:
        repoURL: ${gitUrl}
        revision: main
        requeueAfterSeconds: 15
        directories:
          - path: argo/web/*
          - path: argo/web/prod
            exclude: true
  template:
    metadata:
      name: 'web-{{path.basename}}'
      labels:
        env: '{{path.basename}}'
    spec:
      project: default
      source:
        repoURL: ${gitUrl}
        targetRevision: main
        path: '{{path}}'
      destination:
        server: ${server}
        namespace: '{{path.basename}}'
    ${policy}
---
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: tenants
  namespace: argocd
spec:
  generators:
    - list:
        elements:
          - tenant: alpha
          - tenant: beta
          - tenant: gamma
  template:
    metadata:
      name: 'tenant-{{tenant}}'
      labels:
        env: staging
    spec:
      project: default
      source:
        repoURL: ${gitUrl}
        targetRevision: main
        path: argo/tenant
        kustomize:
          namePrefix: '{{tenant}}-'
      destination:
        server: ${server}
        namespace: staging
    ${policy}
`;
}
