// Issue 28, manifests per release, against the real sandbox: a release of a real commit keeps its masked render,
// which hashes to the render hash in the chain; an edited stored manifest is refused; "what ran at T" picks the
// release live then, across a rollback (a revert commit); two releases compared show the changed image; the evidence
// verify and the offline check of an export's manifests name an edited manifest. Git is put back by the rollback itself.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/domain/evidence.ts';
import { verifyManifestBundle } from '../../src/server/evidence/index.ts';
import { setImageAutomationSuspended } from '../../sandbox/image-automation.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { commitAndPushRetrying, readRepoFile, writeRepoFile } from '../../sandbox/scenario.ts';
import { as, signIn } from '../support/auth.ts';
import { RECORDER_ON, startTestConsole } from '../support/console.ts';

const APP = 'nonprod/flux-system/kustomization/digital-human-dev';
const OVERLAY = 'overlays/dev/kustomization.yaml';
const TTS = /(digital-human\/tts-gateway\n\s+newTag: )(\S+)/;

let con: Awaited<ReturnType<typeof startTestConsole>>;
let original: string;
let pushed = false;
let suspended = false;

beforeAll(async () => {
  // dev's tts-gateway tag follows Flux's ImagePolicy (sandbox/image-automation.ts): the automation is held while
  // this test moves the tag to 2.0.0 and back, or it would commit the policy's 2.1.0 under it
  setImageAutomationSuspended(true);
  suspended = true;
  con = await startTestConsole(RECORDER_ON);
  original = readRepoFile(OVERLAY);
}, 120_000);

afterAll(async () => {
  try {
    if (pushed && readRepoFile(OVERLAY) !== original)
      commitAndPushRetrying('Put dev back (manifests test)', (w) => writeRepoFile(w, OVERLAY, original));
  } finally {
    try {
      if (suspended) setImageAutomationSuspended(false);
    } finally {
      await con?.close();
    }
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
    { timeoutMs: 180_000, intervalMs: 1000 },
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
      { timeoutMs: 120_000, intervalMs: 1000 },
    );
    const m0 = await appliedAndStored(sha0);
    expect(imageOf(m0.objects)).toMatch(/tts-gateway:2\.1\.0$/);

    const changed = original.replace(TTS, (_m, a: string) => `${a}2.0.0`);
    const sha1 = commitAndPushRetrying('Manifests test: dev TTS gateway back to 2.0.0', (w) =>
      writeRepoFile(w, OVERLAY, changed),
    );
    pushed = true;
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
    const sha2 = commitAndPushRetrying('Manifests test: roll back dev session-cache', (w) =>
      writeRepoFile(w, OVERLAY, original),
    );
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
    // a viewer (no evidence.read) may not read them, nor compare
    const viewer = await signIn(con.url, 'viewer');
    expect((await as(viewer, con.url, `/api/apps/${APP}/releases/${sha1}/manifests`)).status).toBe(403);
    expect((await as(viewer, con.url, `/api/apps/${APP}/releases/compare?from=${sha0}&to=${sha1}`)).status).toBe(403);
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
  }, 600_000);
});
