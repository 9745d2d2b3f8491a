// Issue 40, "no way around the approval", against the real sandbox apiserver and Flux, from outside the console:
// each test plays the person going around the prune approval (deploy/prune-admission-policy.yaml) and shows the
// apiserver refuses it. (1) A controller applying ownerReferences from Git (the garbage collector would then
// delete the object, an identity no policy holds); (2) a controller pruning a cluster-scoped object (a CRD takes
// its custom resources with it, with no admission call for them); (4) a Job turned into a "hook" through Git alone
// so that kustomize-controller's prune of it looks like a hook's life cycle; (5) a second holder of the verb
// `approve` writing the approvals list. On the file's own estate (test/support/own-estate.ts: a governed
// namespace, Flux `prune: true`), deleted at the end; the controllers act with their own tokens (kubectlAs).
// Over 500 lines on purpose: one governed estate (a minute of Flux to make) serves every path around the approval;
// split, each file would make its own.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityKubeconfig, kubectlAs, type ControllerIdentity } from '../../sandbox/identities.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { kubectl } from '../../sandbox/sandbox.ts';
import { getJson, requestReconcile, writeRepoFile } from '../../sandbox/scenario.ts';
import type { ApprovalEntry } from '../../src/domain/prune-approval.ts';
import { listApproval, syncControllerIdentities, unlistApprovals } from '../../src/server/prune/approval-params.ts';
import { consoleConnection } from '../support/kubeconfig.ts';
import { ownEstate, type Estate } from '../support/own-estate.ts';

const CLUSTER = 'nonprod';
const suffix = Date.now().toString(36);
const DENIED = /needs an approved prune preview in the GitOps console/;
const CONTROLLERS: ControllerIdentity[] = ['kustomize-controller', 'argocd-application-controller'];

let estate: Estate | undefined;
const mustEstate = () => {
  if (!estate) throw new Error('no estate');
  return estate;
};
let NS = '';

const kustomizationYaml = (resources: string[]) =>
  `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n${resources.map((r) => `  - ${r}\n`).join('')}`;
/** A Job that never runs (suspended: no Pods), as a team would keep a migration Job in Git. */
const jobYaml = (annotations: Record<string, string> = {}) =>
  [
    'apiVersion: batch/v1',
    'kind: Job',
    'metadata:',
    '  name: db-migrate',
    ...(Object.keys(annotations).length
      ? ['  annotations:', ...Object.entries(annotations).map(([k, v]) => `    ${k}: "${v}"`)]
      : []),
    'spec:',
    '  suspend: true',
    '  backoffLimit: 0',
    '  template:',
    '    spec:',
    '      restartPolicy: Never',
    '      containers:',
    '        - name: migrate',
    '          image: registry.example.com/migrate:1',
    '',
  ].join('\n');
const configMapYaml = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: info\n`;

const live = (kind: string, name: string, ns = NS): boolean =>
  kubectl(CLUSTER, ['-n', ns, 'get', kind, name, '--ignore-not-found', '-o', 'name']).trim() !== '';
const uidOf = (args: string[]): string => kubectl(CLUSTER, [...args, '-o', 'jsonpath={.metadata.uid}']).trim();

const cleanups: Array<() => unknown> = [];

beforeAll(async () => {
  for (const sa of [...CONTROLLERS, 'helm-controller'] as const)
    if (!identityKubeconfig(CLUSTER, sa))
      throw new Error(`the sandbox has no ${sa} identity: it is older than sandbox/identities.ts (down, then up)`);
  estate = await ownEstate({
    name: 'no-way-around',
    env: 'dev',
    governed: true,
    files: {
      'app/kustomization.yaml': kustomizationYaml(['settings.yaml', 'job.yaml']),
      'app/settings.yaml': configMapYaml,
      'app/job.yaml': jobYaml(),
    },
    apps: [{ name: 'app', path: 'app' }],
  });
  NS = estate.namespace;
}, 300_000);

afterAll(async () => {
  for (const f of cleanups.reverse())
    try {
      await f();
    } catch {
      /* best effort: each clean-up is independent */
    }
  await estate?.teardown();
}, 300_000);

describe('owner references are not a way around the approval (issue 40, 1)', () => {
  it('a controller may not add, change or remove ownerReferences of a governed object; its other changes go through', () => {
    const name = `owned-${suffix}`;
    const cm = (owners: unknown[] | undefined, level: string) =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: NS, ...(owners ? { ownerReferences: owners } : {}) },
        data: { level },
      });
    // what a Git writer would commit: an owner that does not exist, or one that does (the estate's settings)
    const dangling = [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'gone', uid: randomUUID() }];
    const settingsUid = uidOf(['-n', NS, 'get', 'configmap', 'settings']);
    const existing = [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'settings', uid: settingsUid }];
    const refused = new RegExp(`may not set ownerReferences on ConfigMap/${name} in the governed namespace ${NS}`);
    for (const sa of CONTROLLERS) {
      const apply = (body: string) =>
        kubectlAs(
          CLUSTER,
          sa,
          ['apply', '--server-side', '--force-conflicts', `--field-manager=${sa}-probe`, '-f', '-'],
          body,
        );
      // created with an owner: refused (a CREATE is checked like an UPDATE)
      expect(() => apply(cm(dangling, 'info'))).toThrow(refused);
      expect(live('configmap', name)).toBe(false);
      // created without: fine; then an owner added, dangling or existing: refused
      apply(cm(undefined, 'info'));
      expect(() => apply(cm(dangling, 'debug'))).toThrow(refused);
      expect(() => apply(cm(existing, 'debug'))).toThrow(refused);
      // a change that leaves the owners alone goes through
      apply(cm(undefined, 'debug'));
      const o = getJson(CLUSTER, ['-n', NS, 'get', 'configmap', name]) as {
        metadata: { ownerReferences?: unknown };
        data: { level: string };
      };
      expect(o.metadata.ownerReferences).toBeUndefined();
      expect(o.data.level).toBe('debug');
      kubectl(CLUSTER, ['-n', NS, 'delete', 'configmap', name]);
    }
    // owners set at run time by the owners' controllers (a Deployment's ReplicaSets) are not a GitOps
    // controller's: the Kubernetes controller manager is not matched. Outside governed namespaces nothing is held.
    kubectlAs(
      CLUSTER,
      'kustomize-controller',
      ['apply', '--server-side', '--field-manager=probe', '--dry-run=server', '-f', '-'],
      cm(dangling, 'info').replace(`"namespace":"${NS}"`, '"namespace":"flux-system"'),
    );
  });
});

describe('cluster-scoped prunes are held (issue 40, 2)', () => {
  it("a controller's DELETE of a CRD, PersistentVolume, ClusterRole, ClusterRoleBinding or webhook configuration needs the uid listed", async () => {
    const name = `nwa-${suffix}`;
    const group = `nwa${suffix}.example.com`;
    const objects: Array<[kind: string, name: string, body: unknown]> = [
      [
        'customresourcedefinition',
        `widgets.${group}`,
        {
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'CustomResourceDefinition',
          metadata: { name: `widgets.${group}` },
          spec: {
            group,
            names: { kind: 'Widget', plural: 'widgets', singular: 'widget' },
            scope: 'Namespaced',
            versions: [
              {
                name: 'v1',
                served: true,
                storage: true,
                schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
              },
            ],
          },
        },
      ],
      [
        'persistentvolume',
        name,
        {
          apiVersion: 'v1',
          kind: 'PersistentVolume',
          metadata: { name },
          spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: `/tmp/${name}` } },
        },
      ],
      [
        'clusterrole',
        name,
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, rules: [] },
      ],
      [
        'clusterrolebinding',
        name,
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRoleBinding',
          metadata: { name },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: `nobody-${suffix}` }],
        },
      ],
      [
        'validatingwebhookconfiguration',
        name,
        { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name } },
      ],
    ];
    for (const [kind, n, body] of objects) {
      cleanups.push(() => kubectl(CLUSTER, ['delete', kind, n, '--ignore-not-found', '--wait=false']));
      kubectl(CLUSTER, ['apply', '--server-side', '--field-manager=nwa-test', '-f', '-'], JSON.stringify(body));
    }
    for (const [kind, n] of objects)
      for (const sa of CONTROLLERS)
        expect(() => kubectlAs(CLUSTER, sa, ['delete', kind, n]), `${sa} deleting ${kind}/${n}`).toThrow(DENIED);
    for (const [kind, n] of objects) expect(live(kind, n, 'default'), `${kind}/${n}`).toBe(true);
    // the console lists the ClusterRole's uid (its own identity, deploy/rbac.yaml as shipped): now the controller
    // may delete that one, and nothing else
    const uid = uidOf(['get', 'clusterrole', name]);
    const conn = consoleConnection(CLUSTER);
    cleanups.push(() => conn.close());
    const entry: ApprovalEntry = {
      preview: '00000000-0000-4000-8000-00000000a11d',
      snapshot: '0123456789abcdef',
      object: `${CLUSTER}/rbac.authorization.k8s.io/ClusterRole/_/${name}`,
      ref: { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRole', name },
      app: 'test',
      observed: null,
      expires: new Date(Date.now() + 600_000).toISOString(),
      at: new Date().toISOString(),
    };
    try {
      await listApproval(conn, uid, entry);
      // the apiserver reads the list through its own watch of the ConfigMap, so the listing takes effect a moment
      // after the patch returns (as for a controller, which retries its prune): a denial until then, nothing else
      await waitFor(
        'the controller’s DELETE allowed once the apiserver sees the listing',
        async () => {
          try {
            kubectlAs(CLUSTER, 'kustomize-controller', ['delete', 'clusterrole', name]);
            return true;
          } catch (e) {
            if (!DENIED.test((e as Error).message)) throw e;
            return false;
          }
        },
        { timeoutMs: 30_000, intervalMs: 250 },
      );
      expect(live('clusterrole', name, 'default')).toBe(false);
      expect(() => kubectlAs(CLUSTER, 'kustomize-controller', ['delete', 'clusterrolebinding', name])).toThrow(DENIED);
    } finally {
      await unlistApprovals(conn, [uid]).catch(() => undefined);
    }
    // a person (the admin here) is not a controller: the policy is about prunes, RBAC decides the rest
    kubectl(CLUSTER, ['delete', 'clusterrolebinding', name]);
  });
});

describe('a hook is a hook only where hooks run (issue 40, 4)', () => {
  it('through Git alone: a Job annotated as a Helm hook, then removed from Git, is held, not deleted', async () => {
    const e = mustEstate();
    // commit 1: the governed Job becomes a "hook" (kustomize-controller has no hooks: it applies the annotation)
    const annotated = e.push('Mark db-migrate as a Helm hook', (w) =>
      writeRepoFile(w, 'app/job.yaml', jobYaml({ 'helm.sh/hook': 'pre-install' })),
    );
    await e.waitApplied(annotated);
    const job = getJson(CLUSTER, ['-n', NS, 'get', 'job', 'db-migrate']) as {
      metadata: { annotations?: Record<string, string> };
    };
    expect(job.metadata.annotations?.['helm.sh/hook']).toBe('pre-install');
    // commit 2: the Job leaves Git; kustomize-controller's prune of it is denied like any other prune
    const removed = e.push('Remove db-migrate', (w) => {
      writeRepoFile(w, 'app/kustomization.yaml', kustomizationYaml(['settings.yaml']));
    });
    let message = '';
    await waitFor(
      `${e.kustomization()} held at ${removed.slice(0, 8)}`,
      async () => {
        requestReconcile(CLUSTER, 'gitrepository', e.source);
        requestReconcile(CLUSTER, 'kustomization', e.kustomization());
        const st = (
          getJson(CLUSTER, ['-n', 'flux-system', 'get', 'kustomization', e.kustomization()]) as {
            status?: {
              lastAttemptedRevision?: string;
              conditions?: Array<{ type: string; status: string; message?: string }>;
            };
          }
        ).status;
        const ready = st?.conditions?.find((c) => c.type === 'Ready');
        message = ready?.message ?? '';
        return String(st?.lastAttemptedRevision ?? '').endsWith(removed) && ready?.status === 'False';
      },
      { timeoutMs: 120_000, intervalMs: 2000 },
    );
    expect(message).toMatch(/prune of Job\/db-migrate needs an approved prune preview/);
    expect(live('job', 'db-migrate')).toBe(true);
  });

  it("the runner's own hooks go; a hook written by anyone else is held", () => {
    const t = Date.now().toString(36);
    const job = (name: string, annotations: Record<string, string>) =>
      JSON.stringify({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name, namespace: NS, annotations },
        spec: {
          suspend: true,
          template: {
            spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'registry.example.com/x:1' }] },
          },
        },
      });
    const create = (manager: string, name: string, annotations: Record<string, string>) => {
      cleanups.push(() => kubectl(CLUSTER, ['-n', NS, 'delete', 'job', name, '--ignore-not-found', '--wait=false']));
      kubectl(CLUSTER, ['apply', '--server-side', `--field-manager=${manager}`, '-f', '-'], job(name, annotations));
    };
    const del = (sa: ControllerIdentity, name: string) =>
      kubectlAs(CLUSTER, sa, ['-n', NS, 'delete', 'job', name, '--dry-run=server']);
    // Argo CD's hook (created by argocd-controller) and helm-controller's: their own runners delete them
    create('argocd-controller', `argo-hook-${t}`, { 'argocd.argoproj.io/hook': 'PreSync' });
    del('argocd-application-controller', `argo-hook-${t}`);
    create('helm-controller', `helm-hook-${t}`, { 'helm.sh/hook': 'pre-upgrade' });
    del('helm-controller', `helm-hook-${t}`);
    // a Job kustomize-controller applied with a hook annotation is its object: no identity deletes it unheld
    create('kustomize-controller', `kc-hook-${t}`, { 'helm.sh/hook': 'pre-upgrade' });
    for (const sa of ['kustomize-controller', 'helm-controller', 'argocd-application-controller'] as const)
      expect(() => del(sa, `kc-hook-${t}`), sa).toThrow(DENIED);
    // someone who may patch a Job annotates Argo CD's plain Job as a hook: their own manager entry shows it
    create('argocd-controller', `plain-${t}`, {});
    kubectl(CLUSTER, ['-n', NS, 'annotate', 'job', `plain-${t}`, 'argocd.argoproj.io/hook=PreSync']);
    expect(() => del('argocd-application-controller', `plain-${t}`)).toThrow(DENIED);
  });
});

describe('tenant identities are covered by rule, not by a list the console sweeps (issue 40, 3)', () => {
  it('a Git change naming a new ServiceAccount and removing an object in one go is held, with no sweep in between', async () => {
    const e = mustEstate();
    const name = `tenant-${suffix}`;
    const [first, second] = [`tenant-a-${suffix}`, `tenant-b-${suffix}`];
    // Flux multi-tenancy: the tenant's Kustomization in its own namespace, acting as an account of it
    for (const sa of [first, second]) {
      kubectl(CLUSTER, ['-n', NS, 'create', 'serviceaccount', sa]);
      kubectl(CLUSTER, ['-n', NS, 'create', 'rolebinding', sa, '--clusterrole=edit', `--serviceaccount=${NS}:${sa}`]);
    }
    const sha = e.push('A tenant directory', (w) => {
      writeRepoFile(w, 'tenant/kustomization.yaml', kustomizationYaml(['probe.yaml']));
      writeRepoFile(
        w,
        'tenant/probe.yaml',
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${NS}\ndata:\n  a: "1"\n`,
      );
    });
    // the console's sweep, once, as it runs every minute: the namespace is governed, so it is listed (policy 8
    // lets the Kustomization name an account of it)
    const conn = consoleConnection(CLUSTER);
    cleanups.push(() => conn.close());
    await syncControllerIdentities(conn);
    cleanups.push(
      () => kubectl(CLUSTER, ['-n', NS, 'delete', 'kustomization', name, '--ignore-not-found', '--wait=false']),
      () =>
        kubectl(CLUSTER, ['-n', NS, 'patch', 'kustomization', name, '--type=merge', '-p', '{"spec":{"prune":false}}']),
    );
    const ks = (serviceAccountName: string) =>
      JSON.stringify({
        apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
        kind: 'Kustomization',
        metadata: { name, namespace: NS },
        spec: {
          interval: '10m',
          retryInterval: '5s',
          path: './tenant',
          prune: true,
          serviceAccountName,
          sourceRef: { kind: 'GitRepository', name: e.source, namespace: 'flux-system' },
        },
      });
    const applyKs = (sa: string) =>
      kubectl(CLUSTER, ['apply', '--server-side', '--field-manager=kustomize-controller', '-f', '-'], ks(sa));
    applyKs(first);
    type Status = {
      lastAppliedRevision?: string;
      lastAttemptedRevision?: string;
      conditions?: Array<{ type: string; status: string; message?: string }>;
    };
    const status = () => (getJson(CLUSTER, ['-n', NS, 'get', 'kustomization', name]).status ?? {}) as Status;
    const nudge = () => {
      requestReconcile(CLUSTER, 'gitrepository', e.source);
      kubectl(CLUSTER, [
        ...['-n', NS, 'annotate', '--overwrite', `kustomization/${name}`],
        `reconcile.fluxcd.io/requestedAt=${new Date().toISOString()}`,
      ]);
    };
    await waitFor(
      `${name} applied ${sha.slice(0, 8)} as ${first}`,
      async () => {
        nudge();
        return String(status().lastAppliedRevision ?? '').endsWith(sha) && live('configmap', name);
      },
      { timeoutMs: 180_000, intervalMs: 2000 },
    );
    // one change: the Kustomization now names a new account, and the ConfigMap leaves Git. No sweep runs.
    const removed = e.push('Tenant: drop the probe', (w) => {
      writeRepoFile(w, 'tenant/kustomization.yaml', kustomizationYaml([]).replace('resources:\n', 'resources: []\n'));
    });
    applyKs(second);
    let message = '';
    await waitFor(
      `${name} held at ${removed.slice(0, 8)} as ${second}`,
      async () => {
        nudge();
        const st = status();
        const ready = st.conditions?.find((c) => c.type === 'Ready');
        message = ready?.message ?? '';
        return String(st.lastAttemptedRevision ?? '').endsWith(removed) && ready?.status === 'False';
      },
      { timeoutMs: 180_000, intervalMs: 2000 },
    );
    expect(message).toMatch(DENIED);
    expect(live('configmap', name)).toBe(true);
  });

  it('a Kustomization may not name an account of a namespace the console does not cover; once covered it may', async () => {
    const ns = `nwa-tenant-${suffix}`;
    cleanups.push(() => kubectl(CLUSTER, ['delete', 'namespace', ns, '--ignore-not-found', '--wait=false']));
    kubectl(CLUSTER, ['create', 'namespace', ns]);
    const body = JSON.stringify({
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name: 'apps', namespace: ns },
      spec: {
        interval: '10m',
        path: './nothing',
        prune: true,
        suspend: true,
        serviceAccountName: 'deployer',
        sourceRef: { kind: 'GitRepository', name: mustEstate().source, namespace: 'flux-system' },
      },
    });
    const create = () => kubectl(CLUSTER, ['apply', '--server-side', '--field-manager=nwa-test', '-f', '-'], body);
    expect(create).toThrow(
      new RegExp(
        `Kustomization ${ns}/apps names the ServiceAccount deployer of a namespace the GitOps console does not cover yet`,
      ),
    );
    kubectl(CLUSTER, ['label', 'namespace', ns, 'gitops-console.dev/tenant=true']);
    const conn = consoleConnection(CLUSTER);
    cleanups.push(() => conn.close());
    await syncControllerIdentities(conn);
    create();
    // now any account of that namespace is a GitOps identity: its deletion in a governed namespace is held
    kubectl(CLUSTER, ['-n', NS, 'create', 'configmap', `probe-${suffix}`, '--from-literal=a=1']);
    expect(() =>
      kubectl(CLUSTER, [
        ...['--as', `system:serviceaccount:${ns}:deployer`, '--as-group', 'system:masters'],
        ...['-n', NS, 'delete', 'configmap', `probe-${suffix}`, '--dry-run=server'],
      ]),
    ).toThrow(DENIED);
    kubectl(CLUSTER, ['-n', ns, 'delete', 'kustomization', 'apps']);
  });
});

describe('the paths a review found around the rules (issue 40)', () => {
  it('owner references through /status, an eviction, an immutable approvals list, a tenant kubeConfig, an AppProject pattern: refused; a plain AppProject entry of a covered namespace: accepted', async () => {
    const conn = consoleConnection(CLUSTER);
    cleanups.push(() => conn.close());
    await syncControllerIdentities(conn); // the estate's governed namespace listed, as the console's sweep does
    const dangling = JSON.stringify({
      metadata: { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'gone', uid: randomUUID() }] },
    });
    // a built-in kind's status update keeps metadata.ownerReferences: the Job's /status, as kustomize-controller
    expect(() =>
      kubectlAs(CLUSTER, 'kustomize-controller', [
        ...['-n', NS, 'patch', 'job', 'db-migrate', '--subresource=status', '--type=merge', '-p', dangling],
      ]),
    ).toThrow(/may not set ownerReferences on Job\/db-migrate/);
    // an eviction deletes a Pod with no DELETE admission call
    const pod = `evict-probe-${suffix}`;
    kubectl(CLUSTER, [
      ...['-n', NS, 'run', pod, '--image=registry.example.com/x:1', '--restart=Never'],
      '--overrides={"spec":{"nodeName":"nowhere"}}',
    ]);
    const eviction = JSON.stringify({
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: pod, namespace: NS },
    });
    expect(() =>
      kubectlAs(
        CLUSTER,
        'kustomize-controller',
        ['create', '--raw', `/api/v1/namespaces/${NS}/pods/${pod}/eviction`, '-f', '-'],
        eviction,
      ),
    ).toThrow(new RegExp(`may not evict Pod ${NS}/${pod}`));
    expect(live('pod', pod)).toBe(true);
    kubectl(CLUSTER, ['-n', NS, 'delete', 'pod', pod, '--wait=false']);
    // an immutable approvals list could never be withdrawn from: refused to anyone but the console
    expect(() =>
      kubectlAs(CLUSTER, 'kustomize-controller', [
        ...['-n', 'gitops-console-approvals', 'patch', 'configmap', 'gitops-console-prune-approvals'],
        ...['--type=merge', '-p', '{"immutable":true}', '--dry-run=server'],
      ]),
    ).toThrow(/may not update the prune approvals/);
    // a tenant's Flux object with a kubeconfig of its own acts as whatever identity it holds
    const withKubeconfig = JSON.stringify({
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name: 'remote', namespace: NS },
      spec: {
        interval: '10m',
        path: './nothing',
        prune: true,
        suspend: true,
        kubeConfig: { secretRef: { name: 'other-identity' } },
        sourceRef: { kind: 'GitRepository', name: mustEstate().source, namespace: 'flux-system' },
      },
    });
    expect(() =>
      kubectl(
        CLUSTER,
        ['apply', '--server-side', '--field-manager=nwa-test', '--dry-run=server', '-f', '-'],
        withKubeconfig,
      ),
    ).toThrow(/spec.kubeConfig acts as whatever identity that kubeconfig holds/);
    // AppProjects: a name in a plain, covered destination namespace is fine; a pattern is not
    const project = (namespace: string) =>
      JSON.stringify({
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'AppProject',
        metadata: { name: `nwa-${suffix}`, namespace: 'argocd' },
        spec: {
          destinations: [{ server: '*', namespace: NS }],
          destinationServiceAccounts: [{ server: '*', namespace, defaultServiceAccount: 'deployer' }],
        },
      });
    const applyProject = (namespace: string) =>
      kubectl(
        CLUSTER,
        ['apply', '--server-side', '--field-manager=nwa-test', '--dry-run=server', '-f', '-'],
        project(namespace),
      );
    applyProject(NS);
    for (const pattern of ['{a,b}', `${NS}*`, `[${NS.slice(0, 1)}]x`])
      expect(() => applyProject(pattern), pattern).toThrow(/a sync impersonation account must be namespace:name/);
  });
});

describe('only the console writes the approvals (issue 40, 5)', () => {
  it('a second holder of the verb approve (with every right on the ConfigMap) is refused', async () => {
    const who = `second-approver-${suffix}`;
    const APPROVALS = ['-n', 'gitops-console-approvals'];
    const PARAM = 'configmap/gitops-console-prune-approvals';
    cleanups.push(() => kubectl(CLUSTER, ['delete', 'clusterrole,clusterrolebinding', who, '--ignore-not-found']));
    cleanups.push(() => kubectl(CLUSTER, [...APPROVALS, 'delete', 'role,rolebinding', who, '--ignore-not-found']));
    // the console's virtual permission (deploy/rbac.yaml), granted to someone else too
    kubectl(
      CLUSTER,
      ['apply', '--server-side', '--field-manager=nwa-test', '-f', '-'],
      JSON.stringify({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: who },
        rules: [{ apiGroups: ['gitops-console.dev'], resources: ['prune-approvals'], verbs: ['approve'] }],
      }),
    );
    kubectl(CLUSTER, ['create', 'clusterrolebinding', who, `--clusterrole=${who}`, `--user=${who}`]);
    kubectl(CLUSTER, [...APPROVALS, 'create', 'role', who, '--resource=configmaps', '--verb=get,update,patch,delete']);
    kubectl(CLUSTER, [...APPROVALS, 'create', 'rolebinding', who, `--role=${who}`, `--user=${who}`]);
    // (kubectl auth can-i cannot ask about a virtual resource: the ConfigMap right is the one to wait for)
    await waitFor(
      'the grants in force',
      async () => kubectl(CLUSTER, ['auth', 'can-i', 'patch', PARAM, ...APPROVALS, `--as=${who}`]).trim() === 'yes',
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    const key = randomUUID();
    const patch = ['--type=merge', '-p', JSON.stringify({ data: { [key]: 'approved' } })];
    expect(() => kubectl(CLUSTER, [`--as=${who}`, ...APPROVALS, 'patch', PARAM, ...patch])).toThrow(
      new RegExp(`${who} may not update the prune approvals`),
    );
    expect(() => kubectl(CLUSTER, [`--as=${who}`, ...APPROVALS, 'delete', PARAM])).toThrow(
      new RegExp(`${who} may not delete the prune approvals`),
    );
    const data = (getJson(CLUSTER, [...APPROVALS, 'get', PARAM]) as { data?: Record<string, string> }).data ?? {};
    expect(data[key]).toBeUndefined();
  });
});
