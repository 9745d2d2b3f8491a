// The manifests bundle beside an export, checked offline against the export (JSONL and CSV): an intact bundle,
// an edited manifest, one left out, a foreign line, a missing header.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { evidenceCli } from '../cli/evidence.ts';
import { renderCanonical, renderHash } from '../diff/render.ts';
import { ManifestStore } from '../store/manifest-store.ts';
import { exportChunks } from './export.ts';
import {
  bundleHeaderLine,
  bundleLine,
  describeBundle,
  manifestBundleChunks,
  verifyManifestBundle,
} from './manifest-bundle.ts';
import { openEvidenceStore, type EvidenceStore } from './index.ts';

let dir: string;
let store: EvidenceStore;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bundle-'));
  store = await openEvidenceStore({ dataDir: dir });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const render = (replicas: number) => [
  { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'dev' }, spec: { replicas } },
];

/** A release's render record, as the recorder appends it (env `dev` on nonprod unless told) */
const appendRender = (data: Record<string, unknown>, cluster = 'nonprod', env = 'dev') =>
  store.append({
    time: new Date().toISOString(),
    type: 'release.render',
    actor: 'console',
    app: `${cluster}/flux-system/kustomization/web-${env}`,
    cluster,
    env,
    data,
  });

async function recordReleases(): Promise<Array<{ hash: string; canonical: string }>> {
  const m = new ManifestStore(store);
  const out: Array<{ hash: string; canonical: string }> = [];
  for (const [i, r] of [render(1), render(2), render(1)].entries()) {
    const hash = renderHash(r);
    const canonical = renderCanonical(r);
    const manifest = (await m.has(hash)) ? 'present' : await m.put(hash, canonical, r.length);
    await appendRender({ sha: String(i).repeat(40), renderHash: hash, objects: 1, manifest });
    if (!out.some((x) => x.hash === hash)) out.push({ hash, canonical });
  }
  // a render recorded before manifests were kept: not asked of the bundle
  await appendRender({ sha: '9'.repeat(40), renderHash: renderHash(render(9)), objects: 1 });
  return out;
}

async function text(gen: AsyncIterable<string>): Promise<string> {
  let s = '';
  for await (const c of gen) s += c;
  return s;
}

describe('manifest bundle', () => {
  it('an intact bundle checks against a JSONL and a CSV export; an edited, a missing and a foreign entry fail', async () => {
    const kept = await recordReleases();
    const jsonl = await text(exportChunks(store, {}, { format: 'jsonl' }));
    const csv = await text(exportChunks(store, {}, { format: 'csv' }));
    const bundle = [bundleHeaderLine(), ...kept.map((k) => bundleLine(k.hash, k.canonical))];

    for (const exp of [jsonl, csv]) {
      const r = await verifyManifestBundle([exp], bundle);
      expect(r).toEqual({
        ok: true,
        checked: 2,
        referenced: 2,
        missing: [],
        mismatched: [],
        malformed: [],
        expired: 0,
        unproven: [],
      });
      expect(describeBundle(r)[0]).toMatch(/^manifests OK: 2 checked/);
    }

    const [a, b] = kept as [{ hash: string; canonical: string }, { hash: string; canonical: string }];
    const edited = await verifyManifestBundle(
      [jsonl],
      [
        bundleHeaderLine(),
        bundleLine(a.hash, a.canonical.replace('"replicas":1', '"replicas":5')),
        bundleLine(b.hash, b.canonical),
      ],
    );
    expect(edited).toMatchObject({ ok: false, mismatched: [a.hash], missing: [] });
    expect(describeBundle(edited).join('\n')).toContain(`edited: the manifest of ${a.hash}`);

    const cut = await verifyManifestBundle([jsonl], [bundleHeaderLine(), bundleLine(b.hash, b.canonical)]);
    expect(cut).toMatchObject({ ok: false, missing: [a.hash] });

    const foreign = await verifyManifestBundle([jsonl], [...bundle, '{"hello":1}\n', 'not json\n']);
    expect(foreign.ok).toBe(false);
    expect(foreign.malformed).toEqual(['line 4 is not a manifest entry', 'line 5 is not JSON']);

    const headless = await verifyManifestBundle([jsonl], bundle.slice(1));
    expect(headless.ok).toBe(false);
    expect(headless.malformed[0]).toMatch(/header/);
  });

  it('the console writes the bundle (once per render hash, only what the reader may see); the CLI checks it, and catches a row edited in the database', async () => {
    const kept = await recordReleases();
    await appendRender(
      { sha: 'p'.repeat(40), renderHash: renderHash(render(7)), objects: 1, manifest: 'stored' },
      'prod',
      'prod',
    );
    await new ManifestStore(store).put(renderHash(render(7)), renderCanonical(render(7)), 1);
    const exp = join(dir, 'export.jsonl');
    const bundle = join(dir, 'manifests.jsonl');
    writeFileSync(exp, await text(exportChunks(store, {}, { format: 'jsonl' })));
    const written = await text(manifestBundleChunks(store, new ManifestStore(store), {}, undefined, 2));
    writeFileSync(bundle, written);
    expect(written.trim().split('\n')).toHaveLength(1 + kept.length + 1); // header, nonprod's two, prod's one
    // a reader of nonprod only gets nonprod's manifests
    const nonprod = await text(
      manifestBundleChunks(store, new ManifestStore(store), {}, (e) => e.cluster === 'nonprod'),
    );
    expect(nonprod).not.toContain(renderHash(render(7)));

    const run = async (...args: string[]) => {
      let out = '';
      const code = await evidenceCli(args, { out: (x) => (out += x), err: (x) => (out += x) });
      return { code, out };
    };
    const ok = await run('verify', exp, '--manifests', bundle, '--allow-unsigned');
    expect(ok.out).toContain('manifests OK: 3 checked');
    expect(ok.code).toBe(0);

    // the same row edited in the database: the next bundle carries it as stored, and the check names it
    const a = kept[0]?.hash ?? '';
    const db = new Database(join(dir, 'evidence.sqlite'));
    try {
      db.prepare('UPDATE release_manifests SET body = ? WHERE render_hash = ?').run(
        (await import('node:zlib')).gzipSync(renderCanonical(render(5))).toString('base64'),
        a,
      );
    } finally {
      db.close();
    }
    writeFileSync(bundle, await text(manifestBundleChunks(store, new ManifestStore(store), {}, undefined)));
    const bad = await run('verify', exp, '--manifests', bundle, '--allow-unsigned');
    expect(bad.code).toBe(1);
    expect(bad.out).toContain(`edited: the manifest of ${a} does not hash to it`);
  });
});
