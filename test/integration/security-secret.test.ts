// Identity and access against the real sandbox: a Secret that must never leave the BFF. The file owns its estate
// (own-estate.ts: the dev template in a namespace of its own, env dev); the probe Secret is pushed to it while an
// SSE stream is open, and every GET route is read for every app (the seed's and this file's; other files' estates,
// which come and go beside it, are left out). The SOPS-encrypted Secret of the seed's infra-dev is only read.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppsResponse, DiffResponse, EnvCompareResponse, TreeResponse } from '../../src/api/schemas.ts';
import { kubectl } from '../../sandbox/state.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { writeRepoFile } from '../../sandbox/scenario.ts';
import { as } from '../support/auth.ts';
import { startTestConsole } from '../support/console.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../support/own-estate.ts';
import { consoleListsOwnApp, fill, openStream, otherEstate } from '../support/security.ts';

const INFRA_DEV = 'nonprod/flux-system/kustomization/infra-dev';
let estate: Estate;
/** this file's own dev app */
let DEV: string;
let con: Awaited<ReturnType<typeof startTestConsole>>;
const logLines: string[] = [];
const logStream = new Writable({
  write(chunk: Buffer, _enc, cb) {
    logLines.push(chunk.toString('utf8'));
    cb();
  },
});

beforeAll(async () => {
  estate = await ownEstate({ name: 'security-secret', env: 'dev', files: digitalHumanTemplate('dev') });
  DEV = estate.appId();
  con = await startTestConsole({ LOG_LEVEL: 'debug' }, { logStream });
  await consoleListsOwnApp(con, DEV);
}, 300_000);

afterAll(async () => {
  await con?.close();
  await estate?.teardown();
});

describe('a Secret managed by an app', () => {
  const VALUE = `leak-probe-${randomBytes(18).toString('hex')}`;
  const B64 = Buffer.from(VALUE).toString('base64');
  const FILE = 'overlays/dev/leak-probe.yaml';
  const seen: Array<{ where: string; text: string }> = [];
  let stream: ReturnType<typeof openStream>;

  beforeAll(async () => {
    // the stream is open from before the Secret exists until after every read
    stream = openStream(con.url, con.admin.cookie);
    expect(await stream.status).toBe(200);
    const sha = estate.push('Add a leak probe Secret to dev', (w) => {
      writeRepoFile(
        w,
        FILE,
        `apiVersion: v1\nkind: Secret\nmetadata:\n  name: leak-probe\ntype: Opaque\nstringData:\n  token: ${VALUE}\n`,
      );
      const k = join(w, 'overlays/dev/kustomization.yaml');
      writeFileSync(k, readFileSync(k, 'utf8').replace('resources:\n', 'resources:\n  - leak-probe.yaml\n'));
    });
    await estate.waitApplied(sha);
  });

  // the probe goes with the estate (afterAll above): no clean-up commit
  afterAll(() => stream?.close());

  it('its value never appears in any API response, SSE message, log line, evidence row or data file', async () => {
    // the Secret is really live with the value (the scan below is not vacuous)
    const live = JSON.parse(
      kubectl(estate.cluster, ['-n', estate.namespace, 'get', 'secret', 'leak-probe', '-o', 'json']),
    ) as {
      data: { token: string };
    };
    expect(live.data.token).toBe(B64);
    // the SOPS-encrypted Secret of infra-dev (issue 26), decrypted by kustomize-controller: its value is a needle too
    const sopsLive = JSON.parse(kubectl('nonprod', ['-n', 'dev', 'get', 'secret', 'db-credentials', '-o', 'json'])) as {
      data: { DB_PASSWORD: string };
    };
    const SOPS_B64 = sopsLive.data.DB_PASSWORD;
    const SOPS_VALUE = Buffer.from(SOPS_B64, 'base64').toString('utf8');
    expect(SOPS_VALUE.length).toBeGreaterThanOrEqual(20);
    const get = async (path: string) => {
      const r = await as(con.admin, con.url, path);
      seen.push({ where: `GET ${path} (${r.status})`, text: r.text });
      return r;
    };
    await waitFor(
      'the dev app lists the Secret in its inventory',
      async () => (await get(`/api/apps/${DEV}/tree`)).text.includes('"leak-probe"'),
      { timeoutMs: 30_000 },
    );
    // a reconcile as well, so that app updates flow over the stream while the Secret is live
    expect((await as(con.admin, con.url, `/api/apps/${DEV}/reconcile`, { method: 'POST' })).status).toBe(200);
    // the seed's apps and this file's (other files' estates come and go meanwhile: their reads could 404 mid-way)
    const apps = ((await get('/api/apps')).body as AppsResponse).apps.filter((a) => !otherEstate(a, DEV));
    expect(apps.length).toBeGreaterThanOrEqual(5);
    expect(apps.some((a) => a.id === DEV)).toBe(true);
    // every GET route, for every app and every object of every tree
    const gets = con.routes.filter((r) => r.method === 'GET' && r.url !== '/api/stream');
    const covered = new Set<string>();
    for (const r of gets) {
      if (r.url.includes(':namespace')) {
        for (const a of apps) await get(fill(r.url, a.id));
      } else if (r.url === '/api/clusters/:cluster/object' || r.url === '/api/clusters/:cluster/events') {
        for (const a of apps) {
          const t = await as(con.admin, con.url, `/api/apps/${a.id}/tree`);
          // an app another file removed meanwhile (a seed ApplicationSet's app) has no tree left to leak from
          if (t.status === 404 && a.id !== DEV && a.id !== INFRA_DEV) continue;
          expect(`${a.id} tree ${t.status}`).toBe(`${a.id} tree 200`);
          for (const n of (t.body as unknown as TreeResponse).nodes) {
            const q = new URLSearchParams({
              group: n.ref.group,
              version: n.ref.version,
              kind: n.ref.kind,
              ...(n.ref.namespace ? { namespace: n.ref.namespace } : {}),
              name: n.ref.name,
            });
            await get(`${r.url.replace(':cluster', n.ref.cluster)}?${q}`);
          }
        }
      } else if (r.url === '/api/evidence') {
        await get('/api/evidence?limit=1000');
      } else {
        await get(fill(r.url, DEV));
      }
      covered.add(r.url);
    }
    expect([...covered].sort()).toEqual([...new Set(gets.map((r) => r.url))].sort());
    // the console did look at the Secret: the tree and the diff have it, masked
    expect(
      seen.some((s) => s.where.startsWith('GET /api/clusters/nonprod/object?') && s.where.includes('leak-probe')),
    ).toBe(true);
    const diff = JSON.parse(
      seen.find((s) => s.where === `GET /api/apps/${DEV}/diff (200)`)?.text ?? '{}',
    ) as DiffResponse;
    const probe = diff.objects?.find((o) => o.ref.kind === 'Secret' && o.ref.name === 'leak-probe');
    expect(probe?.liveYaml ?? '').toMatch(/<secret [0-9a-f]{12}>/);
    // and at least one environment comparison rendered dev (with the Secret) without error
    const compared = seen
      .filter((s) => / \/api\/apps\/.*\/environments \(200\)$/.test(s.where))
      .map((s) => JSON.parse(s.text) as EnvCompareResponse);
    expect(compared.some((c) => c.envs.some((e) => e.env === 'dev' && e.renderHash && !e.error))).toBe(true);
    // the stream carried app updates meanwhile
    await waitFor('an app update on the stream', async () => stream.text.includes('"app-upsert"'), {
      timeoutMs: 30_000,
    });
    seen.push({ where: 'SSE /api/stream', text: stream.text });
    seen.push({ where: 'log', text: logLines.join('') });
    expect(logLines.length).toBeGreaterThan(20);
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((f) => {
        const p = join(dir, f);
        // render-cache holds the Git artifact itself (the Secret is in Git in clear in this scenario)
        if (f === 'render-cache') return [];
        return statSync(p).isDirectory() ? files(p) : [p];
      });
    const dataFiles = files(con.dataDir);
    expect(dataFiles.some((f) => f.endsWith('evidence.sqlite'))).toBe(true);
    for (const f of dataFiles) if (existsSync(f)) seen.push({ where: f, text: readFileSync(f).toString('latin1') });
    // each leak is named with a little context (the value itself shown as <VALUE>/<B64>, <SOPS>/<SOPS_B64>)
    const needles = [VALUE, B64, SOPS_VALUE, SOPS_B64];
    const leaks = seen.flatMap((s) => {
      const i = Math.max(...needles.map((n) => s.text.indexOf(n)));
      if (i < 0) return [];
      const around = s.text.slice(Math.max(0, i - 120), i + VALUE.length + 40);
      return [
        `${s.where}: …${around
          .replaceAll(VALUE, '<VALUE>')
          .replaceAll(B64, '<B64>')
          .replaceAll(SOPS_VALUE, '<SOPS>')
          .replaceAll(SOPS_B64, '<SOPS_B64>')}…`,
      ];
    });
    expect(leaks).toEqual([]);
    // the console did show the SOPS Secret (masked): infra-dev's diff has it, encrypted in Git, its keys live
    const infraDiff = JSON.parse(
      seen.find((s) => s.where === `GET /api/apps/${INFRA_DEV}/diff (200)`)?.text ?? '{}',
    ) as DiffResponse;
    const enc = infraDiff.objects?.find((o) => o.ref.kind === 'Secret' && o.ref.name === 'db-credentials');
    expect(enc?.secret?.sops?.mac).toBe(true);
    expect(enc?.secret?.keys.map((k) => [k.key, k.git, k.live])).toEqual([
      ['DB_PASSWORD', 'encrypted', 'present'],
      ['DB_USER', 'encrypted', 'present'],
    ]);
    // and flagged the probe, which is plaintext in Git: the file and the key, never the value
    const flagged = diff.render?.secretsInGit?.find((x) => x.name === 'leak-probe');
    expect(flagged).toMatchObject({ file: FILE, sops: null, keys: [{ key: 'token', git: 'plaintext' }] });
  });
});
