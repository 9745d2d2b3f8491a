// Issue 12 against the real sandbox: drift as a live signal from the informers (managedFields, no dry-run),
// kept as evidence after Flux reverts it, and equal to what the full diff says on the same scenario.
// The BFF runs in-process as the console's least-privilege identity; hand edits are the sandbox admin's.
// The file owns its estate (test/support/own-estate.ts: the dev template in a namespace of its own, its own
// Kustomization, reconciled only when this file asks); every hand edit is on its objects, deleted at the end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppDto, DiffResponse, ReconcileStatusResponse } from '../../src/api/schemas.ts';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { kubectl, mustState } from '../../sandbox/state.ts';
import { kubeRequest, kubeTarget } from '../../sandbox/kube-http.ts';
import { sleep, waitFor } from '../../sandbox/procs.ts';
import { annotateServiceAsController, kubectlEdit, kubectlScale, scaleAsController } from '../../sandbox/scenario.ts';
import { as } from '../support/auth.ts';
import { startTestConsole } from '../support/console.ts';
import { fluxReconciled as reconcileNow } from '../support/flux.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../support/own-estate.ts';

/** what the sandbox's cloud-lb-controller writes at start (waitForAllReady): an annotation Git does not declare */
const LB_ANNOTATION = 'service.beta.kubernetes.io/load-balancer-id';

let estate: Estate;
let CLUSTER: string;
let NS: string;
let APP: string;
let DEPLOY: string;
let CM: string;
let SVC: string;
let con: Awaited<ReturnType<typeof startTestConsole>>;

const get = async <T>(path: string): Promise<T> => {
  const r = await as(con.admin, con.url, path);
  if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${r.text}`);
  return r.body as T;
};
const app = async () => (await get<{ app: AppDto }>(`/api/apps/${APP}`)).app;
const objectDrift = async (object: string) =>
  (await app()).drift?.objects.find(
    (o) => `${o.ref.cluster}/${o.ref.group || 'core'}/${o.ref.kind}/${o.ref.namespace}/${o.ref.name}` === object,
  );
const evidence = async (type: string, object: string) =>
  (
    await get<{ events: EvidenceEvent[] }>(`/api/evidence?app=${encodeURIComponent(APP)}&type=${type}&limit=1000`)
  ).events.filter((e) => e.data.object === object);

/** Flux reconciles now and has handled it (its next periodic run is an interval away). */
const fluxReconciled = () => reconcileNow(CLUSTER, estate.kustomization());

/** Waits until the app shows no open drift on `object` (Flux took the fields back). */
async function driftGone(object: string): Promise<void> {
  await waitFor(`no drift on ${object}`, async () => !(await objectDrift(object)), { timeoutMs: 30_000 });
}

/** The sandbox's second controller writing the Service's `env` label (Git declares it, through kustomize). */
const labelAsCloudController = (value: string) =>
  kubectl(CLUSTER, [
    '-n',
    NS,
    'patch',
    'service',
    'tts-gateway',
    '--type',
    'merge',
    '--field-manager',
    'cloud-lb-controller',
    '-p',
    JSON.stringify({ metadata: { labels: { env: value } } }),
  ]);

/**
 * Polls the app until `object` shows drift; returns it with how long it took after `written` (when the writing
 * kubectl returned: its own start-up, 1–3 s at load 10, is not the console's latency; the console's event loop is
 * blocked while it runs).
 */
async function driftSeen(object: string, written: number, timeoutMs = 10_000) {
  for (;;) {
    const d = await objectDrift(object);
    if (d) return { drift: d, ms: Date.now() - written };
    if (Date.now() - written > timeoutMs) throw new Error(`no drift on ${object} within ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** The drift / conflict changes the full diff (server-side dry-run) reports for one object. */
async function diffFields(kind: string, name: string) {
  const d = await get<DiffResponse>(`/api/apps/${APP}/diff`);
  const o = d.objects.find((x) => x.ref.kind === kind && x.ref.name === name && x.ref.namespace === NS);
  return (o?.changes ?? [])
    .filter((c) => c.class === 'drift' || c.class === 'conflict')
    .map((c) => ({ path: c.path, class: c.class, live: c.live, owners: c.owners.map((w) => w.manager) }));
}

beforeAll(async () => {
  estate = await ownEstate({ name: 'drift', env: 'dev', files: digitalHumanTemplate('dev') });
  CLUSTER = estate.cluster;
  NS = estate.namespace;
  APP = estate.appId();
  DEPLOY = `${CLUSTER}/apps/Deployment/${NS}/tts-gateway`;
  CM = `${CLUSTER}/core/ConfigMap/${NS}/render-worker-config`;
  SVC = `${CLUSTER}/core/Service/${NS}/tts-gateway`;
  // what the sandbox's cloud-lb-controller does to every env's Service at start: its own annotation
  annotateServiceAsController(CLUSTER, NS, 'tts-gateway', LB_ANNOTATION, `lb-${CLUSTER}-${estate.id}-7f3a`);
  // the estate's cluster only: the informers of the other cluster are no part of this file
  con = await startTestConsole({ CONSOLE_CONTEXTS: CLUSTER });
  await waitFor('the dev app in the console', async () => (await app()).inventory.length > 0, { timeoutMs: 60_000 });
  // a clean start: Flux has applied Git just now (its next periodic run is an interval away)
  await fluxReconciled();
  await get(`/api/apps/${APP}/diff`); // renders once, so that later diffs only dry-run what changed
}, 300_000);

afterAll(async () => {
  await con?.close();
  await estate?.teardown();
}, 180_000);

describe('drift as a first-class signal (issue 12)', () => {
  it('a hand scale is drift within 2 s, named kubectl (what `kubectl scale` writes as) with spec.replicas; Flux reverts it: one episode in the evidence', async () => {
    await fluxReconciled();
    const t0 = Date.now();
    kubectlScale(CLUSTER, 'deployment/tts-gateway', NS, 3);
    const { drift, ms } = await driftSeen(DEPLOY, Date.now());
    expect(ms).toBeLessThan(2_000);
    expect(drift).toMatchObject({
      kind: 'person',
      managers: ['kubectl'],
      fields: [{ path: 'spec.replicas', from: 1, to: 3 }],
      writes: 1,
    });
    const a = await app();
    expect(a.drift).toMatchObject({ kind: 'person', managers: ['kubectl'] });
    // the overview's filter: ?drifted=true lists it, ?drifted=false does not
    const listed = async (q: string) =>
      (await get<{ apps: Array<{ id: string }> }>(`/api/apps?${q}`)).apps.some((x) => x.id === APP);
    expect(await listed('drifted=true')).toBe(true);
    expect(await listed('drifted=false')).toBe(false);

    await fluxReconciled();
    await driftGone(DEPLOY);
    const mine = (e: EvidenceEvent) => Date.parse(e.time) >= t0;
    const detected = (await evidence('drift.detected', DEPLOY)).filter(mine);
    const reverted = (await evidence('drift.reverted', DEPLOY)).filter(mine);
    expect(detected).toHaveLength(1);
    expect(reverted).toHaveLength(1);
    expect(detected[0]).toMatchObject({ actor: 'kubectl', data: { kind: 'person', managers: ['kubectl'] } });
    const r = reverted[0]!.data as Record<string, unknown>;
    expect(r).toMatchObject({
      managers: ['kubectl'],
      fields: [{ path: 'spec.replicas', from: 1, to: 3 }],
      writes: 1,
      startedAt: drift.since,
    });
    expect(Date.parse(String(r.endedAt))).toBeGreaterThan(Date.parse(String(r.startedAt)));
    expect(r.durationMs).toBe(Date.parse(String(r.endedAt)) - Date.parse(String(r.startedAt)));
    expect(reverted[0]!.actor).toBe('kustomize-controller');
  });

  it('the fast signal names the same fields as the full diff (dry-run) on the same scenarios', async () => {
    /**
     * Makes the change, waits for the drift, and reads the diff while that very episode is still open (a
     * reconcile still in flight may revert it meanwhile: then the scenario runs again).
     */
    const compare = async (object: string, kind: string, name: string, change: () => void) => {
      for (let attempt = 1; ; attempt++) {
        await fluxReconciled();
        const t0 = Date.now();
        change();
        const { drift } = await driftSeen(object, t0);
        const diff = await diffFields(kind, name);
        const still = await objectDrift(object);
        if (still?.since === drift.since && still.writes === drift.writes) return { drift, diff };
        if (attempt === 3) throw new Error(`the drift on ${object} kept ending before the diff was read`);
      }
    };
    const asDiff = (d: { kind: string; managers: string[]; fields: Array<{ path: string; to?: unknown }> }) =>
      d.fields.map((f) => ({
        path: f.path,
        class: d.kind === 'person' ? 'drift' : 'conflict',
        live: f.to,
        owners: d.managers,
      }));

    // a person's scale of replicas Git declares
    const scale = await compare(DEPLOY, 'Deployment', 'tts-gateway', () =>
      kubectlScale(CLUSTER, 'deployment/tts-gateway', NS, 2),
    );
    expect(scale.diff).toEqual(asDiff(scale.drift));
    expect(scale.diff).toEqual([{ path: 'spec.replicas', class: 'drift', live: 2, owners: ['kubectl'] }]);
    // an HPA-like controller on the same field: a conflict
    const hpa = await compare(DEPLOY, 'Deployment', 'tts-gateway', () =>
      scaleAsController(CLUSTER, 'tts-gateway', NS, 2),
    );
    expect(hpa.diff).toEqual(asDiff(hpa.drift));
    expect(hpa.drift.kind).toBe('conflict');
    // kubectl edit of a value Git declares plus a key Git does not have (added by hand: drift too)
    const edit = await compare(CM, 'ConfigMap', 'render-worker-config', () =>
      kubectlEdit(CLUSTER, 'configmap/render-worker-config', NS, { data: { codec: 'vp9', 'debug-trace': '1' } }),
    );
    expect(edit.diff).toEqual(asDiff(edit.drift));
    expect(edit.diff.map((f) => f.path)).toEqual(['data.codec', 'data["debug-trace"]']);
    // another controller taking a label Git declares
    const label = await compare(SVC, 'Service', 'tts-gateway', () => labelAsCloudController('lb-managed'));
    expect(label.diff).toEqual(asDiff(label.drift));
    expect(label.diff).toEqual([
      { path: 'metadata.labels.env', class: 'conflict', live: 'lb-managed', owners: ['cloud-lb-controller'] },
    ]);
    await fluxReconciled();
  });

  it('50 hand edits in 5 s are one episode with 50 writes; the revert records them', async () => {
    await fluxReconciled();
    const st = mustState();
    const c = st.clusters.find((x) => x.name === CLUSTER)!;
    const target = kubeTarget(c);
    const t0 = Date.now();
    for (let i = 1; i <= 50; i++) {
      const r = await kubeRequest(
        target,
        'PATCH',
        `/api/v1/namespaces/${NS}/configmaps/render-worker-config?fieldManager=kubectl-edit`,
        { data: { codec: `h264-${i}` } },
        'application/merge-patch+json',
      );
      expect(r.status).toBe(200);
      // 60 ms apart (3 s in all): under load each PATCH may take 100 ms more, and the edits stay within 5 s
      await sleep(Math.max(0, t0 + i * 60 - Date.now()));
    }
    expect(Date.now() - t0).toBeLessThan(5_000);
    await waitFor('50 writes counted', async () => (await objectDrift(CM))?.writes === 50, { timeoutMs: 5_000 });
    expect(await objectDrift(CM)).toMatchObject({
      kind: 'person',
      managers: ['kubectl-edit'],
      fields: [{ path: 'data.codec', from: 'h264', to: 'h264-50' }],
    });
    const mine = (e: EvidenceEvent) => Date.parse(e.time) >= t0;
    expect((await evidence('drift.detected', CM)).filter(mine)).toHaveLength(1);

    await fluxReconciled();
    await driftGone(CM);
    const reverted = (await evidence('drift.reverted', CM)).filter(mine);
    expect(reverted).toHaveLength(1);
    expect(reverted[0]!.data).toMatchObject({
      writes: 50,
      fields: [{ path: 'data.codec', from: 'h264', to: 'h264-50' }],
    });
  });

  it('another controller writing a field Git declares is a conflict, not a person; its own annotation Git leaves out is no drift', async () => {
    await fluxReconciled();
    const t0 = Date.now();
    // the sandbox's cloud-lb-controller owns an annotation Git does not declare: a new value is its business
    annotateServiceAsController(CLUSTER, NS, 'tts-gateway', LB_ANNOTATION, `lb-${CLUSTER}-${estate.id}-rotated`);
    // …taking a label Git declares (kustomize's `env` label) is a conflict
    labelAsCloudController('lb-managed');
    const { drift, ms } = await driftSeen(SVC, Date.now());
    expect(ms).toBeLessThan(2_000);
    expect(drift).toMatchObject({
      kind: 'conflict',
      managers: ['cloud-lb-controller'],
      fields: [{ path: 'metadata.labels.env', from: 'dev', to: 'lb-managed' }],
    });
    const detected = (await evidence('drift.detected', SVC)).filter((e) => Date.parse(e.time) >= t0);
    expect(detected).toHaveLength(1);
    expect(detected[0]).toMatchObject({ actor: 'cloud-lb-controller', data: { kind: 'conflict' } });
    await fluxReconciled();
    await driftGone(SVC);
    const ended = (await evidence('drift.reverted', SVC)).filter((e) => Date.parse(e.time) >= t0);
    expect(ended.map((e) => e.data.kind)).toEqual(['conflict']);
  });

  it('no false drift during a normal reconcile (the controller apply, status writes, pods coming and going)', async () => {
    await fluxReconciled();
    const count = async () =>
      (
        await get<{ events: EvidenceEvent[] }>(
          `/api/evidence?app=${encodeURIComponent(APP)}&type=drift.detected&limit=1000`,
        )
      ).events.length;
    const before = await count();
    await fluxReconciled();
    await fluxReconciled();
    await sleep(2_000);
    expect(await count()).toBe(before);
    expect((await app()).drift).toBeUndefined();
  });

  it('"reconcile now" says what happened: reconciled with the revision applied and the field it reverted', async () => {
    await fluxReconciled();
    kubectlEdit(CLUSTER, 'configmap/render-worker-config', NS, { data: { 'max-sessions': '16' } });
    await driftSeen(CM, Date.now());
    const post = await as(con.admin, con.url, `/api/apps/${APP}/reconcile`, { method: 'POST' });
    expect(post.status).toBe(200);
    const requestedAt = String(post.body.requestedAt);
    const url = `/api/apps/${APP}/reconcile-status?requestedAt=${encodeURIComponent(requestedAt)}`;
    let s = await get<ReconcileStatusResponse>(url);
    expect(['pending', 'reconciled']).toContain(s.state);
    await waitFor(
      'the controller to handle the request and the revert to be seen',
      async () => {
        s = await get<ReconcileStatusResponse>(url);
        return s.state !== 'pending' && s.reverted.length > 0;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    const a = await app();
    expect(s).toMatchObject({
      state: 'reconciled',
      requestedAt,
      revision: a.source.revisionObserved,
      reverted: [{ object: CM, path: 'data["max-sessions"]', managers: ['kubectl-edit'] }],
    });
    expect(Date.parse(s.reconciledAt ?? '')).toBeGreaterThanOrEqual(Math.floor(Date.parse(requestedAt) / 1000) * 1000);
    // a malformed request time is refused
    expect((await as(con.admin, con.url, `/api/apps/${APP}/reconcile-status?requestedAt=yesterday`)).status).toBe(400);
  });
});
