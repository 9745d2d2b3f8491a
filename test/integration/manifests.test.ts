// Issue 28, manifests per release, against the real sandbox: a release of a real commit keeps its masked render,
// which hashes to the render hash in the chain; an edited stored manifest is refused; "what ran at T" picks the
// release live then, across a rollback (a revert commit); two releases compared show the changed image; the evidence
// verify and the offline check of an export's manifests name an edited manifest. The file owns its estate (a dev
// overlay of its own, which no image automation writes to); the estate is deleted afterwards.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/domain/evidence.ts';
import { verifyManifestBundle } from '../../src/server/evidence/index.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { readRepoFile, writeRepoFile } from '../../sandbox/scenario.ts';
import { as, signIn } from '../support/auth.ts';
import { RECORDER_ON, startTestConsole } from '../support/console.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../support/own-estate.ts';

const OVERLAY = 'overlays/dev/kustomization.yaml';
const TTS = /(digital-human\/tts-gateway\n\s+newTag: )(\S+)/;

let estate: Estate;
let APP: string;
let con: Awaited<ReturnType<typeof startTestConsole>>;
let original: string;

beforeAll(async () => {
  // the estate's dev overlay keeps the seed's ImagePolicy marker, but no ImageUpdateAutomation writes to the
  // estate's repository: the tag moves only when this test pushes
  estate = await ownEstate({ name: 'manifests', env: 'dev', files: digitalHumanTemplate('dev') });
  APP = estate.appId();
  // the console connects to the estate's cluster only: its release recorder, which renders every app it sees at
  // start, has no other cluster's apps to work through before this estate's
  con = await startTestConsole({ ...RECORDER_ON, CONSOLE_CONTEXTS: estate.cluster });
  original = readRepoFile(OVERLAY, 'main', estate.state);
}, 300_000);

afterAll(async () => {
  try {
    await con?.close();
  } finally {
    await estate?.teardown();
  }
});

const get = (path: string) => as(con.admin, con.url, `/api/apps/${APP}/releases${path}`);

/** waits until the release of `sha` was applied and its manifests are stored; returns them */
async function appliedAndStored(sha: string) {
  let body: Record<string, unknown> = {};
  await waitFor(
    `release ${sha.slice(0, 8)} applied, its manifests stored`,
    async () => {
      const at = await get(`/at?time=${encodeURIComponent(new Date().toISOString())}`);
      const live = (at.body.release as { sha?: string } | null)?.sha;
      if (live !== sha) return false;
      const m = await get(`/${sha}/manifests`);
      body = m.body;
      return m.status === 200;
    },
    { timeoutMs: 300_000, intervalMs: 1000 },
  );
  return body as { renderHash: string; objects: Array<Record<string, unknown>>; sha: string };
}

const imageOf = (objects: Array<Record<string, unknown>>) =>
  (
    objects.find((o) => o.kind === 'Deployment' && (o.metadata as { name?: string }).name === 'tts-gateway')?.spec as {
      template: { spec: { containers: Array<{ image: string }> } };
    }
  )?.template.spec.containers[0]?.image;

describe('manifests per release on the sandbox', () => {
  it('stored, proved by the render hash, refused when edited; what ran at a time, across a rollback; compared', async () => {
    const before = TTS.exec(original)?.[2];
    expect(before).toBe('2.1.0');
    // the release live now (recorded at this console's start): its manifests are kept too
    // (recorded by this console's recorder, which starts with it: wait for the record, not for luck)
    let sha0 = '';
    await waitFor(
      'the live release recorded',
      async () => {
        const now0 = await get(`/at?time=${encodeURIComponent(new Date().toISOString())}`);
        sha0 = (now0.body.release as { sha?: string } | null)?.sha ?? '';
        return !!sha0;
      },
      { timeoutMs: 300_000, intervalMs: 1000 },
    );
    const m0 = await appliedAndStored(sha0);
    expect(imageOf(m0.objects)).toMatch(/tts-gateway:2\.1\.0$/);

    const changed = original.replace(TTS, (_m, a: string) => `${a}2.0.0`);
    const sha1 = estate.push('Manifests test: dev TTS gateway back to 2.0.0', (w) =>
      writeRepoFile(w, OVERLAY, changed),
    );
    // (the estate's source is fetched when asked: its Kustomization applies exactly this commit)
    await estate.waitApplied(sha1);
    const m1 = await appliedAndStored(sha1);
    // the stored bytes are what the chain's render hash was taken over
    expect(`sha256:${createHash('sha256').update(canonicalJson(m1.objects)).digest('hex')}`).toBe(m1.renderHash);
    expect(imageOf(m1.objects)).toMatch(/tts-gateway:2\.0\.0$/);
    const sized = (await get(`/${sha1}/manifests`)).body as { bytes: number; storedBytes: number };
    console.log(
      `manifest of ${m1.objects.length} objects: ${sized.bytes} bytes canonical, ${sized.storedBytes} stored (README)`,
    );
    const t1 = new Date().toISOString();

    // a rollback: the revert commit is the release live after it; at t1 the scaled one still ran
    await new Promise((r) => setTimeout(r, 1000));
    const sha2 = estate.push('Manifests test: roll back dev TTS gateway', (w) => writeRepoFile(w, OVERLAY, original));
    await estate.waitApplied(sha2);
    const m2 = await appliedAndStored(sha2);
    expect((await get(`/at?time=${encodeURIComponent(t1)}`)).body.release).toMatchObject({ sha: sha1 });
    expect(m2.renderHash).toBe(m0.renderHash); // the same render: one stored copy serves both releases

    // the release before the rollback's is the changed one
    expect((await get(`/at?time=${encodeURIComponent(new Date().toISOString())}`)).body.previous).toMatchObject({
      sha: sha1,
    });

    // compared: exactly the TTS gateway's image changed
    const c = await get(`/compare?from=${sha0}&to=${sha1}`);
    expect(c.status, c.text).toBe(200);
    expect(c.body.changed).toEqual([
      expect.objectContaining({
        kind: 'Deployment',
        name: 'tts-gateway',
        fields: [
          expect.objectContaining({
            path: expect.stringMatching(/containers.*image$/),
            from: expect.stringMatching(/:2\.1\.0$/),
            to: expect.stringMatching(/:2\.0\.0$/),
          }),
        ],
      }),
    ]);
    expect(c.body.added).toEqual([]);
    expect(c.body.removed).toEqual([]);
    expect((await as(con.admin, con.url, `/api/evidence/verify`)).body).toMatchObject({ ok: true });
    // the export and its manifests, checked offline: intact now
    const offline = async () =>
      verifyManifestBundle(
        [(await as(con.admin, con.url, '/api/evidence/export?format=jsonl')).text],
        [(await as(con.admin, con.url, '/api/evidence/export/manifests')).text],
      );
    const intact = await offline();
    expect(intact).toMatchObject({ ok: true, missing: [], mismatched: [] });
    expect(intact.referenced).toBeGreaterThanOrEqual(2);
    // a viewer (no release.read) may not read them, nor compare
    const viewer = await signIn(con.url, 'viewer');
    expect((await as(viewer, con.url, `/api/apps/${APP}/releases/${sha1}/manifests`)).status).toBe(403);
    expect((await as(viewer, con.url, `/api/apps/${APP}/releases/compare?from=${sha0}&to=${sha1}`)).status).toBe(403);
    expect((await as(viewer, con.url, `/api/apps/${APP}/releases`)).status).toBe(403);
    // a developer sees the app's releases and what ran (to choose what to roll back to), not the evidence log
    const developer = await signIn(con.url, 'developer');
    const devReleases = await as(developer, con.url, `/api/apps/${APP}/releases`);
    expect(devReleases.status, devReleases.text).toBe(200);
    expect((devReleases.body as { releases: Array<{ sha: string }> }).releases.map((r) => r.sha)).toContain(sha1);
    expect((await as(developer, con.url, `/api/apps/${APP}/releases/${sha1}/manifests`)).status).toBe(200);
    expect((await as(developer, con.url, '/api/evidence')).status).toBe(403);
    // a bad sha or time is a clear 400, not a lookup
    expect((await get('/not-a-sha/manifests')).status).toBe(400);
    expect((await get('/at?time=yesterday')).status).toBe(400);

    // a stored manifest edited in the database is refused, never shown
    const db = new Database(join(con.dataDir, 'evidence.sqlite'));
    try {
      const other = db.prepare('SELECT body FROM release_manifests WHERE render_hash = ?').get(m0.renderHash) as {
        body: string;
      };
      db.prepare('UPDATE release_manifests SET body = ? WHERE render_hash = ?').run(other.body, m1.renderHash);
    } finally {
      db.close();
    }
    const tampered = await get(`/${sha1}/manifests`);
    expect(tampered.status).toBe(409);
    expect(tampered.text).toContain('was changed after it was recorded');
    // and the evidence verify says so, at the render record that names it
    const v = await as(con.admin, con.url, '/api/evidence/verify');
    expect(v.body).toMatchObject({ ok: false, manifests: { tampered: [m1.renderHash] } });
    expect(String(v.body.reason)).toContain(m1.renderHash);
    // and the offline check of a new export's manifests names it too
    expect(await offline()).toMatchObject({ ok: false, mismatched: [m1.renderHash] });
  }, 900_000);
});
