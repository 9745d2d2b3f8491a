// Issue 16 against the real sandbox: an environment's release page reads the evidence the release recorder
// wrote for real (a fresh console records each app's current release at start-up) and answers real numbers;
// its query is validated (400) and its scope is the reader's evidence.read grants (403, recorded). The app whose
// release is read is the file's own (an estate in dev, deleted afterwards); the environment's other apps are
// whatever else runs meanwhile, which the checks only count.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EnvReleasesResponse, ReleasesResponse } from '../../src/api/schemas.ts';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { as, signIn } from '../support/auth.ts';
import { RECORDER_ON, startTestConsole } from '../support/console.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../support/own-estate.ts';
import { writeRepoFile } from '../../sandbox/scenario.ts';

let estate: Estate;
let APP: string;
let con: Awaited<ReturnType<typeof startTestConsole>>;

const envReleases = async (path: string): Promise<EnvReleasesResponse> => {
  const r = await as(con.admin, con.url, path);
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.text}`);
  return r.body as unknown as EnvReleasesResponse;
};

beforeAll(async () => {
  estate = await ownEstate({ name: 'env-releases', env: 'dev', files: digitalHumanTemplate('dev') });
  APP = estate.appId();
  con = await startTestConsole({ ...RECORDER_ON, CONSOLE_VERIFICATION_INTERVAL_S: '600' });
}, 300_000);

afterAll(async () => {
  try {
    await con?.close();
  } finally {
    await estate?.teardown();
  }
}, 120_000);

describe('GET /api/envs/:env/releases (issue 16)', () => {
  it('dev: deployments counted from the releases the recorder recorded, per UTC day, with the apps and their newest release', async () => {
    let res: EnvReleasesResponse | undefined;
    await waitFor(
      'a deployed dev release with its health recorded',
      async () => {
        res = await envReleases('/api/envs/dev/releases');
        const r = res.releases.find((x) => x.app === APP);
        const app = res.apps.find((a) => a.id === APP);
        return !!r && app?.newest?.states.find((s) => s.name === 'health')?.status !== 'pending';
      },
      { timeoutMs: 300_000, intervalMs: 1000 },
    );
    const body = res as EnvReleasesResponse;
    const m = body.metrics;
    console.log(
      `dev: ${m.records} records, ${m.changeFailureRate.total} deployments, ${m.changeFailureRate.failed} failed, lead time n=${m.leadTime.n} median=${m.leadTime.median} p90=${m.leadTime.p90}`,
    );
    expect(body.env).toBe('dev');
    expect(body.truncated).toBe(false);
    expect(m.days).toHaveLength(30);
    const today = new Date().toISOString().slice(0, 10);
    expect(m.days.at(-1)?.day).toBe(today);
    expect(m.days.at(-1)?.deployments).toBeGreaterThanOrEqual(1);
    expect(m.days.at(-1)?.records).toBeGreaterThan(0);
    expect(m.records).toBeGreaterThan(0);
    expect(m.changeFailureRate.total).toBeGreaterThanOrEqual(1);
    expect(m.changeFailureRate.total).toBe(m.days.reduce((n, d) => n + d.deployments, 0));
    expect(m.changeFailureRate.rate).toBe(m.changeFailureRate.failed / m.changeFailureRate.total);
    if (m.leadTime.n) expect(m.leadTime.median as number).toBeLessThanOrEqual(m.leadTime.p90 as number);
    else expect(m.leadTime).toEqual({ median: null, p90: null, n: 0, heldByWindowSeconds: 0 });

    // a deployment whose health failed names its health as the reason
    const dev = body.releases.find((x) => x.app === APP);
    expect(dev?.sha).toMatch(/^[0-9a-f]{40}$/);
    expect(dev?.day).toBe(today);
    const health = body.apps.find((a) => a.id === APP)?.newest?.states.find((s) => s.name === 'health');
    if (health?.status === 'failed') expect(dev?.failures.join(' ')).toMatch(/^health (Degraded|Missing)/);

    // every app of dev that the console lists, each with the same newest release as its own releases route
    expect(body.apps.every((a) => a.id.split('/')[0] === a.cluster)).toBe(true);
    // read together (the recorder may still be recording while the page is read): the two routes agree at some
    // moment within the wait
    let pair: { env?: string; own?: string } = {};
    await waitFor(
      'the env route and the app route naming the same newest release',
      async () => {
        const env = (await envReleases('/api/envs/dev/releases')).apps.find((a) => a.id === APP)?.newest?.sha;
        const own = ((await as(con.admin, con.url, `/api/apps/${APP}/releases`)).body as unknown as ReleasesResponse)
          .releases[0]?.sha;
        pair = { env, own };
        return !!env && env === own;
      },
      { timeoutMs: 30_000, intervalMs: 1000 },
    ).catch(() => undefined);
    expect(pair.env).toBe(pair.own);

    // one cluster only, and a shorter range
    const one = await envReleases('/api/envs/dev/releases?cluster=nonprod&days=1');
    expect(one.cluster).toBe('nonprod');
    expect(one.metrics.days.map((d) => d.day)).toEqual([today]);
    expect(one.apps.every((a) => a.cluster === 'nonprod')).toBe(true);
  }, 420_000);

  it("another app's commit to the same repository is no deployment of this app: listed as no change, not counted", async () => {
    const mine = (r: EnvReleasesResponse) => r.releases.filter((x) => x.app === APP).map((x) => x.sha);
    const before = await envReleases('/api/envs/dev/releases');
    const running = mine(before)[0];
    expect(running, 'the first test saw a deployed release').toBeDefined();
    // a commit outside the app's path, as another team's in a monorepo
    const sha = estate.push('another team: unrelated change', (w) =>
      writeRepoFile(w, 'unrelated/other-team.txt', `${Date.now()}\n`),
    );
    await estate.waitApplied(sha);
    let rel: ReleasesResponse['releases'][number] | undefined;
    await waitFor(
      `the release of ${sha.slice(0, 8)} rendered and reconciled`,
      async () => {
        const list = ((await as(con.admin, con.url, `/api/apps/${APP}/releases`)).body as unknown as ReleasesResponse)
          .releases;
        rel = list.find((x) => x.sha === sha);
        return ['render', 'reconcile'].every((n) => rel?.states.find((s) => s.name === n)?.status === 'ok');
      },
      { timeoutMs: 120_000, intervalMs: 1000 },
    );
    expect(rel?.unchangedFrom).toBe(running);
    const after = await envReleases('/api/envs/dev/releases');
    expect(mine(after)).toEqual(mine(before));
    expect(after.metrics.unchanged).toBeGreaterThan(before.metrics.unchanged);
  }, 300_000);

  it('an environment with no records says so: total 0 and rate null, not 0 %', async () => {
    const r = await envReleases('/api/envs/no-such-env/releases?days=7');
    expect(r.metrics.records).toBe(0);
    expect(r.metrics.changeFailureRate).toEqual({ failed: 0, total: 0, rate: null, open: 0 });
    expect(r.metrics.leadTime).toEqual({ median: null, p90: null, n: 0, heldByWindowSeconds: 0 });
    expect(r.apps).toEqual([]);
  });

  it('days outside 1–90 and a bad environment name are a 400 that says why', async () => {
    for (const q of ['days=0', 'days=91', 'days=abc', 'days=1.5']) {
      const r = await as(con.admin, con.url, `/api/envs/dev/releases?${q}`);
      expect(`${q} ${r.status}`).toBe(`${q} 400`);
      expect(r.body).toMatchObject({
        error: { code: 'BadRequest', message: expect.stringMatching(/days must be a whole number from 1 to 90/) },
      });
    }
    const bad = await as(con.admin, con.url, `/api/envs/${encodeURIComponent('../x')}/releases`);
    expect(bad.status).toBe(400);
  });

  it('a reader without evidence.read on the environment gets 403, recorded as access.denied', async () => {
    const viewer = await signIn(con.url, 'viewer'); // may read apps, not evidence
    const v = await as(viewer, con.url, '/api/envs/dev/releases');
    expect(v.status).toBe(403);
    expect(v.text).not.toContain('"metrics"');

    const reviewer = await signIn(con.url, 'dev-reviewer'); // reviewer@nonprod/dev
    expect((await as(reviewer, con.url, '/api/envs/dev/releases?days=1')).status).toBe(200);
    const staging = await as(reviewer, con.url, '/api/envs/staging/releases');
    expect(staging.status).toBe(403);
    expect(staging.body).toMatchObject({
      error: { code: 'Forbidden', message: expect.stringContaining('in staging') },
    });
    expect((await as(reviewer, con.url, '/api/envs/dev/releases?cluster=prod')).status).toBe(403);

    await waitFor(
      'the denial recorded',
      async () => {
        const ev = (await as(con.admin, con.url, '/api/evidence?type=access.denied&limit=50')).body as unknown as {
          events: EvidenceEvent[];
        };
        return ev.events.some(
          (e) => e.actor === 'dev-reviewer' && e.env === 'staging' && e.data.route === '/api/envs/:env/releases',
        );
      },
      { timeoutMs: 15_000, intervalMs: 500 },
    );
  });
});
