// Makes the evidence test vector in this directory (docs/reference/evidence-format.md, "Test vector") with the
// console's own code: a fresh SQLite store, five records appended through it, two signed checkpoints, the JSONL,
// CSV and filtered exports, and the manifests bundle. The signing key is a throwaway made here and never written:
// only its public half is. Run once: `npx tsx test/vectors/evidence/generate.ts`. The records and their hashes are
// the same every run (fixed inputs and times); the key, so keyId and every signature, is new each run.
import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EvidenceInput } from '../../../src/domain/evidence.ts';
import { EvidenceCheckpoints } from '../../../src/server/evidence/checkpoints.ts';
import { exportChunks } from '../../../src/server/evidence/export.ts';
import { manifestBundleChunks } from '../../../src/server/evidence/manifest-bundle.ts';
import { SqliteEvidenceStore } from '../../../src/server/evidence/sqlite-store.ts';
import { ManifestStore } from '../../../src/server/store/manifest-store.ts';

const APP = 'nonprod/flux-system/kustomization/payments';
const at = (minute: number) => `2026-12-10T09:${String(minute).padStart(2, '0')}:00.000Z`;

/** the render the third record names (its bytes are what the bundle holds) */
export const CANONICAL =
  '[{"apiVersion":"v1","data":{"mode":"strict"},"kind":"ConfigMap","metadata":{"name":"payments","namespace":"payments"}}]';
export const RENDER_HASH = `sha256:${createHash('sha256').update(CANONICAL).digest('hex')}`;

/** The five records: plain values, escapes, a render, the serialization's traps, a formula-like actor. */
export const RECORDS: EvidenceInput[] = [
  { time: at(0), type: 'console.started', actor: 'console', data: { version: '1.4.0', pid: 4242 } },
  {
    time: at(1),
    type: 'freeze.started',
    actor: 'alice@example.com',
    app: APP,
    cluster: 'nonprod',
    env: 'dev',
    data: {
      freezeId: 'frz-7',
      reason: 'Quarter close: "no deploys"\nuntil Friday \\ 5 pm',
      expiresAt: '2026-12-12T18:00:00.000Z',
      scope: { kinds: ['Deployment', 'HelmRelease'], all: false },
    },
  },
  {
    time: at(2),
    type: 'release.render',
    actor: 'kustomize-controller',
    app: APP,
    cluster: 'nonprod',
    env: 'dev',
    data: {
      status: 'ok',
      sha: '3f2a9c1d0b7e6f5a4c3b2a190817263544536271',
      renderHash: RENDER_HASH,
      objects: 1,
      manifest: 'stored',
    },
  },
  {
    time: at(3),
    type: 'action.completed',
    actor: 'alice@example.com',
    data: {
      intentSeq: 2,
      action: 'freeze.started',
      zeta: 1,
      Zeta: 2,
      é: 'café ✓',
      '\u{1F600}': 'a key above U+FFFF',
      '\uFB01': 'a key between U+E000 and U+FFFF',
      ratio: 0.1,
      big: 1e21,
      tiny: 1e-7,
      neg: -3.5,
      ctrl: '\u0001\t\u007f\u2028',
      nested: { b: [1, { d: null, c: true }], a: '' },
    },
  },
  {
    time: at(4),
    type: 'drift.detected',
    actor: '=HYPERLINK("https://example.com")',
    app: APP,
    cluster: 'nonprod',
    env: 'dev',
    data: { status: 'drifted', objects: 1 },
  },
];

async function text(gen: AsyncIterable<string>): Promise<string> {
  let s = '';
  for await (const c of gen) s += c;
  return s;
}

async function main(): Promise<void> {
  const out = import.meta.dirname;
  const dir = mkdtempSync(join(tmpdir(), 'evidence-vector-'));
  const store = SqliteEvidenceStore.open(dir);
  try {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const key = { privateKey, publicKey };
    const signingKey = {
      path: '(not written)',
      ...key,
      publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    };
    let now = new Date(at(2).replace(':00.000Z', ':30.000Z'));
    const checkpoints = new EvidenceCheckpoints(store, signingKey, { now: () => now });
    for (const [i, r] of RECORDS.entries()) {
      await store.append(r);
      if (i === 2) await checkpoints.checkpoint(); // the head at event 3
    }
    await new ManifestStore(store).put(RENDER_HASH, CANONICAL, 1);
    now = new Date(at(5));
    await checkpoints.checkpoint(); // the head at event 5
    const exportAt = () => new Date(at(6));
    const files: Record<string, string> = {
      'public-key.pem': signingKey.publicKeyPem,
      'export.jsonl': await text(exportChunks(store, {}, { format: 'jsonl', key, now: exportAt })),
      'export.csv': await text(exportChunks(store, {}, { format: 'csv', key, now: exportAt })),
      'export-filtered.jsonl': await text(exportChunks(store, { app: APP }, { format: 'jsonl', key, now: exportAt })),
      'manifests.jsonl': await text(manifestBundleChunks(store, new ManifestStore(store), {}, undefined)),
      // as GET /api/evidence/checkpoints answers
      'checkpoints.json': `${JSON.stringify({ checkpoints: await store.checkpoints() }, null, 2)}\n`,
    };
    for (const [name, body] of Object.entries(files)) writeFileSync(join(out, name), body);
    process.stdout.write(`wrote ${Object.keys(files).join(', ')} to ${out}\n`);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.filename === process.argv[1]) await main();
