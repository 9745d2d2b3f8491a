// An unfreeze whose write-back talks to a Git server that takes 100 s to answer (a real git over HTTP: a local
// server that accepts each request and holds it), on replica A, while replica B's takeover watch runs on the same
// database with its clock 100 s ahead (as if it had watched the end for 100 s: the old rule took over an end idle
// for 90 s). B never takes the live end over, and the automation is never restored before the write-back's
// outcome: when Git gives up (a 20 s git timeout here; the console's is 60 s per command) nothing is
// restored and the answer says so; when Git answers after the stall (a 90 s timeout), the automation is restored
// once, afterwards.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvidenceEvent } from '../../domain/evidence.ts';
import { startGitHttpServer, type GitHttpServer } from '../../../test/support/git-http-server.ts';
import { appOf, FakeFlux, LIVE_CHANGE_ID, oncall, replicaOf, waitUntil } from '../../../test/support/freeze-fakes.ts';
import { SqliteEvidenceStore } from '../evidence/sqlite-store.ts';
import type { EvidenceStore } from '../evidence/store.ts';
import { configureUrlPolicy } from '../git/url-policy.ts';
import { HttpError } from '../http/errors.ts';
import type { FreezeServiceDeps } from './service.ts';
import { writeBackToGit } from './writeback.ts';

const dir = mkdtempSync(join(tmpdir(), 'freeze-slow-git-'));
/**
 * Claims of 8 s (renewed every 150 ms, watched every 100 ms): `npm test` runs this file niced beside the integration
 * tier at load ~10, where this process is not scheduled for a second or more at a time; with the shared 1 s claim
 * (freeze-fakes' TEST_TIMING) B once took over a live end that way (2026-12-05). A takeover still needs an end idle
 * for a whole claim, and the stalls below last over two claims.
 */
const TIMING = { ttlMs: 8_000, renewMs: 150, watchMs: 100 };
const GIT_TIMEOUT_MS = 20_000;
/**
 * The late answer's git timeout: longer than B's watch of three claims (24 s at one look per 100 ms; under load
 * it took longer and the clone gave up first, 2026-12-05), shorter than the test's 120 s.
 */
const LATE_GIT_TIMEOUT_MS = 90_000;
let git: GitHttpServer;
const opened: EvidenceStore[] = [];

beforeAll(async () => {
  git = await startGitHttpServer({ stallMs: 100_000 });
  git.createRepo('app', {
    'overlay/kustomization.yaml':
      'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - api.yaml\n',
    'overlay/api.yaml':
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\n  namespace: prod\nspec:\n  replicas: 2\n',
  });
  configureUrlPolicy({ allowHosts: ['127.0.0.1'], allowSsh: false });
});

afterAll(async () => {
  configureUrlPolicy(undefined);
  for (const s of opened) await s.close();
  await git.close();
  rmSync(dir, { recursive: true, force: true });
});

/** the write-back as routes.ts wires it, with the test's git timeout */
const writeBackWithin =
  (timeoutMs: number): NonNullable<FreezeServiceDeps['writeBack']> =>
  (a, req) =>
    writeBackToGit(
      {
        repoUrl: a.source.url as string,
        baseBranch: 'main',
        appPath: a.source.path ?? '.',
        branch: req.branch,
        message: req.message,
        author: { name: req.author, email: `${req.author}@users.gitops-console` },
        changes: req.changes.map((c) => ({
          id: c.id,
          ref: { group: c.ref.group, kind: c.ref.kind, namespace: c.ref.namespace ?? null, name: c.ref.name },
          path: c.path,
          liveValue: c.live,
          gitValue: c.git,
        })),
      },
      { timeoutMs, workDir: dir },
    );

function twoReplicas(name: string, gitTimeoutMs = GIT_TIMEOUT_MS) {
  const writeBack = writeBackWithin(gitTimeoutMs);
  const file = `${name}.sqlite`;
  const [evA, evB] = [SqliteEvidenceStore.open(dir, file), SqliteEvidenceStore.open(dir, file)];
  opened.push(evA, evB);
  const flux = new FakeFlux();
  flux.add(name);
  const app = appOf(name, { kind: 'GitRepository', url: git.url('app'), path: 'overlay', ref: 'main' });
  const a = replicaOf({ name: 'replica-a', ev: evA, flux, apps: [app], writeBack, timing: TIMING });
  const b = replicaOf({ name: 'replica-b', ev: evB, flux, apps: [app], writeBack, aheadMs: 100_000, timing: TIMING });
  const events = async (type: string) => (await evA.list({ limit: 500 })).filter((e) => e.type === type);
  return { flux, app, a, b, events, evA };
}

const mine = (id: string) => (e: EvidenceEvent) => e.data.freezeId === id;

/** B's takeover timer, as routes.ts runs it (every 30 s there; every 100 ms here) */
function takeoverTimer(service: { resumeStale(): Promise<void> }): () => void {
  const t = setInterval(() => void service.resumeStale().catch(() => undefined), 100);
  return () => clearInterval(t);
}

describe('an end whose Git takes 100 s to answer, while another replica watches', () => {
  it('Git never answers in time: no takeover, nothing restored, the freeze holds, and the answer says so', async () => {
    const { flux, app, a, b, events } = twoReplicas('gives-up');
    const f = await a.service.create(oncall, { cluster: 'c', app: app.id, reason: 'incident', minutes: 60 });
    await b.service.recover();
    const stopTimer = takeoverTimer(b.service);
    git.mode = 'stall';
    git.only = 'all';
    const looksBefore = b.counter.looks;
    const started = Date.now();
    const err = await a.service
      .end(f.id, oncall, [{ change: LIVE_CHANGE_ID, action: 'write-back' }])
      .catch((e: unknown) => e);
    const took = Date.now() - started;
    git.mode = 'serve';
    git.drop();
    // the clone was held by the server until git gave up
    expect(took).toBeGreaterThanOrEqual(GIT_TIMEOUT_MS);
    expect(git.requests.some((r) => r.held)).toBe(true);
    // B looked at the end all along (every 100 ms), and never took it over
    expect(b.counter.looks - looksBefore).toBeGreaterThan(20);
    expect((await events('freeze.ended')).filter(mine(f.id)).map((e) => e.actor)).toEqual(['oncall']);
    // nothing restored, by anyone: the answer's "nothing was restored" is true
    expect(flux.restores()).toEqual([]);
    expect(flux.suspended(app.name)).toBe(true);
    expect(err).toBeInstanceOf(HttpError);
    expect((err as HttpError).status).toBe(502);
    expect((err as HttpError).message).toMatch(/nothing was restored \(the freeze holds\)/);
    expect((err as HttpError).message).toMatch(/timed out/);
    expect((await a.store.get(f.id))?.status).toBe('active');
    expect((await events('freeze.restored')).filter(mine(f.id))).toEqual([]);
    stopTimer();
    await a.service.settled();
    await b.service.settled();
  }, 120_000);

  it('Git answers after the stall: no takeover; the automation is restored once, after the write-back outcome', async () => {
    const { flux, app, a, b, events, evA } = twoReplicas('answers-late', LATE_GIT_TIMEOUT_MS);
    const f = await a.service.create(oncall, { cluster: 'c', app: app.id, reason: 'incident', minutes: 60 });
    await b.service.recover();
    const stopTimer = takeoverTimer(b.service);
    git.mode = 'stall';
    git.only = 'all';
    const ending = a.service.end(f.id, oncall, [{ change: LIVE_CHANGE_ID, action: 'write-back' }]);
    await waitUntil('the clone held by the server', () => git.holding > 0);
    // B watches the end for three claim times while Git says nothing
    const looks = b.counter.looks;
    const claimLooks = (3 * TIMING.ttlMs) / TIMING.watchMs;
    await waitUntil(`B looked ${claimLooks} times`, () => b.counter.looks - looks >= claimLooks, 60_000);
    expect(flux.restores()).toEqual([]);
    expect((await b.store.get(f.id))?.status).toBe('ending');
    // Git answers now (every request after this one is served at once)
    git.mode = 'serve';
    git.release();
    const done = await ending;
    expect(done.status).toBe('ended');
    expect(done.doc.writeBack?.[0]?.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(git.show('app', `freeze/${f.id}`, 'overlay/api.yaml')).toMatch(/replicas: 5/);
    // one end, by A; one restore, by A, after the write-back's outcome was recorded
    expect((await events('freeze.ended')).filter(mine(f.id)).map((e) => e.actor)).toEqual(['oncall']);
    const restores = flux.restores();
    expect(restores.map((p) => p.by)).toEqual(['replica-a']);
    const all = await evA.list({ limit: 500 });
    const intent = all.find((e) => e.type === 'freeze.write-back' && e.data.freezeId === f.id) as EvidenceEvent;
    const outcome = all.find((e) => e.type === 'action.completed' && e.data.intentSeq === intent.seq) as EvidenceEvent;
    expect(outcome.data.commit).toBe(done.doc.writeBack?.[0]?.commit);
    const restored = all.find((e) => e.type === 'freeze.restored' && e.data.freezeId === f.id) as EvidenceEvent;
    expect(restored.seq).toBeGreaterThan(outcome.seq);
    expect((restores[0] as { at: number }).at).toBeGreaterThanOrEqual(Date.parse(outcome.time));
    stopTimer();
    await a.service.settled();
    await b.service.settled();
  }, 120_000);
});
