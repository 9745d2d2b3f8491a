// Issue 27, the first diff's dry-runs: an object whose server-side apply provably changes nothing (its
// managedFields say so, domain/apply-noop.ts) is not sent to the apiserver. The proof is checked here against the
// real thing: for every object the console says "apply changes nothing", a real server-side dry-run as
// kustomize-controller returns the live object unchanged — on the app as Flux applied it (a Service and a
// ConfigMap proved; a Deployment not: Flux owns a `strategy: {}` Git does not set), and after people who do not use
// the console edit it with kubectl as other field managers (a value Git sets, an atomic list, a selector key Git
// does not set): nothing they touched is proved, and what would be reverted is "changed" by a real dry-run.
// The app is this test's own estate (test/support/own-estate.ts: its repository, Kustomization and namespace),
// suspended once applied; deleted at the end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { DiffResponse } from '../../src/api/schemas.ts';
import { kubectl } from '../../sandbox/state.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { setSuspended } from '../../sandbox/scenario.ts';
import { authedFetch, startTestConsole } from '../support/console.ts';
import { ownEstate, type Estate } from '../support/own-estate.ts';

const DIR = 'app';
const FILES = {
  [`${DIR}/web.yaml`]: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels:
      app: apply-noop-web
  template:
    metadata:
      labels:
        app: apply-noop-web
    spec:
      containers:
        - name: web
          image: registry.example.com/digital-human/session-cache:7.2
          args: ["--port", "8080"]
          env:
            - name: MODE
              value: fast
          ports:
            - containerPort: 8080
              name: http
          resources:
            requests:
              cpu: 100m
              memory: 64Mi
`,
  [`${DIR}/web-svc.yaml`]: `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: apply-noop-web
  ports:
    - name: http
      port: 80
      protocol: TCP
      targetPort: http
`,
  [`${DIR}/settings.yaml`]: `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  mode: a
  level: "3"
`,
};

type Obj = Record<string, unknown>;
let con: Awaited<ReturnType<typeof startTestConsole>>;
let estate: Estate;

async function diff(): Promise<DiffResponse> {
  const res = await authedFetch(`${con.url}/api/apps/${estate.appId()}/diff`);
  expect(res.status).toBe(200);
  const d = (await res.json()) as DiffResponse;
  expect(d.state).toBe('ok');
  return d;
}

/** the object without what an apply or a read adds on its own (bookkeeping, status) */
function comparable(o: Obj): Obj {
  const { status: _s, ...rest } = o;
  const md = { ...(rest.metadata as Obj) };
  for (const k of ['managedFields', 'resourceVersion', 'generation', 'creationTimestamp', 'uid']) delete md[k];
  return { ...rest, metadata: md };
}

const liveOf = (kind: string, name: string) =>
  JSON.parse(kubectl(estate.cluster, ['-n', estate.namespace, 'get', kind, name, '-o', 'json'])) as Obj;

/** a real server-side dry-run of Git's object as kustomize-controller (the sandbox's admin sends it) */
const dryRun = (desiredYaml: string) =>
  JSON.parse(
    kubectl(
      estate.cluster,
      [
        ...['apply', '--server-side', '--dry-run=server', '--force-conflicts'],
        ...['--field-manager=kustomize-controller', '-o', 'json', '-f', '-'],
      ],
      desiredYaml,
    ),
  ) as Obj;

/** every object the console proved unchanged is what a real dry-run leaves as live; returns the proved names */
async function checkProofs(): Promise<{ d: DiffResponse; proved: string[] }> {
  const d = await diff();
  const proved: string[] = [];
  for (const o of d.objects.filter((x) => x.mode === 'apply-noop')) {
    expect(o.status).toBe('unchanged');
    const desired = o.desiredYaml ?? '';
    expect((parse(desired) as Obj).kind).toBe(o.ref.kind);
    const after = comparable(dryRun(desired));
    const live = comparable(liveOf(o.ref.kind, o.ref.name));
    expect(after, `${o.ref.kind}/${o.ref.name}: proved unchanged, yet a real dry-run changes it`).toEqual(live);
    proved.push(`${o.ref.kind}/${o.ref.name}`);
  }
  return { d, proved: proved.sort() };
}

const patchAs = (what: string, type: 'merge' | 'json', patch: unknown) =>
  kubectl(estate.cluster, [
    ...['-n', estate.namespace, 'patch', what, '--field-manager=attacker', `--type=${type}`],
    ...['-p', JSON.stringify(patch)],
  ]);

beforeAll(async () => {
  // applied at its first commit once made
  estate = await ownEstate({ name: 'apply-noop', env: 'dev', files: FILES, apps: [{ name: 'app', path: DIR }] });
  // from here on only the test changes live state
  setSuspended(estate.cluster, estate.kustomization(), true);
  con = await startTestConsole();
  await waitFor('console ready', async () => (await fetch(`${con.url}/readyz`)).status === 200, { timeoutMs: 60_000 });
  await waitFor(
    'the app diffable',
    async () => {
      const r = await authedFetch(`${con.url}/api/apps/${estate.appId()}/diff`);
      if (r.status !== 200) return false;
      const d = (await r.json()) as DiffResponse;
      return d.state === 'ok' && d.objects.filter((o) => o.status !== 'extraneous').length === 3;
    },
    { timeoutMs: 60_000, intervalMs: 1000 },
  );
}, 300_000);

afterAll(async () => {
  await con?.close();
  await estate?.teardown();
});

describe('apply changes nothing, proved without a dry-run', () => {
  it('as Flux applied it: the Service and the ConfigMap are proved, and real dry-runs agree', async () => {
    const { d, proved } = await checkProofs();
    expect(proved).toEqual(['ConfigMap/settings', 'Service/web']);
    // kustomize-controller applies a Deployment through Go's types, so it owns `strategy: {}`, which Git does not
    // set: whether dropping it changes anything (re-defaulted) the proof cannot tell, so the apiserver is asked
    expect(d.objects.find((o) => o.ref.kind === 'Deployment')).toMatchObject({
      status: 'unchanged',
      mode: 'server-dry-run',
    });
    expect(d.summary).toBe('no differences: live matches Git');
  });

  it('edited with kubectl as other managers: nothing they touched is proved; what a dry-run reverts is changed', async () => {
    patchAs('configmap/settings', 'merge', { data: { level: '9' } }); // a value Git sets
    patchAs('deployment/web', 'json', [{ op: 'add', path: '/spec/template/spec/containers/0/args/-', value: '-v' }]);
    patchAs('service/web', 'merge', { spec: { selector: { tier: 'attacker' } } }); // a key Git does not set
    let last: DiffResponse | undefined;
    const line = (o: DiffResponse['objects'][number]) => `${o.ref.kind}/${o.ref.name} ${o.status} ${o.mode}`;
    const want = [
      'ConfigMap/settings changed server-dry-run',
      'Deployment/web changed server-dry-run',
      // the apply would leave a selector key Git does not set (a granular map): a real dry-run says unchanged too
      'Service/web unchanged server-dry-run',
    ];
    await waitFor(
      'the console sees the edits',
      async () => {
        last = await diff();
        const got = last.objects.filter((o) => o.status !== 'extraneous').map(line);
        return JSON.stringify(got.sort()) === JSON.stringify(want);
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    ).catch((e: unknown) => {
      throw new Error(`${String(e)}; last: ${JSON.stringify(last?.objects.map(line))}`);
    });
    const { d, proved } = await checkProofs();
    expect(proved).toEqual([]);
    const change = (kind: string, path: string) =>
      d.objects.find((o) => o.ref.kind === kind)?.changes.find((c) => c.path === path);
    expect(change('ConfigMap', 'data.level')).toMatchObject({ predicted: '3', live: '9' });
    expect(d.objects.find((o) => o.ref.kind === 'Deployment')?.changes.some((c) => /args/.test(c.path))).toBe(true);
  });
});
