// The seed's infra family (issue 26; re-exported by seed.ts): each environment's platform objects, which the
// `infra-<env>` Kustomization applies and the app depends on, and its External Secrets.

/**
 * What each environment's `infra-<env>` Kustomization applies (issue 26; sandbox/flux-objects.ts fluxObjects): the
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
