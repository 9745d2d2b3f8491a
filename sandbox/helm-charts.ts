// Helm charts in the sandbox's OCI registry (issue 26, part 4): a small third-party-style chart, `status-page`,
// packaged and pushed with the real helm CLI (`helm package`, `helm push --plain-http`) at first start, in two
// versions. Flux reads them through a HelmRepository of type `oci` the sandbox applies (its URL names the
// registry's loopback port, which only the sandbox knows); the HelmRelease itself is in Git (seed.ts
// helmReleaseFiles), so a chart upgrade or a value change is a commit, as in a real estate. The real
// helm-controller installs it.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The chart's repository in the registry, and the versions pushed. */
export const CHART_REPO = 'charts';
export const STATUS_PAGE_CHART = 'status-page';
export const STATUS_PAGE_VERSIONS = ['0.1.0', '0.2.0'] as const;
/** The HelmRepository the sandbox applies in flux-system (the HelmReleases name it in chart.spec.sourceRef). */
export const CHART_SOURCE = 'sandbox-charts';

/** The chart's files at a version: 0.2.0 adds a banner ConfigMap and a `tier` label (a downgrade prunes it). */
export function statusPageChart(version: string): Record<string, string> {
  const v2 = version !== '0.1.0';
  return {
    'Chart.yaml': `apiVersion: v2
name: ${STATUS_PAGE_CHART}
description: A status page for the environment (the sandbox's third-party chart)
type: application
version: ${version}
appVersion: "${version}"
`,
    'values.yaml': `replicas: 1
message: "All systems operational"
image: registry.example.com/digital-human/edge-gateway:0.9.3
${v2 ? 'tier: platform\n' : ''}`,
    'templates/configmap.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
  labels:
    app.kubernetes.io/name: ${STATUS_PAGE_CHART}
    app.kubernetes.io/instance: {{ .Release.Name }}
data:
  MESSAGE: {{ .Values.message | quote }}
`,
    'templates/deployment.yaml': `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
  labels:
    app.kubernetes.io/name: ${STATUS_PAGE_CHART}
    app.kubernetes.io/instance: {{ .Release.Name }}
${v2 ? '    tier: {{ .Values.tier }}\n' : ''}spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels:
      app.kubernetes.io/instance: {{ .Release.Name }}
  template:
    metadata:
      labels:
        app.kubernetes.io/instance: {{ .Release.Name }}
    spec:
      containers:
        - name: status-page
          image: {{ .Values.image }}
          envFrom:
            - configMapRef:
                name: {{ .Release.Name }}
          ports:
            - containerPort: 8080
`,
    'templates/service.yaml': `apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}
  labels:
    app.kubernetes.io/name: ${STATUS_PAGE_CHART}
spec:
  selector:
    app.kubernetes.io/instance: {{ .Release.Name }}
  ports:
    - port: 80
      targetPort: 8080
`,
    ...(v2
      ? {
          'templates/banner.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-banner
  labels:
    app.kubernetes.io/name: ${STATUS_PAGE_CHART}
data:
  TIER: {{ .Values.tier | quote }}
`,
        }
      : {}),
  };
}

/** helm with its config, cache and registry login files in the sandbox's run directory (never the user's). */
function helm(binDir: string, home: string, args: string[]): string {
  try {
    return execFileSync(join(binDir, 'helm'), args, {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: home,
        HELM_CONFIG_HOME: join(home, 'config'),
        HELM_CACHE_HOME: join(home, 'cache'),
        HELM_DATA_HOME: join(home, 'data'),
        HELM_REGISTRY_CONFIG: join(home, 'registry.json'),
      },
    });
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(`helm ${args.join(' ')}: ${err.stderr?.trim() || err.message}`);
  }
}

/**
 * Packages and pushes the chart's versions to the registry once (`<registry dir>/charts.json` records what was
 * pushed, with the digests helm reported); a registry with a fresh store gets them again.
 */
export function pushCharts(opts: { binDir: string; registryDir: string; host: string }): Record<string, string> {
  const record = join(opts.registryDir, 'charts.json');
  if (existsSync(record)) return JSON.parse(readFileSync(record, 'utf8')) as Record<string, string>;
  if (!existsSync(join(opts.binDir, 'helm')))
    throw new Error('helm is not built (bash sandbox/build.sh argo): the chart cannot be pushed');
  const work = join(opts.registryDir, 'charts-work');
  rmSync(work, { recursive: true, force: true });
  const pushed: Record<string, string> = {};
  for (const version of STATUS_PAGE_VERSIONS) {
    const dir = join(work, `${STATUS_PAGE_CHART}-${version}`, STATUS_PAGE_CHART);
    for (const [f, text] of Object.entries(statusPageChart(version))) {
      mkdirSync(dirname(join(dir, f)), { recursive: true });
      writeFileSync(join(dir, f), text);
    }
    const out = join(work, 'packages');
    mkdirSync(out, { recursive: true });
    helm(opts.binDir, work, ['package', dir, '--destination', out]);
    const tgz = join(out, `${STATUS_PAGE_CHART}-${version}.tgz`);
    const msg = helm(opts.binDir, work, ['push', tgz, `oci://${opts.host}/${CHART_REPO}`, '--plain-http']);
    // helm prints "Digest: sha256:…" (stdout or stderr by version); the record keeps what it said
    pushed[version] = /Digest:\s*(sha256:[0-9a-f]{64})/.exec(msg)?.[1] ?? 'pushed';
  }
  writeFileSync(record, JSON.stringify(pushed, null, 2));
  return pushed;
}

/** The HelmRepository (type oci) on the sandbox registry, in flux-system. */
export function chartSourceObjects(host: string): string {
  return `apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata:
  name: ${CHART_SOURCE}
  namespace: flux-system
spec:
  type: oci
  url: oci://${host}/${CHART_REPO}
  insecure: true
  interval: 1m
`;
}

/**
 * The seed's HelmRelease (in Git, applied by `infra-dev`): the chart at a pinned version from the sandbox's
 * registry, values inline and from a ConfigMap beside it (`valuesFrom`; inline values win, as helm-controller
 * merges them). `opts` lets a scenario commit a chart upgrade or a changed value.
 */
export function helmReleaseFiles(
  opts: { version?: string; message?: string; replicas?: number } = {},
): Record<string, string> {
  return {
    'infra/dev/status-page.yaml': `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: ${STATUS_PAGE_CHART}
  namespace: dev
  labels:
    env: dev
spec:
  interval: 30s
  chart:
    spec:
      chart: ${STATUS_PAGE_CHART}
      version: "${opts.version ?? STATUS_PAGE_VERSIONS[0]}"
      interval: 30s
      sourceRef:
        kind: HelmRepository
        name: ${CHART_SOURCE}
        namespace: flux-system
  install:
    timeout: 2m
  upgrade:
    timeout: 2m
  valuesFrom:
    - kind: ConfigMap
      name: status-page-values
  values:
    message: ${JSON.stringify(opts.message ?? 'All systems operational')}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: status-page-values
  namespace: dev
  labels:
    app.kubernetes.io/part-of: infra
data:
  values.yaml: |
    replicas: ${opts.replicas ?? 1}
`,
  };
}
