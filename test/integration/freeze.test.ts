// Incident freezes against the real sandbox (Flux staging Kustomization, Argo CD's staging
// Application): roles, bad input, freeze → a hand edit survives → the live change listed → write-back: a pull
// request on the sandbox forge (the repo the controllers fetch) from a new branch of it → the prior automation
// restored → Flux reverts; a direct un-suspend is detected; an
// Argo CD app's prior syncPolicy restored exactly; an expiry while the BFF is down is honoured at restart; and on
// two replicas (PostgreSQL), an end whose Git push stalls is never taken over while its process lives, and once
// that process is killed (SIGKILL) mid-write-back the other replica redoes the recorded write-back before it
// restores the automation — or, when Git refuses, restores nothing and says the end stalled.
// Every cluster change is undone at the end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalJson, type EvidenceEvent } from '../../src/domain/evidence.ts';
import { kubectl, mustState } from '../../sandbox/state.ts';
import {
  argoApp,
  argoRefresh,
  closePullRequest,
  deleteBranch,
  getJson,
  openPullRequestFor,
  sandboxForge,
  kubectlEdit,
  requestReconcile,
  setSuspended,
  waitForArgoSynced,
} from '../../sandbox/scenario.ts';
import { sleep, waitFor } from '../../sandbox/procs.ts';
import { as, signIn, writeTestAccounts, type Signed } from '../support/auth.ts';
import { spawnBff } from '../support/bff-process.ts';
import { startTestConsole } from '../support/console.ts';
import { startFreezeProbe, type FreezeProbe } from '../support/freeze-probe.ts';
import { startPostgres, type PgServer } from '../support/postgres.ts';

const CLUSTER = 'nonprod';
const ENV = 'staging';
const KS = 'digital-human-staging';
const FLUX_APP = `${CLUSTER}/flux-system/kustomization/${KS}`;
const ARGO = 'edge-gateway-staging';
const ARGO_APP = `${CLUSTER}/argocd/application/${ARGO}`;

type Freeze = {
  id: string;
  status: string;
  active: boolean;
  expiresAt: string;
  targets: Array<{ appId: string; applied: boolean; interference?: { state: string } }>;
  writeBack?: Array<{
    branch: string;
    commit: string | null;
    pullRequest?: { number: number; url: string } | null;
    placements: Array<{ placed: boolean; file?: string }>;
  }>;
};
type Change = {
  id: string;
  path: string;
  git: unknown;
  live: unknown;
  manager: string;
  ref: { kind: string; name: string };
};

let con: Awaited<ReturnType<typeof startTestConsole>>;
let oncall: Signed;
let viewer: Signed;
let developer: Signed;
const branches: string[] = [];

const ks = () => getJson(CLUSTER, ['-n', 'flux-system', 'get', 'kustomization', KS]);
const replicas = () =>
  Number(kubectl(CLUSTER, ['-n', ENV, 'get', 'deployment', 'render-worker', '-o', 'jsonpath={.spec.replicas}']));
const argoSyncPolicy = () =>
  (getJson(CLUSTER, ['-n', 'argocd', 'get', 'application', ARGO]).spec as Record<string, unknown>).syncPolicy;

async function freeze(who: Signed, body: Record<string, unknown>) {
  return as(who, con.url, '/api/freezes', { method: 'POST', body });
}
async function evidence(type: string): Promise<EvidenceEvent[]> {
  const r = await as(con.admin, con.url, `/api/evidence?type=${type}&limit=1000`);
  return (r.body as { events: EvidenceEvent[] }).events;
}
async function end(id: string, decisions: Array<{ change: string; action: string }> = []) {
  const r = await as(oncall, con.url, `/api/freezes/${id}/end`, { method: 'POST', body: { decisions } });
  expect(r.status, r.text).toBe(200);
  return (r.body as { freeze: Freeze }).freeze;
}

beforeAll(async () => {
  con = await startTestConsole();
  oncall = await signIn(con.url, 'oncall');
  viewer = await signIn(con.url, 'viewer');
  developer = await signIn(con.url, 'developer');
  // the staging app at rest: not suspended, Git's replicas
  setSuspended(CLUSTER, KS, false);
}, 300_000);

afterAll(async () => {
  try {
    // whatever a failed test left: resume, and close the PRs and delete the branches the write-back made
    kubectl(CLUSTER, [
      '-n',
      'flux-system',
      'annotate',
      'kustomization',
      KS,
      'gitops-console.dev/freeze-id-',
      'gitops-console.dev/freeze-reason-',
      'gitops-console.dev/frozen-until-',
      'fluxcd.controlplane.io/suspendedBy-',
    ]);
    setSuspended(CLUSTER, KS, false);
    for (const b of branches)
      try {
        const pr = await openPullRequestFor(b);
        if (pr) await closePullRequest(pr.number);
        deleteBranch(b);
      } catch {
        /* already gone */
      }
  } finally {
    await con?.close();
  }
}, 120_000);

describe('incident freeze (Flux)', () => {
  it('viewers and developers get 403, with access.denied evidence', async () => {
    for (const who of [viewer, developer]) {
      const r = await freeze(who, { cluster: CLUSTER, app: FLUX_APP, reason: 'incident', minutes: 10 });
      expect(r.status, r.text).toBe(403);
    }
    const denied = (await evidence('access.denied')).filter((e) => e.data.action === 'freeze.toggle');
    expect(denied.map((e) => e.actor).sort()).toEqual(expect.arrayContaining(['developer', 'viewer']));
    expect(ks().spec).not.toHaveProperty('suspend', true);
  });

  it('bad input is a 400 naming the field, and changes nothing', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ reason: '', minutes: 10 }, 'reason'],
      [{ reason: 'x', minutes: 0 }, 'minutes'],
      [{ reason: 'x', minutes: -5 }, 'minutes'],
      [{ reason: 'x', minutes: 24 * 60 + 1 }, 'minutes'],
      [{ reason: 'x', minutes: 10, incident: 'javascript:alert(1)' }, 'incident'],
    ];
    for (const [body, field] of cases) {
      const r = await freeze(oncall, { cluster: CLUSTER, app: FLUX_APP, ...body });
      expect(r.status, r.text).toBe(400);
      expect(r.text).toContain(field);
    }
    expect(ks().spec).not.toHaveProperty('suspend', true);
  });

  let f: Freeze;
  let change: Change;

  it('an on-call freeze suspends the Kustomization, says who/why/until, and a second freeze is refused', async () => {
    const r = await freeze(oncall, {
      cluster: CLUSTER,
      app: FLUX_APP,
      reason: 'render latency incident',
      incident: 'https://status.example.com/inc/42',
      minutes: 10,
    });
    expect(r.status, r.text).toBe(200);
    f = (r.body as { freeze: Freeze }).freeze;
    expect(f).toMatchObject({ status: 'active', active: true });
    const obj = ks();
    expect((obj.spec as Record<string, unknown>).suspend).toBe(true);
    const ann = (obj.metadata as { annotations: Record<string, string> }).annotations;
    expect(ann).toMatchObject({
      'gitops-console.dev/freeze-id': f.id,
      'gitops-console.dev/freeze-reason': 'render latency incident',
      'fluxcd.controlplane.io/suspendedBy': 'oncall',
      'gitops-console.dev/freeze-incident': 'https://status.example.com/inc/42',
    });
    // the app carries it (every page that shows the app can say so)
    await waitFor('app shows the freeze', async () => {
      const a = (await as(viewer, con.url, `/api/apps/${FLUX_APP}`)).body as { app?: { freeze?: { id: string } } };
      return a.app?.freeze?.id === f.id;
    });
    const again = await freeze(oncall, { cluster: CLUSTER, app: FLUX_APP, reason: 'again', minutes: 10 });
    expect(again.status, again.text).toBe(409);
    expect(again.text).toMatch(/already frozen/);
    // everyone who can see the app sees the freeze
    const list = (await as(viewer, con.url, '/api/freezes?active=true')).body as { freezes: Freeze[] };
    expect(list.freezes.map((x) => x.id)).toContain(f.id);
    expect((await evidence('freeze.started')).some((e) => e.data.freezeId === f.id)).toBe(true);
  });

  it('a hand edit survives two reconcile intervals and is listed as a live change', async () => {
    const before = replicas();
    kubectlEdit(CLUSTER, 'deployment/render-worker', ENV, { spec: { replicas: 12 } });
    requestReconcile(CLUSTER, 'kustomization', KS);
    await sleep(35_000); // the Kustomization's interval is 15 s
    expect(replicas()).toBe(12);
    let changes: Change[] = [];
    await waitFor('the live change is listed', async () => {
      const r = await as(oncall, con.url, `/api/freezes/${f.id}/changes`);
      expect(r.status, r.text).toBe(200);
      changes = (r.body as { changes: Change[] }).changes;
      return changes.some((c) => c.path === 'spec.replicas');
    });
    change = changes.find((c) => c.path === 'spec.replicas' && c.ref.name === 'render-worker') as Change;
    expect(change).toMatchObject({ git: before, live: 12, manager: 'kubectl-edit', ref: { kind: 'Deployment' } });
  }, 180_000);

  it('unfreeze with write-back: a pull request from a branch with a commit setting 12 in the staging overlay; automation restored; Flux reverts meanwhile', async () => {
    const done = await end(f.id, [{ change: change.id, action: 'write-back' }]);
    expect(done.status).toBe('ended');
    const wb = done.writeBack?.[0];
    expect(wb?.branch).toBe(`freeze/${f.id}`);
    expect(wb?.commit).toMatch(/^[0-9a-f]{40}$/);
    branches.push(wb?.branch as string);
    expect(wb?.placements).toEqual([
      expect.objectContaining({ placed: true, file: 'overlays/staging/kustomization.yaml' }),
    ]);
    // the forge of the repo the controllers fetch: a pull request into main, opened by the console's bot user
    expect(mustState().git.url).toBe(sandboxForge().repo.cloneUrl);
    expect(wb?.pullRequest?.number).toBeGreaterThan(0);
    const pr = await openPullRequestFor(wb?.branch as string);
    expect(pr).toMatchObject({ number: wb?.pullRequest?.number, author: 'gitops-console', base: 'main' });
    expect(pr?.headSha).toBe(wb?.commit);
    // the commit on the branch
    const work = mkdtempSync(join(tmpdir(), 'freeze-wb-'));
    try {
      execFileSync('git', ['clone', '-q', '--depth', '2', '--branch', wb?.branch as string, mustState().git.url, work]);
      expect(execFileSync('git', ['rev-parse', 'HEAD'], { cwd: work, encoding: 'utf8' }).trim()).toBe(wb?.commit);
      const overlay = readFileSync(join(work, 'overlays/staging/kustomization.yaml'), 'utf8');
      expect(overlay).toMatch(/- name: render-worker\n\s+count: 12/);
      const msg = execFileSync('git', ['log', '-1', '--format=%an%n%B'], { cwd: work, encoding: 'utf8' });
      expect(msg).toContain('oncall');
      expect(msg).toContain(f.id);
      const files = execFileSync('git', ['diff', '--name-only', 'HEAD~1', 'HEAD'], { cwd: work, encoding: 'utf8' });
      expect(files.trim()).toBe('overlays/staging/kustomization.yaml');
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
    // prior automation exactly: no suspend, no freeze annotations
    const obj = ks();
    expect((obj.spec as Record<string, unknown>).suspend).not.toBe(true);
    const ann = (obj.metadata as { annotations?: Record<string, string> }).annotations ?? {};
    expect(
      Object.keys(ann).filter((k) => k.startsWith('gitops-console.dev/freeze') || k.endsWith('suspendedBy')),
    ).toEqual([]);
    // Git wins until the branch is merged
    requestReconcile(CLUSTER, 'kustomization', KS);
    await waitFor('Flux reverts the replicas', async () => replicas() !== 12, { timeoutMs: 90_000 });
    // every step is evidence
    const mine = async (type: string) => (await evidence(type)).filter((e) => e.data.freezeId === f.id);
    expect(await mine('freeze.ended')).toHaveLength(1);
    expect(await mine('freeze.write-back')).toHaveLength(1);
    expect(await mine('freeze.restored')).toHaveLength(1);
    const completed = (await evidence('action.completed')).filter((e) => e.data.action === 'freeze.write-back');
    expect(completed.some((e) => e.data.commit === wb?.commit)).toBe(true);
  }, 180_000);

  it('a direct un-suspend during a freeze is detected and recorded', async () => {
    const r = await freeze(oncall, { cluster: CLUSTER, app: FLUX_APP, reason: 'second incident', minutes: 10 });
    expect(r.status, r.text).toBe(200);
    const g = (r.body as { freeze: Freeze }).freeze;
    setSuspended(CLUSTER, KS, false);
    await waitFor('interference recorded', async () =>
      (await evidence('freeze.interfered')).some(
        (e) => e.data.freezeId === g.id && e.data.state === 'resumed-directly',
      ),
    );
    const view = ((await as(viewer, con.url, `/api/freezes/${g.id}`)).body as { freeze: Freeze }).freeze;
    expect(view.targets[0]?.interference?.state).toBe('resumed-directly');
    const ev = (await evidence('freeze.interfered')).find((e) => e.data.freezeId === g.id);
    expect(ev?.actor).toBe('flux-client-side-apply');
    await end(g.id);
  }, 120_000);

  it('extensions and a direct un-suspend at once: every extension and the interference stay in the freeze', async () => {
    const r = await freeze(oncall, { cluster: CLUSTER, app: FLUX_APP, reason: 'third incident', minutes: 10 });
    expect(r.status, r.text).toBe(200);
    const g = (r.body as { freeze: Freeze }).freeze;
    // someone resumes the app by hand while five on-call requests extend the freeze: each write of the freeze's
    // details is a compare-and-set, so none erases another. (A guard through the real console: one BFF on SQLite
    // rarely interleaves these writes; the lost update itself is forced, on both backends, in
    // src/server/freeze/store.test.ts.)
    setSuspended(CLUSTER, KS, false);
    const reasons = [1, 2, 3, 4, 5].map((i) => `extension ${i}`);
    const extended = await Promise.all(
      reasons.map((reason, i) =>
        as(oncall, con.url, `/api/freezes/${g.id}/extend`, { method: 'POST', body: { minutes: 20 + i, reason } }),
      ),
    );
    for (const x of extended) expect(x.status, x.text).toBe(200);
    const view = async () =>
      (
        (await as(viewer, con.url, `/api/freezes/${g.id}`)).body as {
          freeze: Freeze & { extensions: Array<{ reason: string }> };
        }
      ).freeze;
    await waitFor(
      'interference recorded',
      async () => (await view()).targets[0]?.interference?.state === 'resumed-directly',
    );
    const v = await view();
    expect(v.extensions.map((e) => e.reason).sort()).toEqual(reasons);
    expect(v.targets[0]?.interference?.state).toBe('resumed-directly');
    // recorded once, however many replicas or events saw it
    expect((await evidence('freeze.interfered')).filter((e) => e.data.freezeId === g.id)).toHaveLength(1);
    await end(g.id);
  }, 120_000);

  it('a refused freeze or extension is one action.refused, never the intent: the claim decides, not the app object', async () => {
    const r = await freeze(oncall, { cluster: CLUSTER, app: FLUX_APP, reason: 'fourth incident', minutes: 10 });
    expect(r.status, r.text).toBe(200);
    const g = (r.body as { freeze: Freeze }).freeze;
    const startedSeq = (await evidence('freeze.started')).find((e) => e.data.freezeId === g.id)?.seq as number;
    expect(startedSeq).toBeGreaterThan(0);
    // someone goes around the console: resumes the app with kubectl and drops the freeze's annotations
    setSuspended(CLUSTER, KS, false);
    kubectl(CLUSTER, [
      '-n',
      'flux-system',
      'annotate',
      'kustomization',
      KS,
      'gitops-console.dev/freeze-id-',
      'gitops-console.dev/freeze-reason-',
      'gitops-console.dev/frozen-until-',
      'fluxcd.controlplane.io/suspendedBy-',
    ]);
    // the freeze still holds the app (its claim): a new freeze is refused, three times
    for (let i = 0; i < 3; i++) {
      const again = await freeze(oncall, { cluster: CLUSTER, app: FLUX_APP, reason: 'freeze it again', minutes: 10 });
      expect(again.status, again.text).toBe(409);
      expect(again.text).toMatch(/already frozen/);
      expect(again.text).toContain(g.id);
    }
    const since = (e: EvidenceEvent) => e.seq > startedSeq;
    expect((await evidence('freeze.started')).filter(since)).toEqual([]);
    expect((await evidence('action.failed')).filter((e) => since(e) && e.data.action === 'freeze.started')).toEqual([]);
    const refusedStart = (await evidence('action.refused')).filter(
      (e) => since(e) && e.data.action === 'freeze.started',
    );
    expect(refusedStart).toHaveLength(1);
    expect(refusedStart[0]).toMatchObject({ actor: 'oncall', app: FLUX_APP, data: { apps: [FLUX_APP] } });
    await end(g.id);
    // an ended freeze is not extended: refused, one record however often it is tried
    for (let i = 0; i < 2; i++) {
      const x = await as(oncall, con.url, `/api/freezes/${g.id}/extend`, {
        method: 'POST',
        body: { minutes: 30, reason: 'longer' },
      });
      expect(x.status, x.text).toBe(409);
      expect(x.text).toContain(`freeze ${g.id} is ended: it cannot be extended`);
    }
    expect((await evidence('freeze.extended')).filter((e) => e.data.freezeId === g.id)).toEqual([]);
    const refusedExtend = (await evidence('action.refused')).filter(
      (e) => e.data.action === 'freeze.extended' && e.data.freezeId === g.id,
    );
    expect(refusedExtend).toHaveLength(1);
    expect(refusedExtend[0]).toMatchObject({ actor: 'oncall', app: FLUX_APP });
  }, 120_000);
});

describe('incident freeze (Argo CD, its real application controller)', () => {
  it('pauses automated sync (Argo CD sees a hand edit and leaves it) and restores the prior syncPolicy exactly', async () => {
    await waitForArgoSynced(CLUSTER, ARGO);
    const prior = argoSyncPolicy();
    expect(prior).toHaveProperty('automated');
    const r = await freeze(oncall, { cluster: CLUSTER, app: ARGO_APP, reason: 'edge incident', minutes: 10 });
    expect(r.status, r.text).toBe(200);
    const g = (r.body as { freeze: Freeze }).freeze;
    const frozen = argoSyncPolicy() as { automated: Record<string, unknown> };
    expect(frozen.automated.enabled).toBe(false);
    // prune / self-heal settings are kept while paused (Argo CD 3.x)
    expect(frozen.automated.selfHeal).toBe((prior as { automated: { selfHeal?: boolean } }).automated.selfHeal);
    // a hand edit is not reverted by the controller while frozen: Argo CD sees it (OutOfSync) and leaves it
    kubectlEdit(CLUSTER, 'deployment/edge-gateway', ENV, { spec: { replicas: 5 } });
    const replicas = () =>
      Number(kubectl(CLUSTER, ['-n', ENV, 'get', 'deployment', 'edge-gateway', '-o', 'jsonpath={.spec.replicas}']));
    await waitFor(
      'Argo CD reports the hand edit OutOfSync',
      async () => {
        argoRefresh(CLUSTER, ARGO);
        return (argoApp(CLUSTER, ARGO).status as { sync?: { status?: string } }).sync?.status === 'OutOfSync';
      },
      { timeoutMs: 60_000, intervalMs: 2000 },
    );
    await sleep(3 * 1000 + 2 * 1000); // past the controller's self-heal timeout (2 s in the sandbox), twice
    expect(replicas()).toBe(5);
    await end(g.id);
    expect(canonicalJson(argoSyncPolicy())).toBe(canonicalJson(prior));
    // automation back: Argo CD's self-heal reverts the edit
    await waitFor('self-heal reverts the edit', async () => replicas() === 2, { timeoutMs: 90_000, intervalMs: 1000 });
    await waitForArgoSynced(CLUSTER, ARGO);
  }, 240_000);
});

describe('expiry', () => {
  it('a freeze that expired while the BFF was down ends at its next start, with evidence saying so', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'freeze-expiry-'));
    await writeTestAccounts(join(dir, 'auth.json'));
    let c1: Awaited<ReturnType<typeof startTestConsole>> | undefined = await startTestConsole({
      CONSOLE_DATA_DIR: dir,
    });
    let c2: Awaited<ReturnType<typeof startTestConsole>> | undefined;
    try {
      const on = await signIn(c1.url, 'oncall');
      const r = await as(on, c1.url, '/api/freezes', {
        method: 'POST',
        body: { cluster: CLUSTER, app: FLUX_APP, reason: 'short freeze', minutes: 1 },
      });
      expect(r.status, r.text).toBe(200);
      const id = (r.body as { freeze: Freeze }).freeze.id;
      await c1.close();
      c1 = undefined;
      expect((ks().spec as Record<string, unknown>).suspend).toBe(true);
      await sleep(62_000);
      c2 = await startTestConsole({ CONSOLE_DATA_DIR: dir });
      const c = c2;
      await waitFor('restored at start', async () => (ks().spec as Record<string, unknown>).suspend !== true, {
        timeoutMs: 60_000,
      });
      await waitFor('freeze.expired recorded', async () => {
        const ev = (
          (await as(c.admin, c.url, '/api/evidence?type=freeze.expired&limit=100')).body as { events: EvidenceEvent[] }
        ).events;
        return ev.some((e) => e.data.freezeId === id && e.data.expiredWhileConsoleWasDown === true);
      });
      const view = ((await as(c.admin, c.url, `/api/freezes/${id}`)).body as { freeze: Freeze }).freeze;
      expect(view).toMatchObject({ status: 'ended', active: false });
    } finally {
      await c1?.close();
      await c2?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);
});

describe('an end on two replicas: a Git push that stalls, then a SIGKILL mid-write-back', () => {
  type Bff = Awaited<ReturnType<typeof spawnBff>>;
  /** the claim of an end holds 3 s unless renewed (the console's default is 30 s) */
  const CLAIM_S = 3;
  let pg: PgServer | undefined;
  let probe: FreezeProbe;
  const bffs: Bff[] = [];
  let env: Record<string, string>;
  /** on-call signed in on each replica (each has its own accounts file, so its own account ids) */
  const on = new Map<Bff, Signed>();
  const oncallOn = (b: Bff) => on.get(b) as Signed;

  const spawn = async (name: string) => {
    const b = await spawnBff(name, { env });
    bffs.push(b);
    on.set(b, await signIn(b.base, 'oncall'));
    await waitFor(
      `${name} sees the probe app`,
      async () =>
        ((await as(b.admin, b.base, `/api/apps/${probe.appId}`)).body as { app?: { source?: { url?: string } } }).app
          ?.source?.url === probe.repoUrl,
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    return b;
  };
  const suspended = () =>
    (getJson('prod', ['-n', 'flux-system', 'get', 'kustomization', probe.name]).spec as Record<string, unknown>)
      .suspend === true;
  const view = async (via: Bff, id: string) =>
    (
      (await as(oncallOn(via), via.base, `/api/freezes/${id}`)).body as {
        freeze: Freeze & { endReason: string | null };
      }
    ).freeze;
  const events = async (via: Bff, type: string, id: string) =>
    (
      (await as(oncallOn(via), via.base, `/api/evidence?type=${type}&limit=1000`)).body as { events: EvidenceEvent[] }
    ).events
      .filter((e) => e.data.freezeId === id)
      .sort((a, b) => a.seq - b.seq);
  const outcomes = async (via: Bff) =>
    (
      (await as(oncallOn(via), via.base, '/api/evidence?type=action.completed&limit=1000')).body as {
        events: EvidenceEvent[];
      }
    ).events;
  const failures = async (via: Bff) =>
    (
      (await as(oncallOn(via), via.base, '/api/evidence?type=action.failed&limit=1000')).body as {
        events: EvidenceEvent[];
      }
    ).events;

  /** a freeze through `via`, a hand edit of the probe's ConfigMap, and that live change as the console lists it */
  async function freezeWithEdit(via: Bff, mode: string): Promise<{ id: string; change: Change }> {
    const r = await as(oncallOn(via), via.base, '/api/freezes', {
      method: 'POST',
      body: { cluster: 'prod', app: probe.appId, reason: 'claim test', minutes: 30 },
    });
    expect(r.status, r.text).toBe(200);
    const id = (r.body as { freeze: Freeze }).freeze.id;
    expect(suspended()).toBe(true);
    probe.editMode(mode);
    let change: Change | undefined;
    await waitFor(
      'the live change listed',
      async () => {
        const c = await as(oncallOn(via), via.base, `/api/freezes/${id}/changes`);
        change = (c.body as { changes?: Change[] }).changes?.find((x) => x.path === 'data.mode' && x.live === mode);
        return change !== undefined;
      },
      { timeoutMs: 90_000, intervalMs: 1000 },
    );
    return { id, change: change as Change };
  }

  /**
   * The end sent to `ender`, whose push the Git server holds; the other replica watches the end for three claim
   * times and does not take it; then `ender` is killed with SIGKILL (with its git child: its connection dropped).
   */
  async function killMidWriteBack(ender: Bff, watcher: Bff, id: string, change: Change) {
    probe.git.only = 'push';
    probe.git.mode = 'stall';
    void as(oncallOn(ender), ender.base, `/api/freezes/${id}/end`, {
      method: 'POST',
      body: { decisions: [{ change: change.id, action: 'write-back' }] },
    }).catch(() => undefined);
    await waitFor('the push held by the Git server', async () => probe.git.holding > 0, { timeoutMs: 60_000 });
    for (let i = 0; i < 3 * CLAIM_S; i++) {
      await sleep(1000);
      expect((await view(watcher, id)).status).toBe('ending');
      expect(suspended()).toBe(true);
    }
    expect((await events(watcher, 'freeze.ended', id)).map((e) => e.actor)).toEqual(['oncall']);
    ender.child.kill('SIGKILL');
    await new Promise((r) =>
      ender.child.exitCode !== null || ender.child.signalCode ? r(null) : ender.child.once('exit', r),
    );
    probe.git.drop();
  }

  beforeAll(async () => {
    pg = await startPostgres();
    probe = await startFreezeProbe('prod', 'prod');
    env = { DATABASE_URL: pg.url, CONSOLE_RELEASE_RECORDER: 'off', CONSOLE_FREEZE_CLAIM_SECONDS: String(CLAIM_S) };
    // one after the other: the first creates the schema
    await spawn('freeze-a');
    await spawn('freeze-b');
  }, 400_000);

  afterAll(async () => {
    try {
      for (const b of bffs) if (b.child.exitCode === null && b.child.signalCode === null) await b.stop();
      await probe?.remove();
    } finally {
      for (const b of bffs) rmSync(b.dataDir, { recursive: true, force: true });
      await pg?.stop();
    }
  }, 120_000);

  it('the end of the killed replica is taken over once its claim expires: the write-back redone, then the automation restored', async () => {
    const [a, b] = bffs as [Bff, Bff];
    const { id, change } = await freezeWithEdit(a, 'incident-fix');
    await killMidWriteBack(a, b, id, change);
    // nothing was pushed by the dead replica
    expect(probe.git.branches('probe')).toEqual(['main']);
    probe.git.mode = 'serve';
    let f: Freeze & { endReason: string | null } = await view(b, id);
    // within a claim time and a few seconds; a long wait, so that a console taking over later fails below instead
    await waitFor('the end finished by the other replica', async () => (f = await view(b, id)).status === 'ended', {
      timeoutMs: 150_000,
      intervalMs: 500,
    });
    // the write-back redone as decided: the branch holds the on-call's live value
    const wb = f.writeBack?.[0];
    expect(wb?.branch).toBe(`freeze/${id}`);
    expect(probe.git.branches('probe')).toContain(`freeze/${id}`);
    expect(probe.git.show('probe', `freeze/${id}`, 'probe/configmap.yaml')).toMatch(/mode: incident-fix/);
    expect(probe.git.show('probe', `freeze/${id}`, 'probe/configmap.yaml')).not.toMatch(/mode: normal/);
    // then the automation restored
    expect(suspended()).toBe(false);
    expect(f.endReason).toMatch(/finished after the process ending it stopped/);
    // evidence of each step, in order: the takeover, the redo, its outcome, the restore
    const ended = await events(b, 'freeze.ended', id);
    const takeover = ended.find((e) => e.data.takenOver === true);
    expect(String(takeover?.data.takenOverFrom)).toMatch(new RegExp(`:${a.child.pid}$`));
    const redo = (await events(b, 'freeze.write-back', id)).find((e) => e.data.redo === true);
    expect(redo).toMatchObject({ actor: 'console', data: { onBehalfOf: 'oncall', branch: `freeze/${id}` } });
    const redone = (await outcomes(b)).find((e) => e.data.intentSeq === redo?.seq);
    expect(redone?.data.commit).toBe(wb?.commit);
    const restored = await events(b, 'freeze.restored', id);
    expect(restored).toHaveLength(1);
    expect(restored[0]?.data.resumedAfterRestart).toBe(true);
    const order = [takeover?.seq, redo?.seq, redone?.seq, restored[0]?.seq].map(Number);
    expect([...order].sort((x, y) => x - y)).toEqual(order);
  }, 300_000);

  it('a redo that Git refuses restores nothing: the end stalls and says so; on-call ends it again', async () => {
    const b = bffs[1] as Bff;
    const a2 = await spawn('freeze-a-again');
    const { id, change } = await freezeWithEdit(a2, 'incident-fix-2');
    await killMidWriteBack(a2, b, id, change);
    probe.git.only = 'all';
    probe.git.mode = 'refuse';
    let f = await view(b, id);
    await waitFor('the end stalled', async () => /^end stalled/.test((f = await view(b, id)).endReason ?? ''), {
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    expect(f.endReason).toMatch(/^end stalled: write-back could not be completed, automation NOT restored \(/);
    expect(f.status).toBe('ending');
    expect(suspended()).toBe(true);
    const takeover = (await events(b, 'freeze.ended', id)).find((e) => e.data.takenOver === true);
    const failed = (await failures(b)).find((e) => e.data.intentSeq === takeover?.seq);
    expect(failed?.data.stalled).toBe(true);
    expect(await events(b, 'freeze.restored', id)).toEqual([]);
    // it stays so: no replica takes a stalled end again
    await sleep(3 * CLAIM_S * 1000);
    expect(suspended()).toBe(true);
    expect((await events(b, 'freeze.ended', id)).filter((e) => e.data.takenOver === true)).toHaveLength(1);
    // on-call ends it again once Git answers: a new branch, then the automation
    probe.git.mode = 'serve';
    const again = await as(oncallOn(b), b.base, `/api/freezes/${id}/end`, {
      method: 'POST',
      body: { decisions: [{ change: change.id, action: 'write-back' }] },
    });
    expect(again.status, again.text).toBe(200);
    const done = (again.body as { freeze: Freeze }).freeze;
    expect(done.status).toBe('ended');
    expect(done.writeBack?.at(-1)?.branch).toBe(`freeze/${id}-2`);
    expect(probe.git.show('probe', `freeze/${id}-2`, 'probe/configmap.yaml')).toMatch(/mode: incident-fix-2/);
    expect(suspended()).toBe(false);
  }, 300_000);
});

// later tests start from the sandbox's Argo CD app synced (its controller syncs it; this waits for that)
afterAll(async () => {
  await waitForArgoSynced(CLUSTER, ARGO).catch(() => undefined);
}, 200_000);
