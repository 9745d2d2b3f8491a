// Manifests per release on a real SQLite store: one copy per render hash, the bytes checked against the hash on
// every read (a row edited in the database is refused), and Secret values stored masked as the hash took them.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../domain/evidence.ts';
import { renderCanonical } from '../diff/index.ts';
import { renderHash } from '../diff/render.ts';
import { openEvidenceStore, type EvidenceStore } from '../evidence/index.ts';
import { ManifestStore, ManifestTampered } from '../store/manifest-store.ts';

const objects = [
  { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'dev' }, spec: { replicas: 2 } },
  { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'dev' }, stringData: { password: 'hunter2' } },
];

let dir: string;
let store: EvidenceStore;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'manifests-'));
  store = await openEvidenceStore({ dataDir: dir });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('release manifests', () => {
  it('stores a render once per hash and gives back exactly the hashed objects, Secrets masked', async () => {
    const m = new ManifestStore(store);
    const hash = renderHash(objects);
    expect(await m.put(hash, renderCanonical(objects), 2)).toBe('stored');
    expect(await m.put(hash, renderCanonical(objects), 2)).toBe('present');
    const got = await m.get(hash);
    expect(got?.objects.map((o) => o.kind).sort()).toEqual(['Deployment', 'Secret']);
    expect(JSON.stringify(got?.objects)).not.toContain('hunter2');
    // the bytes given back are the bytes the hash was taken over (masking is not applied twice)
    expect(`sha256:${createHash('sha256').update(canonicalJson(got?.objects)).digest('hex')}`).toBe(hash);
    expect(await m.stats()).toMatchObject({ manifests: 1 });
    expect(await m.get('sha256:' + '0'.repeat(64))).toBeNull();
  });

  it('refuses bytes that do not hash to the key, and a stored row edited afterwards', async () => {
    const m = new ManifestStore(store);
    const hash = renderHash(objects);
    await expect(m.put(hash, renderCanonical([objects[0] as never]), 1)).rejects.toThrow(/does not hash/);
    await m.put(hash, renderCanonical(objects), 2);
    const db = new Database(join(dir, 'evidence.sqlite'));
    try {
      const other = Buffer.from(renderCanonical([objects[0] as never])).toString('base64');
      db.prepare('UPDATE release_manifests SET body = ? WHERE render_hash = ?').run(other, hash);
    } finally {
      db.close();
    }
    await expect(m.get(hash)).rejects.toBeInstanceOf(ManifestTampered);
  });

  it('verify checks every stored manifest in pages and names the edited ones', async () => {
    const m = new ManifestStore(store);
    const renders = Array.from({ length: 5 }, (_, i) => [{ ...objects[0], spec: { replicas: i } }] as never[]);
    const hashes = renders.map((r) => renderHash(r));
    for (const [i, r] of renders.entries()) await m.put(hashes[i] ?? '', renderCanonical(r), 1);
    expect(await m.verify(2)).toEqual({ checked: 5, tampered: [], expired: 0, unproven: [] });
    const db = new Database(join(dir, 'evidence.sqlite'));
    try {
      const edited = hashes[3] ?? '';
      const other = gzipSync(renderCanonical(renders[0] ?? [])).toString('base64');
      db.prepare('UPDATE release_manifests SET body = ? WHERE render_hash = ?').run(other, edited);
      db.prepare('UPDATE release_manifests SET body = ? WHERE render_hash = ?').run('not gzip', hashes[1]);
    } finally {
      db.close();
    }
    const v = await m.verify(2);
    expect(v.checked).toBe(5);
    expect(v.tampered.sort()).toEqual([hashes[1], hashes[3]].sort());
  });
});
