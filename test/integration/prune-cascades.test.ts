// Issue #21 item 6, "cascades governed": what a deletion takes with it is judged like the candidate itself. A
// Flux Kustomization of the file's own estate on prod (test/support/own-estate.ts; `prune: false`), applied once,
// then suspended and pointed at smaller directories: its inventory keeps what left the render, so those are
// candidates. The console runs with the shipped least-privilege role (deploy/rbac.yaml) — bound, for this file
// alone, to an identity of its own (a ServiceAccount in the estate's namespace holding exactly the bindings the
// console's user `gitops-console` holds), so the operator's extra grants the test adds (a Role in one namespace,
// a ClusterRole for one CRD) widen this file's console only, never the console identity every other test runs
// as; where it may not list, the plan says unknown. Everything is removed at the end (the estate, the grants,
// the identity, the namespaces and the CRD).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { waitFor } from '../../sandbox/procs.ts';
import { getJson } from '../../sandbox/scenario.ts';
import { kubectl } from '../../sandbox/state.ts';
import { as } from '../support/auth.ts';
import { startTestConsole } from '../support/console.ts';
import { bffKubeconfig } from '../support/kubeconfig.ts';
import { ownEstate, type Estate } from '../support/own-estate.ts';

type Json = Record<string, unknown>;

const CLUSTER = 'prod';
const CONSOLE_USER = 'gitops-console';

const TEST_ESTATE = 'gitops-console.dev/test-estate';

/**
 * The console's shipped least privilege as an identity of this file's own: a ServiceAccount `console` in the
 * estate's namespace, bound to every ClusterRole and Role the console's user is bound to (deploy/rbac.yaml and
 * rbac-impersonation.yaml as the sandbox applies them); the tests' console kubeconfig with its token on the
 * estate's cluster. Returns that kubeconfig's path; removeConsoleIdentity deletes the copies of the bindings.
 */
function ownConsoleIdentity(e: Estate): string {
  const k = (args: string[], input?: string) => kubectl(e.cluster, args, input);
  k(['-n', e.namespace, 'create', 'serviceaccount', 'console']);
  const theConsoles = (b: Json) =>
    ((b.subjects as Json[] | undefined) ?? []).some((s) => s.kind === 'User' && s.name === CONSOLE_USER);
  const bindings = ['clusterrolebindings', 'rolebindings'].flatMap((kind) =>
    (getJson(e.cluster, ['get', kind, '-A']).items as Json[]).filter(theConsoles),
  );
  if (!bindings.some((b) => b.kind === 'ClusterRoleBinding'))
    throw new Error(`no ClusterRoleBinding of ${CONSOLE_USER}`);
  const items = bindings.map((b, i) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: b.kind,
    metadata: {
      name: `${e.id}-console-${i}`,
      ...(b.kind === 'RoleBinding' ? { namespace: (b.metadata as Json).namespace } : {}),
      labels: { [TEST_ESTATE]: e.id },
    },
    roleRef: b.roleRef,
    subjects: [{ kind: 'ServiceAccount', name: 'console', namespace: e.namespace }],
  }));
  k(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
  const token = k(['-n', e.namespace, 'create', 'token', 'console', '--duration=2h']).trim();
  const config = parse(readFileSync(bffKubeconfig(), 'utf8')) as {
    contexts: Array<{ name: string; context: { user: string } }>;
    users: Array<{ name: string; user: Json }>;
  };
  const context = config.contexts.find((c) => c.name === e.cluster);
  const user = config.users.find((u) => u.name === context?.context.user);
  if (!user) throw new Error(`no user of context ${e.cluster} in ${bffKubeconfig()}`);
  user.user = { token };
  const path = join(mkdtempSync(join(tmpdir(), `${e.id}-console-`)), 'kubeconfig');
  writeFileSync(path, stringify(config), { mode: 0o600 });
  return path;
}

function removeConsoleIdentity(e: Estate, kubeconfig: string | undefined): void {
  if (kubeconfig) rmSync(dirname(kubeconfig), { recursive: true, force: true });
  // the ServiceAccount goes with the estate's namespace
  kubectl(e.cluster, ['delete', 'clusterrolebindings,rolebindings', '-A', '-l', `${TEST_ESTATE}=${e.id}`]);
}

describe('cascades governed: a protected Pod child blocks, a Namespace is listed live, a CRD counts its resources', () => {
  const suffix = randomBytes(4).toString('hex');
  /** the estate's app (its Kustomization `<id>-cascade`) reads these directories */
  const DIR = 'cascade';
  // a Namespace in Git; a ConfigMap, a Secret, a RoleBinding and a custom resource made in it by someone else
  const NS_A = `cprobe-a-${suffix}`;
  // not in Git: where the Deployment (its Pods protected) and the ConfigMaps live
  const NS_B = `cprobe-b-${suffix}`;
  const GROUP = `c${suffix}.probe.gitops-console.dev`;
  const CRD = `widgets.${GROUP}`;
  const GRANT = `cascade-probe-${suffix}`;
  const PROTECTED_BY = 'kustomize.toolkit.fluxcd.io/prune: disabled';
  let estate: Estate | undefined;
  /** the kubeconfig of the console's identity of this file */
  let kubeconfig: string | undefined;
  /** the RBAC subject that identity is (for the operator's grants below) */
  const subject = () => `{ kind: ServiceAccount, name: console, namespace: ${own().namespace} }`;
  let con: Awaited<ReturnType<typeof startTestConsole>> | undefined;
  const own = () => estate as Estate;
  const app = () => own().appId('cascade');

  type CRef = { kind: string; name: string; namespace?: string };
  type Candidate = {
    ref: CRef;
    deletable: boolean;
    blockedBy?: string | null;
    cascadesUnknown?: string | null;
    cascades: CRef[];
  };
  type CascadePreview = { plan: string; reasons: string[]; candidates: Candidate[] };

  const objects = {
    ns: `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${NS_A}\n`,
    crd: `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${CRD}
spec:
  group: ${GROUP}
  scope: Namespaced
  names: { plural: widgets, singular: widget, kind: Widget, listKind: WidgetList }
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true }
`,
    deploy: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: guarded
  namespace: ${NS_B}
spec:
  replicas: 1
  selector: { matchLabels: { app: guarded } }
  template:
    metadata:
      labels: { app: guarded }
      annotations: { ${PROTECTED_BY.replace(': ', ': "')}" }
    spec:
      containers: [{ name: main, image: registry.example.com/digital-human/session-cache:7.2 }]
`,
    plain: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n  namespace: ${NS_B}\ndata: { a: "1" }\n`,
    keep: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keep\n  namespace: ${NS_B}\ndata: { a: "1" }\n`,
  };
  // before: everything; mid: the CRD and `keep` (the Namespace, the Deployment and `plain` are candidates);
  // after: `keep` only (the CRD is a candidate too)
  const dirs: Record<string, Array<keyof typeof objects>> = {
    before: ['ns', 'crd', 'deploy', 'plain', 'keep'],
    mid: ['crd', 'keep'],
    after: ['keep'],
  };
  const apply = (yaml: string) => kubectl(CLUSTER, ['apply', '-f', '-'], yaml);
  const setPath = (dir: string) =>
    kubectl(CLUSTER, [
      ...['-n', 'flux-system', 'patch', 'kustomization', own().kustomization('cascade'), '--type', 'merge'],
      ...['-p', JSON.stringify({ spec: { suspend: true, path: `./${DIR}/${dir}` } })],
    ]);
  const key = (r: CRef) => `${r.kind}/${r.namespace ? `${r.namespace}/` : ''}${r.name}`;

  /** A preview of the probe app once the console plans it with `want` as the candidates (it follows the path). */
  async function cascadePreview(want: string[], unknownRead = false): Promise<CascadePreview> {
    let p: CascadePreview | undefined;
    await waitFor(
      `a preview of ${own().kustomization('cascade')} with ${want.join(', ')}`,
      async () => {
        const c = con as NonNullable<typeof con>;
        const r = await as(c.admin, c.url, `/api/apps/${app()}/prune-previews`, { method: 'POST' });
        if (r.status !== 200) return false;
        p = (r.body as unknown as { preview: CascadePreview }).preview;
        if (unknownRead) return p.plan === 'unknown' && !p.candidates.length;
        return JSON.stringify(p.candidates.map((c) => key(c.ref)).sort()) === JSON.stringify(want);
      },
      { timeoutMs: 90_000, intervalMs: 2000 },
    );
    return p as CascadePreview;
  }
  const byKind = (p: CascadePreview, kind: string) => p.candidates.find((c) => c.ref.kind === kind) as Candidate;

  beforeAll(async () => {
    kubectl(CLUSTER, ['create', 'namespace', NS_B]);
    const files: Record<string, string> = {};
    for (const [dir, names] of Object.entries(dirs)) {
      for (const n of names) files[`${DIR}/${dir}/${n}.yaml`] = objects[n];
      files[`${DIR}/${dir}/kustomization.yaml`] =
        `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n${names.map((n) => `  - ${n}.yaml\n`).join('')}`;
    }
    // applied once at `before` (ownEstate waits for it)
    estate = await ownEstate({
      name: 'prune-cascades',
      env: 'prod',
      files,
      apps: [
        {
          name: 'cascade',
          path: `${DIR}/before`,
          prune: false,
          // no target namespace: the objects name theirs (Flux's targetNamespace would rename the Namespace in Git)
          spec: { targetNamespace: undefined },
        },
      ],
    });
    kubeconfig = ownConsoleIdentity(estate);
    con = await startTestConsole({ KUBECONFIG: kubeconfig });
    // made in the Namespace by someone else (not in Git): only a live list finds them
    kubectl(CLUSTER, ['-n', NS_A, 'create', 'configmap', 'c1', '--from-literal=a=1']);
    kubectl(CLUSTER, ['-n', NS_A, 'create', 'secret', 'generic', 's1', '--from-literal=password=not-read']);
    kubectl(CLUSTER, ['-n', NS_A, 'create', 'rolebinding', 'rb1', '--clusterrole=view', `--user=nobody-${suffix}`]);
    await waitFor(
      'a custom resource made',
      async () => {
        try {
          apply(`apiVersion: ${GROUP}/v1\nkind: Widget\nmetadata:\n  name: w1\n  namespace: ${NS_A}\n`);
          return true;
        } catch {
          return false;
        }
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    await waitFor(
      'the protected Pod made',
      async () => kubectl(CLUSTER, ['-n', NS_B, 'get', 'pods', '-l', 'app=guarded', '-o', 'name']).trim() !== '',
      { timeoutMs: 60_000 },
    );
    setPath('mid');
  }, 600_000);

  afterAll(async () => {
    const quiet = (args: string[]) => {
      try {
        kubectl(CLUSTER, args);
      } catch {
        /* gone already */
      }
    };
    try {
      await con?.close();
    } finally {
      try {
        quiet(['delete', 'clusterrolebinding,clusterrole', GRANT, '--ignore-not-found']);
        if (estate) removeConsoleIdentity(estate, kubeconfig);
        quiet(['delete', 'namespace', NS_A, NS_B, '--ignore-not-found', '--wait=false']);
        quiet(['delete', 'customresourcedefinition', CRD, '--ignore-not-found', '--wait=false']);
      } finally {
        await estate?.teardown();
      }
    }
  }, 300_000);

  it('a Deployment whose Pod is protected is blocked, named; a Namespace the console cannot list is unknown', async () => {
    const p = await cascadePreview(
      [`Deployment/${NS_B}/guarded`, `ConfigMap/${NS_B}/plain`, `Namespace/${NS_A}`].sort(),
    );
    const deploy = byKind(p, 'Deployment');
    expect(deploy.deletable).toBe(false);
    expect(deploy.blockedBy).toMatch(
      new RegExp(`^its Pod ${NS_B}/guarded-[a-z0-9]+-[a-z0-9]+ is protected \\(${PROTECTED_BY}\\)$`),
    );
    // the shipped RBAC lets the console list neither Secrets nor RoleBindings: unknown, never "nothing else"
    const ns = byKind(p, 'Namespace');
    expect(ns.deletable).toBe(false);
    expect(ns.cascadesUnknown).toMatch(
      new RegExp(
        `^cannot list .*\\bsecrets\\b.*rbac\\.authorization\\.k8s\\.io/rolebindings.* in ns ${NS_A}: the namespace's contents are unknown$`,
      ),
    );
    expect(p.reasons).toContain(`Namespace ${NS_A} is not deleted: ${ns.cascadesUnknown}`);
    // the plan goes on with what is known and safe
    expect(byKind(p, 'ConfigMap')).toMatchObject({ deletable: true, blockedBy: null, cascadesUnknown: null });
    expect(p.plan).toBe('ready');
  });

  it("where the operator lets it list a Namespace's kinds, its Secrets and RoleBindings are counted", async () => {
    apply(`apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: ${GRANT}, namespace: ${NS_A} }
rules: [{ apiGroups: ['*'], resources: ['*'], verbs: [list] }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: ${GRANT}, namespace: ${NS_A} }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: ${GRANT} }
subjects: [${subject()}]
`);
    let ns: Candidate | undefined;
    await waitFor(
      'the Namespace listed in full',
      async () => {
        ns = byKind(
          await cascadePreview([`Deployment/${NS_B}/guarded`, `ConfigMap/${NS_B}/plain`, `Namespace/${NS_A}`].sort()),
          'Namespace',
        );
        return ns.cascadesUnknown === null;
      },
      { timeoutMs: 30_000, intervalMs: 1000 },
    );
    const listed = (ns as Candidate).cascades.map(key);
    for (const o of [`Secret/${NS_A}/s1`, `RoleBinding/${NS_A}/rb1`, `ConfigMap/${NS_A}/c1`, `Widget/${NS_A}/w1`])
      expect(listed).toContain(o);
    expect(ns?.deletable).toBe(true);
  });

  it('a CRD candidate counts its custom resources (unknown while the console may not list them)', async () => {
    setPath('after');
    const want = [
      `Deployment/${NS_B}/guarded`,
      `ConfigMap/${NS_B}/plain`,
      `Namespace/${NS_A}`,
      `CustomResourceDefinition/${CRD}`,
    ].sort();
    // the shipped role may not even read a CRD: the plan is unknown, nothing can be approved
    const unreadable = await cascadePreview(want, true);
    expect(unreadable.plan).toBe('unknown');
    expect(unreadable.reasons.join(' ')).toMatch(/reading the candidates live failed.*forbidden/);
    const grant = (rules: string) =>
      apply(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: ${GRANT} }
rules: ${rules}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: ${GRANT} }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ${GRANT} }
subjects: [${subject()}]
`);
    const readCrd = `{ apiGroups: [apiextensions.k8s.io], resources: [customresourcedefinitions], resourceNames: [${CRD}], verbs: [get] }`;
    grant(`[${readCrd}]`);
    let crd: Candidate | undefined;
    await waitFor(
      'the CRD read',
      async () => {
        const p = await cascadePreview(want);
        crd = p.candidates.find((c) => c.ref.kind === 'CustomResourceDefinition');
        return !!crd;
      },
      { timeoutMs: 30_000, intervalMs: 1000 },
    );
    expect(crd).toMatchObject({
      deletable: false,
      cascadesUnknown: `cannot list ${GROUP}/widgets: the CRD's custom resources are unknown`,
    });
    grant(`[${readCrd}, { apiGroups: [${GROUP}], resources: [widgets], verbs: [list] }]`);
    await waitFor(
      'the custom resources listed',
      async () => {
        crd = byKind(await cascadePreview(want), 'CustomResourceDefinition');
        return crd.cascadesUnknown === null;
      },
      { timeoutMs: 30_000, intervalMs: 1000 },
    );
    expect(crd?.cascades.map(key)).toEqual([`Widget/${NS_A}/w1`]);
  });
});
