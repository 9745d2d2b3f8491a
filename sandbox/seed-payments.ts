// The seed's payments app (issue 25; re-exported by seed.ts): a Deployment and its Flagger Canary, reconciled
// by Flux.
import { SEED_IMAGE_HOST } from './seed-manifests.ts';

/** The image the payments Deployment runs at first (a Flagger canary is a commit that changes it). */
export const PAYMENTS_IMAGE = `${SEED_IMAGE_HOST}/digital-human/edge-gateway:0.9.3`;

/**
 * `flux/payments` (issue 25): a Deployment and its Flagger Canary — blue/green on the `kubernetes` provider (no
 * mesh): Flagger copies the Deployment to `payments-primary`, scales `payments` to 0 and owns the Services. Each
 * canary runs 3 iterations (interval 5 s, which Flagger v1.36 raises to its 10 s floor); each iteration's
 * `rollout` webhook is the staging business endpoint (made to fail, it fails the canary: 2 failures roll it back); the `rollback` webhook is a load tester gate
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
