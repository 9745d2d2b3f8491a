// The seed's Argo CD family (issues 24 and 25; re-exported by seed.ts): what the ApplicationSets generate from,
// the ledger app's sync phases and waves, the checkout Rollout's canary, and the helpers tests break them with.
import { SEED_IMAGE_HOST, deployment, service } from './seed-manifests.ts';

/**
 * What the two seeded ApplicationSets generate from (issue 24; sandbox/flux-objects.ts argoObjects): `argo/web/<env>`
 * for the Git directory generator of `web` (one Application per directory: web-dev, web-staging; `prod` is the
 * prod cluster's and excluded on nonprod), and `argo/tenant`, one kustomization the list generator of `tenants`
 * renders once per tenant with a name prefix.
 */
export function appSetFiles(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const env of ['dev', 'staging', 'prod']) Object.assign(files, webDirFiles(env));
  files['argo/tenant/kustomization.yaml'] = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - config.yaml
`;
  files['argo/tenant/config.yaml'] = `apiVersion: v1
kind: ConfigMap
metadata:
  name: tenant-config
data:
  QUOTA_CPU: "2"
`;
  return files;
}

/** One directory of the `web` ApplicationSet's Git generator: a Deployment and its ConfigMap. */
export function webDirFiles(env: string): Record<string, string> {
  return {
    [`argo/web/${env}/deployment.yaml`]: deployment(
      'web-frontend',
      `${SEED_IMAGE_HOST}/digital-human/edge-gateway:0.9.3`,
      8080,
    ),
    [`argo/web/${env}/config.yaml`]: `apiVersion: v1
kind: ConfigMap
metadata:
  name: web-frontend-config
data:
  ENVIRONMENT: ${env}
`,
  };
}

/**
 * A workload whose new Pods never start: its pod template asks for a node label no node has (the scheduler leaves
 * them Pending, Unschedulable), so its rollout never finishes (a failing container is no good for this in kwok:
 * its Pods are Ready for a second before they fail, long enough for a rollout to count as done).
 */
export function unschedulable(doc: string): string {
  return doc.replace(/^( {6})containers:$/m, '$1nodeSelector:\n$1  disktype: nvme-gen5\n$1containers:');
}

/** The label that makes kwok fail a pod's containers (its pod-container-running-failed stage). */
export const KWOK_FAIL_LABEL = 'pod-container-running-failed.stage.kwok.x-k8s.io';

const job = (name: string, hook: string, command: string) => `apiVersion: batch/v1
kind: Job
metadata:
  name: ${name}
  annotations:
    argocd.argoproj.io/hook: ${hook}
    argocd.argoproj.io/hook-delete-policy: BeforeHookCreation
spec:
  backoffLimit: 0
  template:
    metadata:
      labels:
        app.kubernetes.io/name: ${name}
    spec:
      restartPolicy: Never
      containers:
        - name: ${name.split('-').pop()}
          image: ${SEED_IMAGE_HOST}/digital-human/edge-gateway:0.9.3
          command: [${command}]
`;

/**
 * `argo/ledger`, Argo CD's sync phases and waves (issue 24): a database migration Job as a PreSync hook, wave 0
 * config, wave 1 workloads (a Deployment that gives up after 60 s without progress, so a failing rollout ends
 * the sync instead of holding it for Kubernetes' default 10 min), and a PostSync smoke-test Job. Reconciled by the
 * Application `ledger-staging` on nonprod.
 */
export function ledgerFiles(): Record<string, string> {
  const wave = (n: number, doc: string) =>
    doc.replace(/^metadata:\n/m, `metadata:\n  annotations:\n    argocd.argoproj.io/sync-wave: "${n}"\n`);
  return {
    'argo/ledger/db-migrate.yaml': job('ledger-db-migrate', 'PreSync', '"ledger", "migrate", "--to", "latest"'),
    'argo/ledger/config.yaml': wave(
      0,
      `apiVersion: v1
kind: ConfigMap
metadata:
  name: ledger-config
data:
  LEDGER_MODE: strict
`,
    ),
    'argo/ledger/deployment.yaml': wave(
      1,
      deployment('ledger', `${SEED_IMAGE_HOST}/digital-human/edge-gateway:0.9.3`, 8080).replace(
        'spec:\n  replicas: 1\n',
        'spec:\n  replicas: 2\n  progressDeadlineSeconds: 60\n',
      ),
    ),
    'argo/ledger/service.yaml': wave(1, service('ledger', 8080)),
    'argo/ledger/smoke-test.yaml': job('ledger-smoke-test', 'PostSync', '"ledger", "smoke-test"'),
  };
}

/** The image the checkout Rollout runs at first (a canary is a commit that changes it). */
export const CHECKOUT_IMAGE = `${SEED_IMAGE_HOST}/digital-human/edge-gateway:0.9.3`;

/**
 * `argo/checkout` (issue 25): a Rollout with a canary — 20 % → a 30 s pause → the business check (a
 * ClusterAnalysisTemplate the sandbox applies, sandbox/rollouts.ts: the web provider against the staging business
 * endpoint, so a canary can really fail) → 50 % → a 10 s pause → full — and its Service. No traffic router: the
 * weights are replica counts (5 replicas: 1, then 3 canary Pods). Reconciled by the Argo CD Application
 * `checkout-staging` on nonprod.
 */
export function checkoutFiles(image = CHECKOUT_IMAGE): Record<string, string> {
  return {
    'argo/checkout/rollout.yaml': `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: checkout
spec:
  replicas: 5
  revisionHistoryLimit: 2
  selector:
    matchLabels:
      app.kubernetes.io/name: checkout
  template:
    metadata:
      labels:
        app.kubernetes.io/name: checkout
    spec:
      containers:
        - name: checkout
          image: ${image}
          ports:
            - containerPort: 8080
  strategy:
    canary:
      steps:
        - setWeight: 20
        - pause:
            duration: 30s
        - analysis:
            templates:
              - templateName: business-check-staging
                clusterScope: true
        - setWeight: 50
        - pause:
            duration: 10s
`,
    'argo/checkout/service.yaml': service('checkout', 8080),
  };
}
