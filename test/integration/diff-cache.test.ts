// Issue #14, "Live updates without a storm": an open diff is refetched on every live change of its app (each
// `app-objects` message, a Pod's status included). Against the real sandbox, as the console's own identity:
// a refetch with nothing changed renders nothing and sends no dry-run; Pod status changes change nothing;
// `kubectl scale` of a managed Deployment costs exactly that object's dry-run; a new commit costs one render.
// The app is this test's own estate (test/support/own-estate.ts: its repository, GitRepository, Kustomization and
// namespace; the Kustomization suspended once applied so no controller rewrites live state under the test): only
// this test pushes to its repository, so every new revision a diff sees is the test's own commit. Deleted at the end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DiffResponse, StreamMessage } from '../../src/api/schemas.ts';
import { kubectl } from '../../sandbox/state.ts';
import { sleep, waitFor } from '../../sandbox/procs.ts';
import {
  getJson,
  kubectlScale,
  requestReconcile,
  setSuspended,
  waitForDeploymentAvailable,
  writeRepoFile,
} from '../../sandbox/scenario.ts';
import { authedFetch, startTestConsole, waitForStreamMessage } from '../support/console.ts';
import { ownEstate, type Estate } from '../support/own-estate.ts';

const DIR = 'app';
const LABEL = 'diff-cache-web';

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels:
      app: ${LABEL}
  template:
    metadata:
      labels:
        app: ${LABEL}
    spec:
      containers:
        - name: web
          image: registry.example.com/digital-human/session-cache:7.2
          ports:
            - containerPort: 8080
`;
const settings = (mode: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: ${mode}\n`;

let con: Awaited<ReturnType<typeof startTestConsole>>;
let estate: Estate;
let CLUSTER = '';
let NS = '';
let APP_ID = '';
type Diff = DiffResponse & { work: NonNullable<DiffResponse['work']> };

async function diff(): Promise<Diff> {
  const res = await authedFetch(`${con.url}/api/apps/${APP_ID}/diff`);
  expect(res.status).toBe(200);
  const d = (await res.json()) as DiffResponse;
  if (!d.work) throw new Error('the diff response carries no work counters');
  return d as Diff;
}

beforeAll(async () => {
  // applied at its first commit once made
  estate = await ownEstate({
    name: 'diff-cache',
    env: 'dev',
    files: { [`${DIR}/web.yaml`]: deployment, [`${DIR}/settings.yaml`]: settings('a') },
    apps: [{ name: 'app', path: DIR }],
  });
  [CLUSTER, NS, APP_ID] = [estate.cluster, estate.namespace, estate.appId()];
  // from here on only the test changes live state (the render does not depend on suspend)
  setSuspended(CLUSTER, estate.kustomization(), true);
  await waitForDeploymentAvailable(CLUSTER, NS, 'web');
  con = await startTestConsole();
  await waitFor('console ready', async () => (await fetch(`${con.url}/readyz`)).status === 200, { timeoutMs: 60_000 });
  await waitFor(
    'the app diffable, its Deployment live',
    async () => {
      const r = await authedFetch(`${con.url}/api/apps/${APP_ID}/diff`);
      if (r.status !== 200) return false;
      const d = (await r.json()) as DiffResponse;
      return d.state === 'ok' && d.objects.some((o) => o.ref.name === 'web' && o.mode !== 'normalized');
    },
    { timeoutMs: 60_000, intervalMs: 1000 },
  );
});

afterAll(async () => {
  await con?.close();
  await estate?.teardown();
});

/**
 * Diffs after `from` until `done`, as a debounced SPA would refetch; returns the total work and how many new
 * source revisions the diffs saw (only this test pushes to its estate's repository).
 */
async function diffUntil(from: Diff, done: (d: Diff) => boolean, opts: { timeoutMs?: number; nudge?: boolean } = {}) {
  const total = { renders: 0, dryRuns: 0, polls: 0, newRevisions: 0 };
  let last = from;
  const start = Date.now();
  for (;;) {
    if (opts.nudge) requestReconcile(CLUSTER, 'gitrepository', estate.source);
    const d = await diff();
    total.renders += d.work.renders;
    total.dryRuns += d.work.dryRuns;
    total.polls++;
    if (last.render?.revision !== d.render?.revision) total.newRevisions++;
    last = d;
    if (done(d)) return { ...total, last: d };
    if (Date.now() - start > (opts.timeoutMs ?? 60_000))
      throw new Error(`diffUntil: timed out after ${total.polls} diffs`);
    await sleep(500);
  }
}

const managed = (d: Diff) => d.objects.filter((o) => o.status !== 'extraneous');

describe('diff refetched on live updates (issue 14)', () => {
  it('two diffs in a row with nothing changed: the second renders nothing and sends no dry-run', async () => {
    const [a, b] = [await diff(), await diff()];
    // nobody else pushes to the estate's repository: both diffs are of its first commit
    expect(a.render?.revision).toContain(estate.seedCommit);
    expect(b.render?.revision).toBe(a.render?.revision);
    expect(b.work).toEqual({ renders: 0, dryRuns: 0, cachedObjects: managed(b).length, coalesced: false });
    expect(
      managed(b)
        .map((o) => o.ref.name)
        .sort(),
    ).toEqual(['settings', 'web']);
    expect(b.objects).toEqual(a.objects);
    // and what was reused was a server-side dry-run (or the proof that applying changes nothing), not the fallback
    expect(managed(b).every((o) => o.mode === 'server-dry-run' || o.mode === 'apply-noop')).toBe(true);
  });

  it('Pod status changes (the app-objects storm, readiness moving the Deployment status too) cost no render and no dry-run', async () => {
    const start = await diff();
    const pods = (
      JSON.parse(kubectl(CLUSTER, ['-n', NS, 'get', 'pods', '-l', `app=${LABEL}`, '-o', 'json'])) as {
        items: Array<{ metadata: { name: string; resourceVersion: string } }>;
      }
    ).items;
    expect(pods.length).toBeGreaterThan(0);
    const saw = waitForStreamMessage<StreamMessage>(con.url, (m) => m.type === 'app-objects' && m.id === APP_ID);
    await sleep(300); // the stream is open before the first change
    const ROUNDS = 5;
    for (let round = 1; round <= ROUNDS; round++)
      for (const p of pods)
        kubectl(CLUSTER, [
          ...['-n', NS, 'patch', 'pod', p.metadata.name, '--subresource=status', '--type=strategic'],
          ...['--field-manager', 'diff-cache-probe'],
          '-p',
          JSON.stringify({
            status: {
              conditions: [{ type: 'example.com/Probe', status: 'True', message: `round ${round}` }],
            },
          }),
        ]);
    await saw; // the console saw them as this app's live updates (what makes an open diff refetch)
    // a Pod that stops and starts being ready moves its Deployment's status (and resourceVersion) too
    const deploymentRv = () =>
      String(
        (getJson(CLUSTER, ['-n', NS, 'get', 'deployment', 'web']).metadata as { resourceVersion: string })
          .resourceVersion,
      );
    const rvBefore = deploymentRv();
    const ready = async (status: 'True' | 'False', want: number) => {
      kubectl(CLUSTER, [
        ...['-n', NS, 'patch', 'pod', pods[0]?.metadata.name ?? '', '--subresource=status', '--type=strategic'],
        ...['--field-manager', 'diff-cache-probe', '-p'],
        JSON.stringify({ status: { conditions: [{ type: 'Ready', status }] } }),
      ]);
      await waitFor(
        `web readyReplicas ${want}`,
        async () =>
          Number(
            (getJson(CLUSTER, ['-n', NS, 'get', 'deployment', 'web']).status as { readyReplicas?: number })
              .readyReplicas ?? 0,
          ) === want,
        { timeoutMs: 30_000, intervalMs: 300 },
      );
    };
    await ready('False', pods.length - 1);
    await ready('True', pods.length);
    const rvAfter = deploymentRv();
    expect(rvAfter).not.toBe(rvBefore);
    const consoleHas = (kind: string, name: string, text: string) =>
      waitFor(
        `the console has ${kind} ${name} with ${text}`,
        async () => {
          const r = await authedFetch(
            `${con.url}/api/clusters/${CLUSTER}/object?group=${kind === 'Pod' ? '' : 'apps'}&version=v1&kind=${kind}&namespace=${NS}&name=${name}`,
          );
          return r.status === 200 && ((await r.json()) as { yaml: string }).yaml.includes(text);
        },
        { timeoutMs: 30_000, intervalMs: 300 },
      );
    await consoleHas('Pod', pods.at(-1)?.metadata.name ?? '', `round ${ROUNDS}`);
    await consoleHas('Deployment', 'web', `resourceVersion: "${rvAfter}"`);
    const d = await diff();
    expect(d.render?.revision).toBe(start.render?.revision);
    expect(d.work).toMatchObject({ renders: 0, dryRuns: 0 });
    // every dry-run result was reused. A proof that applying changes nothing is remembered 15 s only
    // (src/server/diff/object-diff-memo.ts: not a clean server-side result), which this storm outlasts on a loaded
    // machine: then it is proved again from the console's cache, still without a request to the apiserver
    expect(managed(d).every((o) => o.mode === 'server-dry-run' || o.mode === 'apply-noop')).toBe(true);
    const proofs = managed(d).filter((o) => o.mode === 'apply-noop').length;
    expect(d.work.cachedObjects).toBeGreaterThanOrEqual(managed(d).length - proofs);
  });

  it('kubectl scale of a managed Deployment: exactly that object is dry-run again, nothing is rendered', async () => {
    const before = await diff();
    expect(before.work.dryRuns).toBe(0);
    kubectlScale(CLUSTER, 'deployment/web', NS, 3);
    const r = await diffUntil(before, (d) =>
      d.objects.some(
        (o) =>
          o.ref.name === 'web' &&
          o.changes.some((c) => c.path === 'spec.replicas' && c.live === 3 && c.class === 'drift'),
      ),
    );
    expect(r.dryRuns).toBe(1);
    expect(r.newRevisions).toBe(0); // nobody pushed
    expect(r.renders).toBe(0);
    expect(r.last.objects.find((o) => o.ref.name === 'settings')?.changes.some((c) => c.class === 'drift')).toBe(false);
    // the scale's aftermath (a new Pod, the Deployment's status) costs nothing more
    await sleep(2000);
    expect((await diff()).work).toMatchObject({ dryRuns: 0 });
  });

  it('a new commit: one render, and only the objects whose desired state changed are dry-run', async () => {
    const before = await diff();
    const sha = estate.push('diff-cache test: settings mode b', (w) =>
      writeRepoFile(w, `${DIR}/settings.yaml`, settings('b')),
    );
    const settingsAtB = (d: Diff) =>
      d.objects
        .find((o) => o.ref.name === 'settings')
        ?.changes.some((c) => c.path === 'data.mode' && c.predicted === 'b') === true;
    const r = await diffUntil(before, settingsAtB, { nudge: true });
    expect(r.newRevisions).toBe(1); // this commit
    expect(r.last.render?.revision).toContain(sha);
    expect(r.renders).toBe(1); // this commit's
    expect(r.dryRuns).toBe(1); // settings (Git changed); web's desired and live did not
    const s = r.last.objects.find((o) => o.ref.name === 'settings');
    expect(s?.changes.find((c) => c.path === 'data.mode')).toMatchObject({
      predicted: 'b',
      live: 'a',
      class: 'pending',
    });
    expect(r.last.render?.renderHash).not.toBe(before.render?.renderHash);
    const again = await diff();
    expect(again.render?.revision).toBe(r.last.render?.revision);
    expect(again.work).toMatchObject({ renders: 0, dryRuns: 0 });
  });
});
