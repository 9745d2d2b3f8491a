// The seed GitOps repository: the "digital-human" services in base/ plus
// overlays/{dev,staging,prod}, and a plain directory Argo CD
// Applications point at. Written as files, committed with git, pushed to the
// sandbox's smart-HTTP git server.
//
// By app family: infra (seed-infra.ts), Argo CD's apps (seed-argo.ts), payments (seed-payments.ts), on the
// building blocks of seed-manifests.ts; this module re-exports them all.

import { helmReleaseFiles } from './helm-charts.ts';
import { readFileSync } from 'node:fs';
import { generatedSeedPath } from './sops.ts';
import { RUN_DIR } from './state.ts';
import { SEED_IMAGE_HOST, deployment, service } from './seed-manifests.ts';
import { infraFiles } from './seed-infra.ts';
import { appSetFiles, checkoutFiles, ledgerFiles } from './seed-argo.ts';
import { paymentsFiles } from './seed-payments.ts';

export { SEED_IMAGE_HOST } from './seed-manifests.ts';
export { ESO_FAKE_VALUE, externalSecretsFile, infraFiles } from './seed-infra.ts';
export {
  appSetFiles,
  CHECKOUT_IMAGE,
  checkoutFiles,
  KWOK_FAIL_LABEL,
  ledgerFiles,
  unschedulable,
  webDirFiles,
} from './seed-argo.ts';
export { PAYMENTS_IMAGE, paymentsFiles } from './seed-payments.ts';

export const SEED_REPO = 'digital-human';

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
