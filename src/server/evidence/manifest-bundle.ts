// The manifests beside an evidence export (issue 28): one JSONL line per stored render the exported release
// records name, `{"renderHash": "sha256:…", "canonical": "<the canonical JSON the hash was taken over>"}`, after a
// header line. Checked offline (`npm run cli -- evidence verify <export> --manifests <bundle>`): each manifest
// must hash to its key, and every render record of the export that says its manifest was kept (`stored` or
// `present`) must find it in the bundle. The export's own chain and trailer prove the render hashes; the
// bundle adds the objects they were taken over.
// A manifest that retention expired (releases/manifest-retention.ts) is a tombstone line instead,
// `{"renderHash": …, "expired": {"at": …, "seq": <the expiry's outcome record>}}`: the check accepts it only
// when the export itself holds that expiry (an `action.completed` of `release.manifests-expired` naming the hash,
// after the last release record that kept it); a tombstone the export cannot prove fails the check.
import { createHash } from 'node:crypto';
import type { ManifestStore } from '../store/manifest-store.ts';
import { ExportReader } from './export-read.ts';
import type { EvidenceQuery, EvidenceStore } from './store.ts';

export const MANIFEST_BUNDLE_HEADER = { bundle: 'gitops-console release manifests v1' } as const;

const hashOf = (canonical: string) => `sha256:${createHash('sha256').update(canonical).digest('hex')}`;

type Ev = { seq?: number; type: string; data: Record<string, unknown> };

/** the render hashes an expiry's outcome record names (none for any other record) */
export function expiredBy(e: Ev): string[] {
  if (e.type !== 'action.completed' || e.data.action !== 'release.manifests-expired') return [];
  return Array.isArray(e.data.expired) ? e.data.expired.filter((h): h is string => typeof h === 'string') : [];
}

/**
 * The render hashes an export's release records say were kept (the ones a bundle must hold), and those whose
 * last word in the export (by seq) is their expiry under retention (the ones it may hold as tombstones).
 */
export function keptRenderHashes(events: Iterable<Ev>): Set<string> {
  return manifestStates(events).kept;
}

export function manifestStates(events: Iterable<Ev>): { kept: Set<string>; expired: Map<string, number> } {
  const sorted = [...events].sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
  const kept = new Set<string>();
  const expired = new Map<string, number>();
  for (const e of sorted) {
    if (
      e.type === 'release.render' &&
      typeof e.data.renderHash === 'string' &&
      (e.data.manifest === 'stored' || e.data.manifest === 'present')
    ) {
      kept.add(e.data.renderHash);
      expired.delete(e.data.renderHash);
    }
    for (const h of expiredBy(e)) {
      kept.delete(h);
      expired.set(h, e.seq ?? 0);
    }
  }
  return { kept, expired };
}

export function bundleHeaderLine(): string {
  return `${JSON.stringify(MANIFEST_BUNDLE_HEADER)}\n`;
}
export function bundleLine(renderHash: string, canonical: string): string {
  return `${JSON.stringify({ renderHash, canonical })}\n`;
}
export function tombstoneLine(renderHash: string, expired: { at: string; seq: number | null }): string {
  return `${JSON.stringify({ renderHash, expired })}\n`;
}

export interface BundleCheck {
  ok: boolean;
  /** manifests in the bundle, each checked against its hash */
  checked: number;
  /** render hashes the export's records say were kept */
  referenced: number;
  /** kept according to the export, absent from the bundle */
  missing: string[];
  /** present, but their bytes do not hash to their key (edited) */
  mismatched: string[];
  /** lines that are not a manifest entry (line numbers), or a missing header */
  malformed: string[];
  /** expired under retention, and the export proves it (its expiry record is in the export) */
  expired: number;
  /** tombstones the export does not prove (no expiry of that hash in it): with the record the bundle names */
  unproven: Array<{ renderHash: string; seq: number | null }>;
}

async function* lines(chunks: AsyncIterable<string> | Iterable<string>): AsyncIterable<string> {
  let buf = '';
  for await (const c of chunks) {
    buf += c;
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      yield buf.slice(0, i);
      buf = buf.slice(i + 1);
    }
  }
  if (buf) yield buf;
}

/** Checks a bundle against the export it came with (either of the export's formats). */
export async function verifyManifestBundle(
  exportChunks: AsyncIterable<string> | Iterable<string>,
  bundleChunks: AsyncIterable<string> | Iterable<string>,
): Promise<BundleCheck> {
  const events: Array<{ type: string; data: Record<string, unknown> }> = [];
  const reader = new ExportReader((item) => {
    if (item.kind === 'event') events.push(item.e);
  });
  for await (const c of exportChunks) reader.push(c);
  reader.end();
  const states = manifestStates(events);
  const wanted = states.kept;

  const found = new Set<string>();
  const unproven: BundleCheck['unproven'] = [];
  let expired = 0;
  const mismatched: string[] = [];
  const malformed: string[] = [];
  let n = 0;
  let checked = 0;
  let header = false;
  for await (const text of lines(bundleChunks)) {
    n++;
    if (!text.trim()) continue;
    let entry: unknown;
    try {
      entry = JSON.parse(text);
    } catch {
      malformed.push(`line ${n} is not JSON`);
      continue;
    }
    if (n === 1) {
      header = (entry as { bundle?: unknown } | null)?.bundle === MANIFEST_BUNDLE_HEADER.bundle;
      if (header) continue;
    }
    const {
      renderHash,
      canonical,
      expired: tomb,
    } = (entry ?? {}) as {
      renderHash?: unknown;
      canonical?: unknown;
      expired?: { seq?: unknown } | null;
    };
    if (typeof renderHash === 'string' && canonical === undefined && tomb && typeof tomb === 'object') {
      if (states.expired.has(renderHash) && !wanted.has(renderHash)) expired++;
      else unproven.push({ renderHash, seq: typeof tomb.seq === 'number' ? tomb.seq : null });
      continue;
    }
    if (typeof renderHash !== 'string' || typeof canonical !== 'string') {
      malformed.push(`line ${n} is not a manifest entry`);
      continue;
    }
    checked++;
    if (hashOf(canonical) !== renderHash) mismatched.push(renderHash);
    else found.add(renderHash);
  }
  if (!header) malformed.unshift('the bundle does not start with its header line');
  const missing = [...wanted].filter((h) => !found.has(h) && !mismatched.includes(h));
  return {
    ok: missing.length === 0 && mismatched.length === 0 && malformed.length === 0 && unproven.length === 0,
    checked,
    referenced: wanted.size,
    missing,
    mismatched,
    malformed,
    expired,
    unproven,
  };
}

/** The verdict in lines, as the CLI prints it. */
export function describeBundle(r: BundleCheck): string[] {
  const out = [
    r.ok
      ? `manifests OK: ${r.checked} checked against their render hashes; all ${r.referenced} the export's releases kept are present`
      : `manifests BROKEN: ${r.checked} checked, ${r.referenced} kept according to the export`,
  ];
  if (r.expired)
    out.push(`  expired under retention: ${r.expired} (each expiry is a record of this export; their hashes stay)`);
  for (const u of r.unproven)
    out.push(
      `  unproven: ${u.renderHash} is a tombstone, but this export holds no expiry of it` +
        `${u.seq !== null ? ` (the bundle names record #${u.seq}: export a range that holds it)` : ''}`,
    );
  for (const h of r.mismatched) out.push(`  edited: the manifest of ${h} does not hash to it`);
  for (const h of r.missing) out.push(`  missing: ${h} (a release record says it was kept)`);
  for (const m of r.malformed) out.push(`  malformed: ${m}`);
  return out;
}

/**
 * The bundle of an export with the same filter and reader: every manifest the visible release records say was
 * kept, once per render hash, newest records first, with its bytes as stored (unchecked: the offline check
 * judges them, so an edited row shows there).
 */
export async function* manifestBundleChunks(
  store: EvidenceStore,
  manifests: ManifestStore,
  filter: EvidenceQuery,
  visible: ((e: { cluster: string | null; env: string | null }) => boolean) | undefined,
  batchSize = 1000,
): AsyncGenerator<string> {
  yield bundleHeaderLine();
  const seen = new Set<string>();
  let before: number | undefined;
  for (;;) {
    const batch = await store.list({
      ...filter,
      type: 'release.render',
      ...(before !== undefined ? { beforeSeq: before } : {}),
      limit: batchSize,
    });
    for (const e of batch) {
      before = e.seq;
      if (visible && !visible({ cluster: e.cluster ?? null, env: e.env ?? null })) continue;
      const h = e.data.renderHash;
      if (typeof h !== 'string' || seen.has(h) || (e.data.manifest !== 'stored' && e.data.manifest !== 'present'))
        continue;
      seen.add(h);
      const raw = await manifests.raw(h);
      if (raw !== null) yield bundleLine(h, raw);
      else {
        const at = await manifests.expiredAt(h);
        if (at) yield tombstoneLine(h, { at, seq: await expirySeq(store, h) });
      }
    }
    if (batch.length < batchSize) return;
  }
}

/** the outcome record of the expiry that named this hash (newest), or null when the chain has none */
async function expirySeq(store: EvidenceStore, renderHash: string): Promise<number | null> {
  const found = await store.list({ type: 'action.completed', text: renderHash, limit: 20 });
  return found.find((e) => expiredBy(e).includes(renderHash))?.seq ?? null;
}
