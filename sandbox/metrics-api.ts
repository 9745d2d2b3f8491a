// The resource metrics API (metrics.k8s.io) of a sandbox cluster, so the HorizontalPodAutoscaler works:
//
//   kwok (the simulated kubelet of every fake node) serves the kubelet's `/metrics/resource` format per node
//     on 127.0.0.1:<kwok port>, https, at /metrics/nodes/<node>/metrics/resource (kwok's own Metric
//     "metrics-resource", from the kwok module) — the Node's InternalIP is 127.0.0.1, its kubelet port kwok's
//     port, and the annotation metrics.k8s.io/resource-metrics-path names the path, as kwokctl sets them up;
//   → the real metrics-server (sigs.k8s.io/metrics-server, built by build.sh) scrapes it like any kubelet
//     (verifying kwok's serving cert against the cluster CA) and serves metrics.k8s.io on 127.0.0.1;
//   → kube-apiserver's aggregator proxies /apis/metrics.k8s.io to it: the APIService v1beta1.metrics.k8s.io
//     points at the Service kube-system/metrics-server of type ExternalName (127.0.0.1; the aggregator would
//     refuse loopback Endpoints), over TLS checked with the APIService's caBundle, and authenticates itself
//     with a front-proxy client certificate (the requestheader flags of the apiserver);
//   → the HPA controller in kube-controller-manager reads pods.metrics.k8s.io and scales.
//
// SIMULATION: the usage numbers themselves. kwok runs no containers, so the CPU and memory each container
// "uses" is our load profile below (a kwok ClusterResourceUsage, evaluated by kwok): constant per container,
// so the HPA's arithmetic is deterministic. A Pod annotation `kwok.x-k8s.io/usage-cpu` / `-memory` overrides it.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClusterPki } from './pki.ts';

export interface MetricsPki {
  /** the CA the aggregator's client certificate is checked against (--requestheader-client-ca-file) */
  frontProxyCa: string;
  /** the aggregator's client certificate when it proxies to metrics-server (--proxy-client-cert-file) */
  frontProxyClient: { cert: string; key: string };
  /** metrics-server's serving certificate (metrics-server.kube-system.svc, 127.0.0.1), signed by the cluster CA */
  metricsServing: { cert: string; key: string };
  /** kwok's serving certificate (127.0.0.1, the fake nodes' kubelet address), signed by the cluster CA */
  kwokServing: { cert: string; key: string };
}

/** The CN the apiserver allows to assert users to extension apiservers (--requestheader-allowed-names). */
export const FRONT_PROXY_CLIENT = 'front-proxy-client';
export const METRICS_SERVICE = { namespace: 'kube-system', name: 'metrics-server' };

const LEAF = 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n';

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A key and a certificate signed by `ca` (paths relative to `dir`). */
function issue(dir: string, name: string, subject: string, ext: string, ca: { cert: string; key: string }) {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  if (existsSync(cert) && existsSync(key)) return { cert, key };
  openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key], dir);
  openssl(['req', '-new', '-key', key, '-subj', subject, '-out', `${name}.csr`], dir);
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl(
    [
      ...['x509', '-req', '-in', `${name}.csr`, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial'],
      ...['-days', '3650', '-sha256', '-extfile', `${name}.ext`, '-out', cert],
    ],
    dir,
  );
  return { cert, key };
}

/** The front-proxy CA and client, and the serving certificates of metrics-server and kwok (made once). */
export function ensureMetricsPki(pki: ClusterPki): MetricsPki {
  const dir = pki.dir;
  const frontProxyCa = join(dir, 'front-proxy-ca.crt');
  if (!existsSync(frontProxyCa)) {
    openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'front-proxy-ca.key'], dir);
    openssl(
      [
        ...['req', '-x509', '-new', '-key', 'front-proxy-ca.key', '-subj', '/CN=gitops-console-sandbox-front-proxy-ca'],
        ...['-days', '3650', '-sha256', '-addext', 'basicConstraints=critical,CA:TRUE'],
        ...['-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature', '-out', 'front-proxy-ca.crt'],
      ],
      dir,
    );
  }
  const fp = { cert: frontProxyCa, key: join(dir, 'front-proxy-ca.key') };
  const ca = { cert: pki.caCert, key: pki.caKey };
  const server = (san: string) => `${LEAF}extendedKeyUsage=serverAuth\nsubjectAltName=${san}\n`;
  return {
    frontProxyCa,
    frontProxyClient: issue(
      dir,
      FRONT_PROXY_CLIENT,
      `/CN=${FRONT_PROXY_CLIENT}`,
      `${LEAF}extendedKeyUsage=clientAuth\n`,
      fp,
    ),
    metricsServing: issue(
      dir,
      'metrics-server-serving',
      '/CN=metrics-server',
      server(
        `DNS:${METRICS_SERVICE.name}.${METRICS_SERVICE.namespace}.svc,DNS:${METRICS_SERVICE.name}.${METRICS_SERVICE.namespace},DNS:localhost,IP:127.0.0.1`,
      ),
      ca,
    ),
    kwokServing: issue(dir, 'kwok-serving', '/CN=kwok', server('IP:127.0.0.1,DNS:localhost'), ca),
  };
}

/** The apiserver's aggregation flags: who may front-proxy, and the client certificate it proxies with. */
export function aggregatorArgs(m: MetricsPki): string[] {
  return [
    ...['--requestheader-client-ca-file', m.frontProxyCa, '--requestheader-allowed-names', FRONT_PROXY_CLIENT],
    ...['--requestheader-username-headers', 'X-Remote-User', '--requestheader-group-headers', 'X-Remote-Group'],
    ...['--requestheader-extra-headers-prefix', 'X-Remote-Extra-'],
    ...['--proxy-client-cert-file', m.frontProxyClient.cert, '--proxy-client-key-file', m.frontProxyClient.key],
  ];
}

/** kwok's flags that make each fake node's kubelet endpoint 127.0.0.1:<port> over https. */
export function kwokKubeletArgs(m: MetricsPki, port: number): string[] {
  return [
    ...['--node-ip', '127.0.0.1', '--node-port', String(port)],
    ...['--tls-cert-file', m.kwokServing.cert, '--tls-private-key-file', m.kwokServing.key],
  ];
}

/**
 * SIMULATION — the load profile, per container (kwok evaluates it; CEL). Constant, so the HPA's arithmetic is
 * deterministic, and quiet at rest: render-worker requests 100m CPU and its HPA targets 70% average utilization;
 * it uses 70m in every env, exactly the target, so the HPA computes the replicas it finds (ScalingActive,
 * nothing to do) and a replica count set by Git or by hand stays put. A Pod annotation
 * `kwok.x-k8s.io/usage-cpu` / `usage-memory` overrides the profile: put 105m (150%) on an env's render-worker
 * Pods and its HPA scales above Git's replicas, which Flux takes back on its next apply — the HPA-versus-Git
 * conflict on spec.replicas (test/integration/metrics-api.test.ts). Every other container: 20m, 64Mi.
 */
export const LOAD_PROFILE = {
  renderWorkerCpu: '70m',
  /** what a test puts on render-worker Pods to make the HPA scale up (150% of the request) */
  renderWorkerBusyCpu: '105m',
  defaultCpu: '20m',
  renderWorkerMemory: '96Mi',
  defaultMemory: '64Mi',
} as const;

export function kwokResourceUsage(): string {
  const isRender = `"app.kubernetes.io/name" in pod.metadata.labels && pod.metadata.labels["app.kubernetes.io/name"] == "render-worker"`;
  // a Pod annotation wins (kwok's usage-from-annotation convention), then the profile
  const expr = (resource: 'cpu' | 'memory', render: string, other: string) =>
    [
      `"kwok.x-k8s.io/usage-${resource}" in pod.metadata.annotations`,
      `? Quantity(pod.metadata.annotations["kwok.x-k8s.io/usage-${resource}"])`,
      `: (${isRender}) ? ${render}`,
      `: Quantity("${other}")`,
    ]
      .map((l) => `            ${l}\n`)
      .join('');
  return `apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterResourceUsage
metadata:
  name: sandbox-load-profile
  annotations:
    gitops-console.dev/simulated: "kwok runs no containers: this is the sandbox's simulated load (sandbox/metrics-api.ts)"
spec:
  usages:
    - usage:
        cpu:
          expression: |
${expr('cpu', `Quantity("${LOAD_PROFILE.renderWorkerCpu}")`, LOAD_PROFILE.defaultCpu)}        memory:
          expression: |
${expr('memory', `Quantity("${LOAD_PROFILE.renderWorkerMemory}")`, LOAD_PROFILE.defaultMemory)}`;
}

/** metrics-server's flags: loopback serving, the admin kubeconfig, kwok's kubelet endpoints. */
export function metricsServerArgs(opts: {
  kubeconfig: string;
  port: number;
  caCert: string;
  m: MetricsPki;
  certDir: string;
}): string[] {
  return [
    ...['--kubeconfig', opts.kubeconfig, '--authentication-kubeconfig', opts.kubeconfig],
    ...['--authorization-kubeconfig', opts.kubeconfig],
    ...['--bind-address', '127.0.0.1', '--secure-port', String(opts.port), '--cert-dir', opts.certDir],
    ...['--tls-cert-file', opts.m.metricsServing.cert, '--tls-private-key-file', opts.m.metricsServing.key],
    ...['--kubelet-preferred-address-types', 'InternalIP', '--kubelet-use-node-status-port'],
    ...['--kubelet-certificate-authority', opts.caCert, '--metric-resolution', '10s'],
    ...['--kubelet-request-timeout', '5s', '-v', '1'],
  ];
}

/** The Service (ExternalName: 127.0.0.1) and the APIService that register metrics-server with the aggregator. */
export function metricsApiObjects(port: number, caCert: string): string {
  const caBundle = readFileSync(caCert).toString('base64');
  return `apiVersion: v1
kind: Service
metadata:
  name: ${METRICS_SERVICE.name}
  namespace: ${METRICS_SERVICE.namespace}
  labels:
    app.kubernetes.io/name: metrics-server
spec:
  type: ExternalName
  externalName: 127.0.0.1
  ports:
    - name: https
      port: ${port}
      protocol: TCP
      targetPort: ${port}
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1beta1.metrics.k8s.io
  labels:
    app.kubernetes.io/name: metrics-server
spec:
  group: metrics.k8s.io
  version: v1beta1
  groupPriorityMinimum: 100
  versionPriority: 100
  caBundle: ${caBundle}
  service:
    namespace: ${METRICS_SERVICE.namespace}
    name: ${METRICS_SERVICE.name}
    port: ${port}
`;
}
