// Issue 40 (12, and compare's half of 9) against the real sandbox: the seed's digital-human app compared across
// its environments through the HTTP API (`releases/compare?toApp=`), each side the newest release a fresh
// console's release recorder rendered and kept. Every environment renders into its own namespace, so objects are
// matched by kind and name in each app's target namespace: what differs between the overlays (the render worker's
// replicas, read from each overlay at the compared commit) is a change, and no object reads as removed on one side
// and added on the other. The second app is checked like the first: a developer of dev alone is refused staging
// (403, recorded as access.denied). Reads only: the seed estate is not changed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { CompareResponse } from '../../src/api/schemas.ts';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { readRepoFileAt } from '../../sandbox/scenario.ts';
import { as, signIn } from '../support/auth.ts';
import { RECORDER_ON, startTestConsole } from '../support/console.ts';

const DEV = 'nonprod/flux-system/kustomization/digital-human-dev';
const STAGING = 'nonprod/flux-system/kustomization/digital-human-staging';
const PROD = 'prod/flux-system/kustomization/digital-human-prod';
const ENV_OF: Record<string, string> = { [DEV]: 'dev', [STAGING]: 'staging', [PROD]: 'prod' };
const DEV_ONLY = 'compare-dev-developer';

let con: Awaited<ReturnType<typeof startTestConsole>>;
/** each app's newest release whose render the recorder recorded and stored */
const rendered: Record<string, string> = {};

beforeAll(async () => {
  con = await startTestConsole(RECORDER_ON, { accounts: { users: { [DEV_ONLY]: ['developer@nonprod/dev'] } } });
  // the recorder renders each app's newest release at start (applied or not: the prune policy may hold it) and
  // keeps its manifests: wait for those records
  await waitFor(
    "the digital-human apps' renders recorded with their manifests",
    async () => {
      for (const app of [DEV, STAGING, PROD]) {
        if (rendered[app]) continue;
        const ev = await as(con.admin, con.url, `/api/evidence?type=release.render&app=${encodeURIComponent(app)}`);
        const sha = (ev.body as { events?: EvidenceEvent[] }).events?.find(
          (e) => typeof e.data.renderHash === 'string' && typeof e.data.sha === 'string',
        )?.data.sha as string | undefined;
        if (sha && (await as(con.admin, con.url, `/api/apps/${app}/releases/${sha}/manifests`)).status === 200)
          rendered[app] = sha;
      }
      return Object.keys(rendered).length === 3;
    },
    { timeoutMs: 400_000, intervalMs: 2000 },
  );
}, 480_000);

afterAll(async () => {
  await con?.close();
});

const compare = (from: string, to: string, who = con.admin) =>
  as(who, con.url, `/api/apps/${from}/releases/compare?from=${rendered[from]}&to=${rendered[to]}&toApp=${to}`);

/** the render worker's replicas in an environment's overlay at a commit (the seed's `replicas:` list) */
function replicasInGit(app: string): number {
  const env = ENV_OF[app] ?? '';
  const overlay = parse(readRepoFileAt(`overlays/${env}/kustomization.yaml`, rendered[app] ?? '')) as {
    replicas?: Array<{ name: string; count: number }>;
  };
  const n = overlay.replicas?.find((r) => r.name === 'render-worker')?.count;
  if (typeof n !== 'number') throw new Error(`overlays/${env} names no replicas for render-worker`);
  return n;
}

/** kind/name (kustomize's generator hash dropped) that reads as removed and also as added */
function removedAndAdded(c: CompareResponse): string[] {
  const id = (r: { kind: string; name: string }) => `${r.kind}/${r.name.replace(/-[2456789bcdfghkmt]{10}$/, '')}`;
  const added = new Set(c.added.map(id));
  return c.removed.map(id).filter((k) => added.has(k));
}

describe('compare one app across environments (issue 40: 12 and 9)', () => {
  for (const [from, to] of [
    [DEV, STAGING],
    [STAGING, PROD],
  ] as const) {
    it(`${ENV_OF[from]} → ${ENV_OF[to]}: the same objects, their differences as changes`, async () => {
      const r = await compare(from, to);
      expect(r.status, r.text).toBe(200);
      const c = r.body as unknown as CompareResponse;
      console.log(
        `${ENV_OF[from]}@${rendered[from]?.slice(0, 8)} → ${ENV_OF[to]}@${rendered[to]?.slice(0, 8)}: ${c.changed.length} changed, ${c.added.length} added, ${c.removed.length} removed, ${c.unchanged} unchanged`,
      );
      expect(c.from).toMatchObject({ app: from, sha: rendered[from], targetNamespace: ENV_OF[from] });
      expect(c.to).toMatchObject({ app: to, sha: rendered[to], targetNamespace: ENV_OF[to] });
      expect(removedAndAdded(c)).toEqual([]);
      // the same base in both: every object of one side is an object of the other
      expect(c.changed.length + c.unchanged).toBeGreaterThan(0);
      const [a, b] = [replicasInGit(from), replicasInGit(to)];
      expect(a, 'the seed overlays give the render worker different replicas').not.toBe(b);
      const worker = c.changed.find((o) => o.kind === 'Deployment' && o.name === 'render-worker');
      expect(worker).toMatchObject({ namespace: ENV_OF[to], fromNamespace: ENV_OF[from] });
      expect(worker?.fields).toContainEqual({ path: 'spec.replicas', from: a, to: b });
      // the namespace is how the two were matched, not one of their changes
      expect(c.changed.flatMap((o) => o.fields.map((f) => f.path))).not.toContain('metadata.namespace');
    });
  }

  it('the second app gets the first one’s check: a developer of dev alone may not compare with staging', async () => {
    const devOnly = await signIn(con.url, DEV_ONLY);
    // dev itself is theirs: its own releases compare
    const own = await as(
      devOnly,
      con.url,
      `/api/apps/${DEV}/releases/compare?from=${rendered[DEV]}&to=${rendered[DEV]}`,
    );
    expect(own.status, own.text).toBe(200);
    const r = await compare(DEV, STAGING, devOnly);
    expect(r.status, r.text).toBe(403);
    const message = (r.body as { error: { message: string } }).error.message;
    expect(message).toMatch(new RegExp(`^Cannot compare with ${STAGING}: You need the .* role on this app's`));
    await waitFor(
      'the refusal recorded as access.denied',
      async () => {
        const ev = await as(con.admin, con.url, '/api/evidence?type=access.denied&limit=1000');
        return (ev.body as { events: EvidenceEvent[] }).events.some(
          (e) => e.actor === DEV_ONLY && e.app === STAGING && e.env === 'staging' && e.data.action === 'release.read',
        );
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    // a developer of every environment compares them (release.read, as for one app's releases)
    const developer = await signIn(con.url, 'developer');
    const ok = await compare(DEV, STAGING, developer);
    expect(ok.status, ok.text).toBe(200);
  });
});
