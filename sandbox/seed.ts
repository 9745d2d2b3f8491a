// The seed GitOps repository: the "digital-human" services in base/ plus
// overlays/{dev,staging,prod}, and a plain directory Argo CD
// Applications point at. Written as files, committed with git, pushed to the
// sandbox's smart-HTTP git server.

import { helmReleaseFiles } from './helm-charts.ts';
import { readFileSync } from 'node:fs';
import { generatedSeedPath } from './sops.ts';
import { RUN_DIR } from './state.ts';

export const SEED_REPO = 'digital-human';

/** The image host the seed names; the sandbox registry serves it as a mirror (sandbox/registry.ts). */
export const SEED_IMAGE_HOST = 'registry.example.com';
/**
 * prod pins the render worker by digest: the real digest of the sandbox registry's
 * `digital-human/render-worker:1.4.2` (images are deterministic; startRegistry checks it).
 */
export const PROD_RENDER_WORKER_DIGEST = 'sha256:8cc8fc4c2c2e86f074aa1b0fb7744683cad5476c3d8b98f3df8d249fc6dc0c90';
/**
 * The Flux ImagePolicy dev's tts-gateway tag follows (sandbox/image-automation.ts): the seed marks that one line
 * with Flux's setter marker, so image-automation-controller rewrites the tag to the policy's choice.
 */
export const TTS_IMAGE_POLICY = { namespace: 'flux-system', name: 'tts-gateway' } as const;
const TTS_SETTER = `# {"$imagepolicy": "${TTS_IMAGE_POLICY.namespace}:${TTS_IMAGE_POLICY.name}:tag"}`;

const deployment = (name: string, image: string, port: number, extra = '') => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  labels:
    app.kubernetes.io/name: ${name}
    app.kubernetes.io/part-of: digital-human
spec:
  replicas: 1
  selector:
    matchLabels:
      app.kubernetes.io/name: ${name}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: ${name}
    spec:
      containers:
        - name: ${name.split('-')[0]}
          image: ${image}
          ports:
            - containerPort: ${port}
              name: http
          resources:
            requests:
              cpu: 100m
              memory: 128Mi
${extra}`;

const service = (name: string, port: number) => `apiVersion: v1
kind: Service
metadata:
  name: ${name}
  labels:
    app.kubernetes.io/name: ${name}
spec:
  selector:
    app.kubernetes.io/name: ${name}
  ports:
    - name: http
      port: 80
      protocol: TCP
      targetPort: ${port}
`;

export function seedFiles(): Record<string, string> {
  const files: Record<string, string> = {};
  files['README.md'] =
    '# digital-human\n\nGitOps repository seeded by the console sandbox. `infra/<env>` and `overlays/<env>` (which depends on it) are reconciled by Flux; `argo/` by the Argo CD Applications.\n';
  files['base/render-worker.yaml'] = deployment(
    'render-worker',
    `${SEED_IMAGE_HOST}/digital-human/render-worker:1.4.0`,
    8080,
    `          env:
            - name: RENDER_QUALITY
              value: standard
`,
  );
  files['base/render-worker-svc.yaml'] = service('render-worker', 8080);
  files['base/render-worker-config.yaml'] = `apiVersion: v1
kind: ConfigMap
metadata:
  name: render-worker-config
data:
  max-sessions: "8"
  codec: h264
`;
  files['base/render-worker-hpa.yaml'] = `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: render-worker
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: render-worker
  minReplicas: 2
  maxReplicas: 24
  # the sandbox's load is simulated and constant: follow it at once (no 5-minute scale-down window), so a
  # test's load spike (sandbox/metrics-api.ts) ends with the spike
  behavior:
    scaleDown:
      stabilizationWindowSeconds: 0
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: 70
`;
  files['base/tts-gateway.yaml'] = deployment(
    'tts-gateway',
    `${SEED_IMAGE_HOST}/digital-human/tts-gateway:2.1.0`,
    9000,
  );
  files['base/tts-gateway-svc.yaml'] = service('tts-gateway', 9000);
  files['base/session-cache.yaml'] = deployment(
    'session-cache',
    `${SEED_IMAGE_HOST}/digital-human/session-cache:7.2`,
    6379,
  );
  files['base/session-cache-svc.yaml'] = service('session-cache', 6379);
  files['base/kustomization.yaml'] = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - render-worker.yaml
  - render-worker-svc.yaml
  - render-worker-config.yaml
  - render-worker-hpa.yaml
  - tts-gateway.yaml
  - tts-gateway-svc.yaml
  - session-cache.yaml
  - session-cache-svc.yaml
`;
  const overlays: Record<string, { replicas: [number, number, number]; render: string; tts: string }> = {
    dev: {
      replicas: [4, 1, 1],
      render: 'newTag: 1.5.0-rc.1',
      // only dev follows the ImagePolicy (image automation); staging and prod change by review
      tts: `newTag: 2.1.0 ${TTS_SETTER}`,
    },
    staging: {
      replicas: [6, 2, 1],
      render: 'newTag: 1.4.2',
      tts: 'newTag: 2.1.0',
    },
    prod: {
      replicas: [8, 3, 2],
      // prod pins the render worker by digest; the TTS gateway stays on a mutable tag.
      render: `digest: ${PROD_RENDER_WORKER_DIGEST}`,
      tts: 'newTag: 2.1.0',
    },
  };
  for (const [env, o] of Object.entries(overlays)) {
    files[`overlays/${env}/kustomization.yaml`] = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: ${env}
labels:
  - pairs:
      env: ${env}
resources:
  - ../../base
replicas:
  - name: render-worker
    count: ${o.replicas[0]}
  - name: tts-gateway
    count: ${o.replicas[1]}
  - name: session-cache
    count: ${o.replicas[2]}
images:
  - name: ${SEED_IMAGE_HOST}/digital-human/render-worker
    ${o.render}
  - name: ${SEED_IMAGE_HOST}/digital-human/tts-gateway
    ${o.tts}
configMapGenerator:
  - name: env-settings
    literals:
      - ENVIRONMENT=${env}
      - LOG_LEVEL=${env === 'prod' ? 'warn' : 'debug'}
`;
  }
  files['argo/edge-gateway/deployment.yaml'] = deployment(
    'edge-gateway',
    `${SEED_IMAGE_HOST}/digital-human/edge-gateway:0.9.3`,
    8443,
  ).replace('replicas: 1', 'replicas: 2');
  files['argo/edge-gateway/service.yaml'] = service('edge-gateway', 8443);
  Object.assign(
    files,
    infraFiles(),
    helmReleaseFiles(),
    ledgerFiles(),
    appSetFiles(),
    checkoutFiles(),
    paymentsFiles(),
  );
  // the files this sandbox made at its first start (sandbox/sops.ts: the SOPS-encrypted Secrets), so that a reset
  // to the seed keeps them (without them infra would prune its Secrets, which the prune policy denies)
  Object.assign(files, generatedSeedFiles());
  return files;
}

/** The sandbox's generated seed files (ciphertext only), when this sandbox has made them. */
export function generatedSeedFiles(runDir = RUN_DIR): Record<string, string> {
  try {
    return JSON.parse(readFileSync(generatedSeedPath(runDir), 'utf8')) as Record<string, string>;
  } catch {
    return {};
  }
}

/**
 * What each environment's `infra-<env>` Kustomization applies (issue 26; sandbox/sandbox.ts fluxObjects): the
 * platform team's guardrails of the environment's namespace, which `digital-human-<env>` depends on (`dependsOn`:
 * kustomize-controller applies the app only once infra is Ready). A ConfigMap of platform settings and a
 * NetworkPolicy (no CNI enforces it here: it is the object that matters, not its effect).
 */
export function infraFiles(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const env of ['dev', 'staging', 'prod'])
    files[`infra/${env}/platform.yaml`] = `apiVersion: v1
kind: ConfigMap
metadata:
  name: platform-settings
  namespace: ${env}
  labels:
    app.kubernetes.io/part-of: infra
data:
  ENVIRONMENT: ${env}
  EGRESS_POLICY: same-namespace
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: same-namespace-only
  namespace: ${env}
  labels:
    app.kubernetes.io/part-of: infra
spec:
  podSelector: {}
  policyTypes: [Ingress]
  ingress:
    - from:
        - podSelector: {}
`;
  for (const env of ['dev', 'staging', 'prod']) files[`infra/${env}/external-secrets.yaml`] = externalSecretsFile(env);
  return files;
}

/** The fake remote value the seed's SecretStore serves (ESO's `fake` provider: a stand-in for a vault, in Git). */
export const ESO_FAKE_VALUE = 'fake-render-api-key-of-the-sandbox-store';

/**
 * The environment's External Secrets (issue 26, part 3; sandbox/eso.ts): a SecretStore on ESO's `fake` provider
 * (no cloud: it serves the values it declares) and an ExternalSecret that makes the Secret `render-api-key` from
 * it, refreshed every 30 s. `store` replaces the provider (the tests make it one that fails).
 */
export function externalSecretsFile(env: string, store?: string): string {
  return `apiVersion: external-secrets.io/v1
kind: SecretStore
metadata:
  name: platform-secrets
  namespace: ${env}
  labels:
    app.kubernetes.io/part-of: infra
spec:
  provider:
${
  store ??
  `    fake:
      data:
        - key: /render/api-key
          value: ${ESO_FAKE_VALUE}
          version: v1
`
}---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata:
  name: render-api-key
  namespace: ${env}
  labels:
    app.kubernetes.io/part-of: infra
spec:
  refreshInterval: 30s
  secretStoreRef:
    kind: SecretStore
    name: platform-secrets
  target:
    name: render-api-key
    creationPolicy: Owner
  data:
    - secretKey: API_KEY
      remoteRef:
        key: /render/api-key
        version: v1
`;
}

/**
 * What the two seeded ApplicationSets generate from (issue 24; sandbox/sandbox.ts argoObjects): `argo/web/<env>`
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

/** The image the payments Deployment runs at first (a Flagger canary is a commit that changes it). */
export const PAYMENTS_IMAGE = `${SEED_IMAGE_HOST}/digital-human/edge-gateway:0.9.3`;

/**
 * `flux/payments` (issue 25): a Deployment and its Flagger Canary — blue/green on the `kubernetes` provider (no
 * mesh): Flagger copies the Deployment to `payments-primary`, scales `payments` to 0 and owns the Services. Each
 * canary runs 3 iterations 5 s apart; each iteration's `rollout` webhook is the staging business endpoint (made to
 * fail, it fails the canary: 2 failures roll it back); the `rollback` webhook is a load tester gate
 * (sandbox/flagger-gate.ts) that the console's governed rollback opens, and with `gate` a `confirm-promotion`
 * webhook is one that only the console's governed promote opens (the seed has none: see below). The endpoint's URL is the Kustomization's postBuild variable `BUSINESS_URL` (its port is
 * known only once the sandbox runs; sandbox/flagger.ts flaggerAppObjects). No `replicas` in Git: Flagger owns the
 * target's scale. Reconciled by the Flux Kustomization `payments-staging` on nonprod.
 */
export function paymentsFiles(
  image = PAYMENTS_IMAGE,
  change?: string,
  opts: { gate?: boolean } = {},
): Record<string, string> {
  // the promotion gate only where a test asks for it: a seed canary that waits for a person would fail (its
  // progress deadline) after every reset of the repo to the seed, and leave the app Degraded for the tests after
  const gate = opts.gate
    ? `
      - name: promotion-gate
        type: confirm-promotion
        url: \${BUSINESS_URL}/gate/check
        timeout: 3s`
    : '';
  // a test's change note (a pod-template annotation): each commit a new revision for Flagger, even with an image
  // it ran before (Flagger does not analyse a revision equal to the one it promoted)
  const note = change ? `\n      annotations:\n        sandbox.gitops-console.dev/change: "${change}"` : '';
  return {
    'flux/payments/kustomization.yaml': `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - deployment.yaml
  - canary.yaml
`,
    'flux/payments/deployment.yaml': `apiVersion: apps/v1
kind: Deployment
metadata:
  name: payments
  labels:
    app.kubernetes.io/name: payments
spec:
  selector:
    matchLabels:
      app.kubernetes.io/name: payments
  template:
    metadata:
      labels:
        app.kubernetes.io/name: payments${note}
    spec:
      containers:
        - name: payments
          image: ${image}
          ports:
            - containerPort: 8080
`,
    'flux/payments/canary.yaml': `apiVersion: flagger.app/v1beta1
kind: Canary
metadata:
  name: payments
spec:
  provider: kubernetes
  targetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: payments
  progressDeadlineSeconds: 120
  service:
    port: 8080
    portDiscovery: false
  analysis:
    interval: 5s
    threshold: 2
    iterations: 3
    webhooks:
      - name: business-check
        type: rollout
        url: \${BUSINESS_URL}/payments
        timeout: 3s${gate}
      - name: rollback-switch
        type: rollback
        url: \${BUSINESS_URL}/rollback/check
        timeout: 3s
`,
  };
}
