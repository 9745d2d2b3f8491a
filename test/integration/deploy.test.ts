// The deploy artifacts against the real sandbox: `helm lint`; `helm template` (default values, and ingress +
// in-cluster access) and `kustomize build` applied with a server-side dry-run to the nonprod apiserver (every
// object accepted); the rendered Pods hardened and carrying no secret value; the chart's RBAC rules exactly
// deploy/rbac.yaml's. Then Flux deploys the kustomize base from the file's own estate (a repository, a
// Kustomization and a namespace of its own; the Pods are kwok's; the objects are real), and deleting the
// Kustomization prunes them all. The dry-run namespace is deleted again; the estate is torn down.
import { execFileSync } from 'node:child_process';
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { waitFor } from '../../sandbox/procs.ts';
import { getJson, requestReconcile, writeRepoFile } from '../../sandbox/scenario.ts';
import { listApproval, unlistApprovals } from '../../src/server/prune/approval-params.ts';
import { consoleConnection } from '../support/kubeconfig.ts';
import { bin, kubectl, REPO_ROOT } from '../../sandbox/state.ts';
import { ownEstate, type Estate } from '../support/own-estate.ts';

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [k: string]: unknown;
};
type Container = {
  name: string;
  image: string;
  env?: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }>;
  securityContext?: Record<string, unknown>;
  livenessProbe?: { httpGet?: { path: string } };
  readinessProbe?: { httpGet?: { path: string } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
};
type PodSpec = {
  automountServiceAccountToken?: boolean;
  serviceAccountName?: string;
  securityContext?: Record<string, unknown>;
  containers: Container[];
  volumes?: Array<{
    name: string;
    emptyDir?: object;
    secret?: { secretName: string };
    configMap?: { name: string };
    persistentVolumeClaim?: { claimName: string };
  }>;
};

const CLUSTER = 'nonprod';
const NS = 'gitops-console';
const CHART = join(REPO_ROOT, 'deploy/chart');
const BASE = join(REPO_ROOT, 'deploy/kustomize');
// the Flux test deploys the base renamed (cluster-scoped names must not touch the sandbox's own gitops-console
// ClusterRole, which the BFF under test signs in with: the suffix is the estate's id) into the estate's namespace
// (its Kustomization's targetNamespace: kustomize renames the base's Namespace to it), labelled as a test object
const FLUX_DIR = 'console-deploy';
const TEST_LABEL = 'gitops-console.test/object';

const run = (cmd: string, args: string[]) =>
  execFileSync(cmd, args, { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
const helm = (args: string[]) => run(bin('helm'), args);
const objects = (yaml: string): Obj[] =>
  parseAllDocuments(yaml)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => !!o);
/** The values an install needs (issue 40: the chart refuses without them): which environment each namespace is. */
const ENVIRONMENTS = 'config.environments={nonprod/gitops-console=dev}';
/** …and data that outlives a restart (or PostgreSQL with the keys: see the replicas test) */
const CLAIM = 'dataVolume.existingClaim=gitops-console-data';
/** `helm template` with the environments set (`bare`: exactly `set`, nothing added) */
const template = (set: string[] = [], o: { bare?: boolean } = {}) =>
  objects(
    helm([
      ...['template', 'gitops-console', CHART, '--namespace', NS],
      ...[...(o.bare ? [] : [ENVIRONMENTS]), ...set].flatMap((s) => ['--set', s]),
    ]),
  );
/** What `helm template` says when it refuses (or `rendered`). */
const refusal = (set: string[], o: { bare?: boolean } = {}) => {
  try {
    template(set, o);
    return 'rendered';
  } catch (e) {
    return String((e as { stderr?: string }).stderr ?? e);
  }
};
function find<T = Obj>(objs: Obj[], kind: string, name?: string): T {
  const o = objs.find((x) => x.kind === kind && (!name || x.metadata.name === name));
  if (!o) throw new Error(`no ${kind} ${name ?? ''} in ${objs.map((x) => x.kind).join(', ')}`);
  return o as unknown as T;
}
const podOf = (objs: Obj[]) => find<{ spec: { template: { spec: PodSpec } } }>(objs, 'Deployment').spec.template.spec;

/** `kubectl apply --dry-run=server`: one "(server dry run)" line per object, nothing refused. */
function dryRun(objs: Obj[]): string[] {
  const out = kubectl(
    CLUSTER,
    ['apply', '--dry-run=server', '-n', NS, '-f', '-'],
    objs.map((o) => JSON.stringify(o)).join('\n'),
  );
  return out.trim().split('\n');
}

/** The ClusterRole rules of deploy/*.yaml, parsed. */
const rulesOf = (file: string) =>
  (
    objects(readFileSync(join(REPO_ROOT, file), 'utf8')).find((o) => o.kind === 'ClusterRole') as unknown as {
      rules: unknown[];
    }
  ).rules;

/** What a Pod may never do, whichever values rendered it. */
function expectHardened(pod: PodSpec): void {
  expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
  expect(pod.securityContext?.runAsUser).toBeGreaterThan(0);
  const [c] = pod.containers;
  expect(c?.securityContext).toEqual({
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ['ALL'] },
  });
  expect(c?.livenessProbe?.httpGet?.path).toBe('/healthz');
  expect(c?.readinessProbe?.httpGet?.path).toBe('/readyz');
  expect(c?.resources?.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
  expect(c?.resources?.limits).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
  // a read-only root: the data dir and /tmp are volumes
  const mounts = Object.fromEntries((c?.volumeMounts ?? []).map((m) => [m.mountPath, m.name]));
  expect(mounts['/data']).toBeDefined();
  expect(mounts['/tmp']).toBeDefined();
  expect(pod.volumes?.find((v) => v.name === mounts['/tmp'])?.emptyDir).toBeDefined();
}

/** No Secret object is rendered and every secret-looking variable is a reference or a file path. */
function expectNoSecretValues(objs: Obj[], secretValues: string[] = []): void {
  expect(objs.filter((o) => o.kind === 'Secret')).toEqual([]);
  for (const e of podOf(objs).containers[0]?.env ?? []) {
    if (/SECRET|TOKEN|PASSWORD|DATABASE_URL|KEY/.test(e.name)) {
      if (e.value !== undefined) expect(e.name, `${e.name} is a file path`).toMatch(/_FILE$/);
      else expect(e.valueFrom?.secretKeyRef, e.name).toBeDefined();
    }
  }
  const text = JSON.stringify(objs);
  for (const v of secretValues) expect(text).not.toContain(v);
}

describe('deploy artifacts: the Helm chart and the kustomize base', () => {
  beforeAll(() => {
    // a leftover of an interrupted run goes first
    kubectl(CLUSTER, ['delete', 'namespace', NS, '--ignore-not-found', '--wait=true', '--timeout=90s']);
    kubectl(CLUSTER, ['create', 'namespace', NS]);
    kubectl(CLUSTER, ['label', 'namespace', NS, `${TEST_LABEL}=deploy-dry-run`]);
  });
  afterAll(() => {
    kubectl(CLUSTER, ['delete', 'namespace', NS, '--ignore-not-found', '--wait=true', '--timeout=90s']);
  });

  it('helm lint passes (strict)', () => {
    expect(helm(['lint', '--strict', CHART, '--set', ENVIRONMENTS, '--set', CLAIM])).toMatch(
      /1 chart\(s\) linted, 0 chart\(s\) failed/,
    );
  });

  it('default values are refused, naming what to set: persistent data and the environments (issue 40)', () => {
    expect(refusal([], { bare: true })).toMatch(/no persistent data: set dataVolume.existingClaim/);
    expect(refusal([CLAIM], { bare: true })).toMatch(/config.environments is empty: set which environment/);
    // the operator's explicit choices for a trial render, and say so in the configuration
    const trial = template(['dataVolume.ephemeral=true', 'config.environmentsFromLabels=true'], { bare: true });
    expect(podOf(trial).volumes?.find((v) => v.name === 'data')?.emptyDir).toBeDefined();
    expect(find<{ data: Record<string, string> }>(trial, 'ConfigMap', 'gitops-console').data).toMatchObject({
      CONSOLE_ENVIRONMENTS_FROM_LABELS: '1',
      CONSOLE_INSTALL: '1',
    });
    // PostgreSQL with the keys from Secrets is persistent enough (local accounts then live in the Pod)
    expect(
      refusal(['secrets.databaseUrl.name=db', 'secrets.maskKey.name=mask', 'secrets.evidenceSigningKey.name=key']),
    ).toBe('rendered');
    expect(refusal(['secrets.databaseUrl.name=db'])).toMatch(/no persistent data/);
  });

  it('minimal values (a data claim, the environments): every object accepted by a server-side dry-run; hardened, no token mounted, secrets by reference', () => {
    const objs = template([CLAIM]);
    expect(objs.map((o) => o.kind).sort()).toEqual(
      ['ClusterRole', 'ClusterRoleBinding', 'ConfigMap', 'Deployment', 'Service', 'ServiceAccount'].sort(),
    );
    const out = dryRun(objs);
    expect(out).toHaveLength(objs.length);
    for (const l of out) expect(l).toMatch(/\(server dry run\)$/);
    const pod = podOf(objs);
    expectHardened(pod);
    // no in-cluster access: no API token in the Pod, the kubeconfig comes from a Secret
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(find<{ automountServiceAccountToken?: boolean }>(objs, 'ServiceAccount').automountServiceAccountToken).toBe(
      false,
    );
    expect(pod.volumes?.find((v) => v.name === 'kubeconfig')?.secret?.secretName).toBe('gitops-console-kubeconfig');
    expect(pod.volumes?.find((v) => v.name === 'data')?.persistentVolumeClaim?.claimName).toBe('gitops-console-data');
    expectNoSecretValues(objs);
    // the non-secret configuration is the ConfigMap the container reads its environment from
    const cm = find<{ data: Record<string, string> }>(objs, 'ConfigMap', 'gitops-console');
    expect(cm.data).toMatchObject({ CONSOLE_HOST: '0.0.0.0', CONSOLE_PORT: '8080', CONSOLE_DATA_DIR: '/data' });
    // one source of RBAC: the chart's ClusterRole has exactly deploy/rbac.yaml's rules
    expect(find<{ rules: unknown[] }>(objs, 'ClusterRole').rules).toEqual(rulesOf('deploy/rbac.yaml'));
  });

  it('ingress + in-cluster access (+ impersonation, OIDC, every secret reference, the prune admission policy): accepted; the token is mounted only now', () => {
    const objs = template([
      CLAIM,
      'ingress.enabled=true',
      'ingress.host=console.sandbox.invalid',
      'ingress.tlsSecretName=console-tls',
      'inCluster=true',
      'config.publicUrl=https://console.sandbox.invalid',
      'config.clusterAccess=impersonate',
      'config.oidc.issuer=https://login.sandbox.invalid/realms/platform',
      'config.oidc.clientId=gitops-console',
      'secrets.oidcClientSecret.name=console-oidc',
      'secrets.databaseUrl.name=console-db',
      'secrets.evidenceSigningKey.name=console-signing-key',
      'secrets.forgeTokens.name=console-forge',
      'secrets.metricsToken.name=console-metrics',
    ]);
    for (const k of ['Ingress', 'ClusterRole', 'ClusterRoleBinding', 'ConfigMap', 'Deployment', 'Service'])
      expect(
        objs.some((o) => o.kind === k),
        k,
      ).toBe(true);
    const out = dryRun(objs);
    expect(out).toHaveLength(objs.length);
    for (const l of out) expect(l).toMatch(/\(server dry run\)$/);
    const pod = podOf(objs);
    expectHardened(pod);
    expect(pod.automountServiceAccountToken).toBe(true);
    expect(pod.volumes?.find((v) => v.name === 'kubeconfig')?.configMap?.name).toBe('gitops-console-kubeconfig');
    const kc = parseYaml(
      find<{ data: { kubeconfig: string } }>(objs, 'ConfigMap', 'gitops-console-kubeconfig').data.kubeconfig,
    ) as { users: Array<{ user: { 'auth-provider': { config: { tokenFile: string } } } }> };
    expect(kc.users[0]?.user['auth-provider'].config.tokenFile).toBe(
      '/var/run/secrets/kubernetes.io/serviceaccount/token',
    );
    // both ClusterRoles bound to the ServiceAccount; the impersonation rules are deploy/rbac-impersonation.yaml's
    const bindings = objs.filter((o) => o.kind === 'ClusterRoleBinding') as unknown as Array<{
      subjects: Array<{ kind: string; name: string; namespace?: string }>;
    }>;
    expect(bindings).toHaveLength(2);
    for (const b of bindings)
      expect(b.subjects).toContainEqual({ kind: 'ServiceAccount', name: 'gitops-console', namespace: NS });
    expect(find<{ rules: unknown[] }>(objs, 'ClusterRole', 'gitops-console-impersonation').rules).toEqual(
      rulesOf('deploy/rbac-impersonation.yaml'),
    );
    const env = Object.fromEntries((pod.containers[0]?.env ?? []).map((e) => [e.name, e]));
    expect(env.DATABASE_URL?.valueFrom?.secretKeyRef).toEqual({ name: 'console-db', key: 'database-url' });
    expect(env.CONSOLE_METRICS_TOKEN?.valueFrom?.secretKeyRef).toEqual({ name: 'console-metrics', key: 'token' });
    expect(env.CONSOLE_OIDC_CLIENT_SECRET_FILE?.value).toBe('/etc/gitops-console/oidc-client-secret/client-secret');
    expect(env.CONSOLE_EVIDENCE_SIGNING_KEY_FILE?.value).toBe(
      '/etc/gitops-console/evidence-signing-key/checkpoint.key',
    );
    expect(env.CONSOLE_FORGE_TOKENS_FILE?.value).toBe('/etc/gitops-console/forge-tokens/forge-tokens.json');
    expectNoSecretValues(objs);
    const ing = find<{ spec: { rules: Array<{ host: string }>; tls: Array<{ secretName: string }> } }>(objs, 'Ingress');
    expect(ing.spec.rules[0]?.host).toBe('console.sandbox.invalid');
    expect(ing.spec.tls[0]?.secretName).toBe('console-tls');
  });

  it('replicas: refused without the shared state (database, keys, OIDC); with it, rolling, one recorder by Lease, accepted', () => {
    const shared = [
      'kubeconfig.existingSecret=console-kubeconfig',
      'secrets.databaseUrl.name=console-db',
      'secrets.maskKey.name=console-mask',
      'secrets.evidenceSigningKey.name=console-signing-key',
      'config.oidc.issuer=https://login.sandbox.invalid/realms/platform',
      'config.oidc.clientId=gitops-console',
    ];
    const why = (set: string[]) => refusal(set);
    expect(why(['replicaCount=2'])).toMatch(/replicaCount > 1 needs secrets.databaseUrl/);
    for (const [i, missing] of ['secrets.maskKey', 'secrets.evidenceSigningKey', 'config.oidc'].entries())
      expect(why(['replicaCount=2', ...shared.filter((_, j) => j !== i + 2 && !(i === 2 && j === 5))])).toMatch(
        new RegExp(`replicaCount > 1 needs ${missing.replace('.', '\\.')}`),
      );
    expect(why(['replicaCount=2', ...shared, 'dataVolume.existingClaim=console-data'])).toMatch(
      /cannot share dataVolume.existingClaim/,
    );
    const objs = template(['replicaCount=3', ...shared]);
    const dep = find<{ spec: { replicas: number; strategy: { type: string; rollingUpdate?: unknown } } }>(
      objs,
      'Deployment',
    );
    expect(dep.spec.replicas).toBe(3);
    expect(dep.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } });
    expect(
      find<{ data: Record<string, string> }>(objs, 'ConfigMap', 'gitops-console').data.CONSOLE_RECORDER_LEASE,
    ).toBe(`${NS}/gitops-console-recorder`);
    const env = Object.fromEntries((podOf(objs).containers[0]?.env ?? []).map((e) => [e.name, e]));
    expect(env.CONSOLE_MASK_KEY_FILE?.value).toBe('/etc/gitops-console/mask-key/mask.key');
    expectNoSecretValues(objs);
    const out = dryRun(objs);
    expect(out).toHaveLength(objs.length);
    for (const l of out) expect(l).toMatch(/\(server dry run\)$/);
  });

  it('values.yaml holds no secret value: every secret is a Secret name and key', () => {
    const values = parseYaml(readFileSync(join(CHART, 'values.yaml'), 'utf8')) as {
      secrets: Record<string, { name: string; key: string }>;
    };
    expect(Object.keys(values.secrets).sort()).toEqual(
      ['databaseUrl', 'evidenceSigningKey', 'forgeTokens', 'maskKey', 'metricsToken', 'oidcClientSecret'].sort(),
    );
    for (const [k, ref] of Object.entries(values.secrets)) expect(Object.keys(ref).sort(), k).toEqual(['key', 'name']);
    // and the chart has no way to take one: no Secret template
    expect(run('ls', [join(CHART, 'templates')])).not.toMatch(/secret/i);
  });

  it('kustomize build: the chart objects plus the Namespace and the data claim, all accepted by a server-side dry-run', () => {
    const objs = objects(run(bin('kustomize'), ['build', BASE]));
    const out = dryRun(objs);
    expect(out).toHaveLength(objs.length);
    for (const l of out) expect(l).toMatch(/\(server dry run\)$/);
    const pod = podOf(objs);
    expectHardened(pod);
    expect(pod.automountServiceAccountToken).toBe(false);
    expectNoSecretValues(objs);
    // the same objects as the chart renders (labels and the config checksum aside)
    const norm = (o: Obj) => {
      const c = structuredClone(o) as Obj & { spec?: { template?: { metadata?: Obj['metadata'] } } };
      delete c.metadata.labels;
      delete c.metadata.annotations;
      delete c.spec?.template?.metadata?.annotations;
      return c;
    };
    // the chart with a claim of the base's name; its ConfigMap's CONSOLE_ENVIRONMENTS is the overlay's to add to
    // the base (without it the console refuses to start: CONSOLE_INSTALL)
    const chart = template([CLAIM]);
    const chartCm = find<{ data: Record<string, string> }>(chart, 'ConfigMap', 'gitops-console');
    delete chartCm.data.CONSOLE_ENVIRONMENTS;
    const base = objs.filter((o) => o.kind !== 'Namespace' && o.kind !== 'PersistentVolumeClaim');
    expect(find(objs, 'PersistentVolumeClaim').metadata.name).toBe('gitops-console-data');
    expect(find(objs, 'Namespace').metadata.name).toBe(NS);
    expect(base.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual(
      chart.map((o) => `${o.kind}/${o.metadata.name}`).sort(),
    );
    for (const o of base) {
      const c = chart.find((x) => x.kind === o.kind && x.metadata.name === o.metadata.name) as Obj;
      expect(norm(o), `${o.kind}/${o.metadata.name}`).toEqual({
        ...norm(c),
        // the chart's namespace comes from `helm install -n`, the base's from its files
        metadata: { ...norm(c).metadata, ...(o.metadata.namespace ? { namespace: NS } : {}) },
      });
    }
  });
});

describe("Flux deploys the kustomize base from the estate's repo", () => {
  let estate: Estate;
  let FLUX_KS: string;
  let FLUX_NS: string;
  let SUFFIX: string;
  const name = () => `gitops-console${SUFFIX}`;

  beforeAll(async () => {
    // the first commit: the app's directory with nothing in it yet (the test pushes the base)
    estate = await ownEstate({
      name: 'deploy',
      env: 'dev',
      files: {
        [`${FLUX_DIR}/kustomization.yaml`]:
          'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n',
      },
      apps: [{ name: 'console', path: FLUX_DIR }],
    });
    FLUX_KS = estate.kustomization('console');
    FLUX_NS = estate.namespace;
    SUFFIX = `-${estate.id}`;
  }, 300_000);

  afterAll(async () => {
    // the cluster-scoped objects, should the test have stopped before its Kustomization pruned them (the estate's
    // teardown turns prune off first)
    if (estate)
      for (const kind of ['clusterrolebinding', 'clusterrole'])
        kubectl(CLUSTER, ['delete', kind, name(), '--ignore-not-found']);
    await estate?.teardown();
  }, 120_000);

  it('a Flux Kustomization applies the base: Ready at the pushed revision, the Deployment and RBAC exist', async () => {
    const sha = estate.push('test: console deploy manifests (deploy.test.ts)', (w) => {
      cpSync(BASE, join(w, FLUX_DIR, 'base'), { recursive: true });
      writeRepoFile(
        w,
        `${FLUX_DIR}/kustomization.yaml`,
        [
          '# deploy.test.ts: the console base under test names',
          'apiVersion: kustomize.config.k8s.io/v1beta1',
          'kind: Kustomization',
          `namespace: ${FLUX_NS}`,
          `nameSuffix: ${SUFFIX}`,
          'labels:',
          '  - pairs:',
          `      ${TEST_LABEL}: deploy-flux`,
          'resources:',
          '  - base',
          '',
        ].join('\n'),
      );
    });
    // Ready at exactly the pushed revision (only this test pushes to the estate)
    await estate.waitApplied(sha, 'console', 150_000);
    const dep = getJson(CLUSTER, ['-n', FLUX_NS, 'get', 'deployment', name()]) as {
      metadata: { labels: Record<string, string> };
      spec: { template: { spec: PodSpec } };
    };
    expect(dep.metadata.labels).toMatchObject({
      [TEST_LABEL]: 'deploy-flux',
      'kustomize.toolkit.fluxcd.io/name': FLUX_KS,
    });
    expectHardened(dep.spec.template.spec);
    for (const [kind, ns] of [
      ['service', FLUX_NS],
      ['configmap', FLUX_NS],
      ['serviceaccount', FLUX_NS],
      ['clusterrole', undefined],
      ['clusterrolebinding', undefined],
    ] as const)
      kubectl(CLUSTER, [...(ns ? ['-n', ns] : []), 'get', kind, name()]);
    // the base's Namespace is the estate's, now Flux's too
    expect(
      (getJson(CLUSTER, ['get', 'namespace', FLUX_NS]) as { metadata: { labels: Record<string, string> } }).metadata
        .labels,
    ).toMatchObject({ [TEST_LABEL]: 'deploy-flux', 'kustomize.toolkit.fluxcd.io/name': FLUX_KS });
    // the real controller made a ReplicaSet and (kwok's) Pod for it
    await waitFor(
      `a Pod of ${name()}`,
      async () => kubectl(CLUSTER, ['-n', FLUX_NS, 'get', 'pods', '-o', 'name']).includes(`pod/${name()}-`),
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    // the sandbox's own ClusterRole (the BFF's identity) was not touched
    const own = getJson(CLUSTER, ['get', 'clusterrole', 'gitops-console']) as {
      metadata: { labels?: Record<string, string> };
    };
    expect(own.metadata.labels?.['kustomize.toolkit.fluxcd.io/name']).toBeUndefined();
  });

  it('deleting the Kustomization prunes what it applied; its ClusterRole and binding only once the console lists them', async () => {
    // a cluster-scoped prune by a controller needs an approval like a governed namespace's objects (issue 40,
    // deploy/prune-admission-policy.yaml gitops-console-prune-cluster): the namespaced objects go, RBAC stays
    const uids = ['clusterrole', 'clusterrolebinding'].map((kind) =>
      kubectl(CLUSTER, ['get', kind, name(), '-o', 'jsonpath={.metadata.uid}']).trim(),
    );
    kubectl(CLUSTER, ['-n', 'flux-system', 'delete', 'kustomization', FLUX_KS, '--wait=false']);
    await waitFor(
      'the namespaced objects pruned, the Kustomization still finalizing',
      async () => !kubectl(CLUSTER, ['get', 'namespaces', '-o', 'name']).includes(`namespace/${FLUX_NS}`),
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    expect(kubectl(CLUSTER, ['get', 'clusterrole,clusterrolebinding', '-o', 'name'])).toContain(name());
    // the console lists both uids (what it does after a reviewer approved their prune preview): they go
    const conn = consoleConnection(CLUSTER);
    try {
      for (const [i, uid] of uids.entries())
        await listApproval(conn, uid ?? '', {
          preview: '00000000-0000-4000-8000-00000000d3b1',
          snapshot: '0123456789abcdef',
          object: `${CLUSTER}/rbac.authorization.k8s.io/${i ? 'ClusterRoleBinding' : 'ClusterRole'}/_/${name()}`,
          ref: {
            group: 'rbac.authorization.k8s.io',
            version: 'v1',
            kind: i ? 'ClusterRoleBinding' : 'ClusterRole',
            name: name(),
          },
          app: estate.appId('console'),
          observed: null,
          expires: new Date(Date.now() + 600_000).toISOString(),
          at: new Date().toISOString(),
        });
      await waitFor(
        'the ClusterRole and its binding pruned, the Kustomization gone',
        async () => {
          try {
            // a nudge while it finalizes (it threw NotFound once Flux removed the finalizer: the wait never ended
            // when that came between two looks, as on a loaded CI machine)
            requestReconcile(CLUSTER, 'kustomization', FLUX_KS);
          } catch {
            /* gone */
          }
          return (
            !kubectl(CLUSTER, ['get', 'clusterrole,clusterrolebinding', '-o', 'name']).includes(name()) &&
            !kubectl(CLUSTER, ['-n', 'flux-system', 'get', 'kustomization', '-o', 'name']).includes(FLUX_KS)
          );
        },
        { timeoutMs: 90_000, intervalMs: 1000 },
      );
    } finally {
      await unlistApprovals(conn, uids).catch(() => undefined);
      conn.close();
    }
  });
});
