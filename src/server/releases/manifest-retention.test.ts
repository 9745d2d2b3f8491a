// Manifest retention on a real SQLite store: a render unused longer than the setting expires (each app's newest
// stays, a render recorded again is kept, an expired one recorded again is stored again), the expiry is recorded
// before anything goes (not recorded: nothing expires), reads say "expired", Verify chain accepts the tombstones
// its chain proves and names one it does not, and the offline bundle check does the same.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { App } from '../../domain/app.ts';
import { renderCanonical, renderHash } from '../diff/render.ts';
import { EvidenceRecorder, openEvidenceStore, type EvidenceStore } from '../evidence/index.ts';
import { exportChunks } from '../evidence/export.ts';
import { manifestBundleChunks, verifyManifestBundle } from '../evidence/manifest-bundle.ts';
import { ManifestExpired, ManifestStore } from '../store/manifest-store.ts';
import { applyManifestRetention } from './manifest-retention.ts';

const DAY = 86_400_000;
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const render = (replicas: number) => [
  { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'dev' }, spec: { replicas } },
];
const APP = 'nonprod/flux-system/kustomization/web-dev';
const apps = () => [{ id: APP } as App];

let dir: string;
let store: EvidenceStore;
let m: ManifestStore;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'retention-'));
  store = await openEvidenceStore({ dataDir: dir });
  m = new ManifestStore(store);
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** a release of `replicas`, recorded as the recorder does (touch, else put), with its render record */
async function release(replicas: number): Promise<string> {
  const r = render(replicas);
  const hash = renderHash(r);
  const manifest = (await m.touch(hash)) ? 'present' : await m.put(hash, renderCanonical(r), 1);
  await store.append({
    time: new Date().toISOString(),
    type: 'release.render',
    actor: 'console',
    app: APP,
    cluster: 'nonprod',
    env: 'dev',
    data: { sha: String(replicas).repeat(40), renderHash: hash, objects: 1, manifest },
  });
  return hash;
}

const text = async (chunks: AsyncIterable<string>) => {
  let s = '';
  for await (const c of chunks) s += c;
  return s;
};

/** the day retention runs: `days` after now */
const later = (days: number) => () => Date.now() + days * DAY;

describe('manifest retention', () => {
  it('expires renders unused for longer than the setting, never the newest; its intent first; reads say so', async () => {
    const recorder = new EvidenceRecorder(store, quiet);
    const old1 = await release(1);
    const old2 = await release(2);
    const newest = await release(3);
    expect(await applyManifestRetention({ days: 30, manifests: m, store, recorder, apps, now: later(10) })).toEqual({
      expired: [],
      kept: 0,
    });
    const r = await applyManifestRetention({ days: 30, manifests: m, store, recorder, apps, now: later(31) });
    expect(r.expired.sort()).toEqual([old1, old2].sort());
    expect(r.kept).toBe(1); // the app's newest render, however old
    await expect(m.get(old1)).rejects.toBeInstanceOf(ManifestExpired);
    expect((await m.get(newest))?.objects).toHaveLength(1);
    expect(await m.has(old1)).toBe(false);
    expect(await m.raw(old1)).toBeNull();
    expect(await m.stats()).toMatchObject({ manifests: 1, expired: 2 });
    const [intent] = await store.list({ type: 'release.manifests-expired' });
    const [done] = await store.list({ type: 'action.completed' });
    expect(intent?.data).toMatchObject({ retentionDays: 30 });
    expect((intent?.data.renderHashes as string[]).sort()).toEqual([old1, old2].sort());
    expect(done?.seq).toBeGreaterThan(intent?.seq ?? Infinity);
    expect((done?.data.expired as string[]).sort()).toEqual([old1, old2].sort());

    // recorded again after it expired: stored again, readable again
    expect(await release(1)).toBe(old1);
    expect((await m.get(old1))?.objects).toHaveLength(1);
  });

  it('a render recorded again is used again: it is kept', async () => {
    const recorder = new EvidenceRecorder(store, quiet);
    const a = await release(1);
    await release(2);
    const db = new Database(join(dir, 'evidence.sqlite'));
    try {
      // both were last used 40 days ago …
      db.prepare('UPDATE release_manifests SET last_used_at = ?').run(new Date(Date.now() - 40 * DAY).toISOString());
    } finally {
      db.close();
    }
    await release(1); // … and `a` again today (a rollback to it)
    await release(3);
    const r = await applyManifestRetention({ days: 30, manifests: m, store, recorder, apps });
    expect(r.expired).toHaveLength(1);
    expect(r.expired).not.toContain(a);
  });

  it('an expiry that cannot be recorded expires nothing', async () => {
    const old = await release(1);
    await release(2);
    const failing = {
      act: async () => {
        throw new Error('the evidence store is down');
      },
    };
    await expect(
      applyManifestRetention({ days: 1, manifests: m, store, recorder: failing, apps, now: later(2) }),
    ).rejects.toThrow(/down/);
    expect(await m.has(old)).toBe(true);
  });

  it('Verify chain and the offline check accept proven tombstones and name a body removed behind their back', async () => {
    const recorder = new EvidenceRecorder(store, quiet);
    const old = await release(1);
    const mid = await release(2);
    await release(3);
    await applyManifestRetention({ days: 30, manifests: m, store, recorder, apps, now: later(31) });
    const proven = new Set([old, mid]);
    expect(await m.verify(200, proven)).toEqual({ checked: 1, tampered: [], expired: 2, unproven: [] });

    const exp = await text(exportChunks(store, {}, { format: 'jsonl' }));
    const bundle = await text(manifestBundleChunks(store, m, {}, undefined));
    expect(bundle).toContain(`{"renderHash":"${old}","expired":{"at":`);
    const ok = await verifyManifestBundle([exp], [bundle]);
    expect(ok).toMatchObject({ ok: true, checked: 1, expired: 2, unproven: [], missing: [] });

    // an export that does not hold the expiries (the release records only): the tombstones are unproven
    const early = await text(exportChunks(store, { type: 'release.render' }, { format: 'jsonl' }));
    const cut = await verifyManifestBundle([early], [bundle]);
    expect(cut.ok).toBe(false);
    expect(cut.unproven.map((u) => u.renderHash).sort()).toEqual([old, mid].sort());

    // a tombstone made in the database, with no expiry in the chain: Verify names it
    const newest = renderHash(render(3));
    const db = new Database(join(dir, 'evidence.sqlite'));
    try {
      db.prepare("UPDATE release_manifests SET body = '', expired_at = ? WHERE render_hash = ?").run(
        new Date().toISOString(),
        newest,
      );
    } finally {
      db.close();
    }
    expect(await m.verify(200, proven)).toMatchObject({ checked: 0, expired: 2, unproven: [newest] });
    const forged = await verifyManifestBundle([exp], [await text(manifestBundleChunks(store, m, {}, undefined))]);
    expect(forged.ok).toBe(false);
    expect(forged.unproven.map((u) => u.renderHash)).toEqual([newest]);
  });
});
