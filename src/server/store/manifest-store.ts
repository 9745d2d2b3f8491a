// Manifests per release (issue 28): the masked render of every recorded release, content-addressed by its render
// hash (one copy per hash however many releases, apps or environments share it), gzip-compressed. What is stored
// is exactly the bytes the render hash is taken over (diff/render.ts renderCanonical), so a read checks them
// against the key: a stored manifest edited in the database is refused, never shown.
// Retention (CONSOLE_MANIFEST_RETENTION_DAYS, releases/manifest-retention.ts): a row whose render was last used
// longer ago than the setting loses its body and keeps its key, sizes and `expired_at` (a tombstone); the
// expiry is recorded in the chain first (`release.manifests-expired`), so an export proves which are gone and
// why. A render recorded again after it expired is stored again.
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { all, dialectOf, run, type Dialect } from './dialect.ts';

type Obj = Record<string, unknown>;

export class ManifestTampered extends Error {
  constructor(readonly renderHash: string) {
    super(`the stored manifest of ${renderHash} does not match its hash: it was changed after it was recorded`);
  }
}

export class ManifestExpired extends Error {
  constructor(
    readonly renderHash: string,
    readonly expiredAt: string,
  ) {
    super(
      `the manifest of ${renderHash} expired under the retention setting on ${expiredAt} (its hash stays in the chain)`,
    );
  }
}

export interface StoredManifest {
  renderHash: string;
  objects: Obj[];
  bytes: number;
  storedBytes: number;
  storedAt: string;
}

const hashOf = (canonical: string) => `sha256:${createHash('sha256').update(canonical).digest('hex')}`;

export class ManifestStore {
  private readonly db: Dialect;
  constructor(store: { readonly kind: 'sqlite' | 'postgres' }) {
    this.db = dialectOf(store);
  }

  /**
   * Stores the canonical masked render under its hash (once); 'present' when that hash is stored already (its
   * last use is now). A tombstone (expired) is filled again: 'stored'.
   */
  async put(renderHash: string, canonical: string, objects: number): Promise<'stored' | 'present'> {
    if (hashOf(canonical) !== renderHash) throw new Error(`the render does not hash to ${renderHash}`);
    const body = gzipSync(canonical, { level: 6 }).toString('base64');
    const now = new Date().toISOString();
    const n = (await this.db.exec(
      run(
        `INSERT INTO release_manifests (render_hash, objects, bytes, stored_bytes, stored_at, body, last_used_at)
         VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (render_hash) DO NOTHING`,
        [renderHash, objects, Buffer.byteLength(canonical), body.length, now, body, now],
      ),
    )) as number;
    if (n > 0) return 'stored';
    const refilled = (await this.db.exec(
      run(
        `UPDATE release_manifests SET body = ?, stored_bytes = ?, stored_at = ?, last_used_at = ?, expired_at = NULL
         WHERE render_hash = ? AND expired_at IS NOT NULL`,
        [body, body.length, now, now, renderHash],
      ),
    )) as number;
    if (refilled > 0) return 'stored';
    await this.touch(renderHash);
    return 'present';
  }

  /** A render recorded again: its last use is now. False when it is not stored (absent, or expired). */
  async touch(renderHash: string): Promise<boolean> {
    const n = (await this.db.exec(
      run('UPDATE release_manifests SET last_used_at = ? WHERE render_hash = ? AND expired_at IS NULL', [
        new Date().toISOString(),
        renderHash,
      ]),
    )) as number;
    return n > 0;
  }

  /** stored and not expired */
  async has(renderHash: string): Promise<boolean> {
    const rows = (await this.db.exec(
      all('SELECT 1 AS x FROM release_manifests WHERE render_hash = ? AND expired_at IS NULL', [renderHash]),
    )) as unknown[];
    return rows.length > 0;
  }

  /** When a manifest expired (its tombstone), or null when it did not (stored, or never kept). */
  async expiredAt(renderHash: string): Promise<string | null> {
    const rows = (await this.db.exec(
      all('SELECT expired_at FROM release_manifests WHERE render_hash = ? AND expired_at IS NOT NULL', [renderHash]),
    )) as Array<{ expired_at: string }>;
    return rows[0]?.expired_at ?? null;
  }

  /** Render hashes stored and last used before `cutoff` (ISO), oldest use first: what retention may expire. */
  async expirable(cutoff: string, limit = 1000): Promise<string[]> {
    const rows = (await this.db.exec(
      all(
        `SELECT render_hash FROM release_manifests WHERE expired_at IS NULL AND COALESCE(last_used_at, stored_at) < ?
         ORDER BY COALESCE(last_used_at, stored_at), render_hash LIMIT ?`,
        [cutoff, limit],
      ),
    )) as Array<{ render_hash: string }>;
    return rows.map((r) => r.render_hash);
  }

  /**
   * Expires these manifests (body gone, key and sizes kept) when they are still unused since `cutoff` (a render
   * recorded meanwhile keeps its manifest). The hashes actually expired.
   */
  async expire(renderHashes: readonly string[], cutoff: string, at: string): Promise<string[]> {
    const done: string[] = [];
    for (const h of renderHashes) {
      const n = (await this.db.exec(
        run(
          `UPDATE release_manifests SET body = '', expired_at = ?
           WHERE render_hash = ? AND expired_at IS NULL AND COALESCE(last_used_at, stored_at) < ?`,
          [at, h, cutoff],
        ),
      )) as number;
      if (n > 0) done.push(h);
    }
    return done;
  }

  /** The stored canonical JSON as it is in the database, unchecked (the export's bundle: the offline check judges it). */
  async raw(renderHash: string): Promise<string | null> {
    const rows = (await this.db.exec(
      all('SELECT body FROM release_manifests WHERE render_hash = ? AND expired_at IS NULL', [renderHash]),
    )) as Array<{ body: string }>;
    const r = rows[0];
    if (!r) return null;
    try {
      return gunzipSync(Buffer.from(r.body, 'base64')).toString('utf8');
    } catch {
      return r.body; // not gzip: given as it is, and it will not hash to its key
    }
  }

  /**
   * The stored render, checked against its hash (ManifestTampered when it does not match, ManifestExpired when
   * retention took it); null when absent.
   */
  async get(renderHash: string): Promise<StoredManifest | null> {
    const rows = (await this.db.exec(
      all('SELECT * FROM release_manifests WHERE render_hash = ?', [renderHash]),
    )) as Array<{
      objects: number | string;
      bytes: number | string;
      stored_bytes: number | string;
      stored_at: string;
      body: string;
      expired_at: string | null;
    }>;
    const r = rows[0];
    if (!r) return null;
    if (r.expired_at) throw new ManifestExpired(renderHash, r.expired_at);
    let canonical: string;
    try {
      canonical = gunzipSync(Buffer.from(r.body, 'base64')).toString('utf8');
    } catch {
      throw new ManifestTampered(renderHash);
    }
    if (hashOf(canonical) !== renderHash) throw new ManifestTampered(renderHash);
    return {
      renderHash,
      objects: JSON.parse(canonical) as Obj[],
      bytes: Number(r.bytes),
      storedBytes: Number(r.stored_bytes),
      storedAt: r.stored_at,
    };
  }

  /**
   * Every stored manifest checked against its hash, in pages (evidence verify): the hashes that do not match; and
   * every tombstone against `proven` (the hashes the chain's expiries name): one it does not name lost its body
   * behind the console's back.
   */
  async verify(
    pageSize = 200,
    proven: ReadonlySet<string> = new Set(),
  ): Promise<{ checked: number; tampered: string[]; expired: number; unproven: string[] }> {
    const tampered: string[] = [];
    const unproven: string[] = [];
    let checked = 0;
    let expired = 0;
    let after = '';
    for (;;) {
      const rows = (await this.db.exec(
        all(
          `SELECT render_hash, body, expired_at FROM release_manifests WHERE render_hash > ?
           ORDER BY render_hash LIMIT ?`,
          [after, pageSize],
        ),
      )) as Array<{ render_hash: string; body: string; expired_at: string | null }>;
      for (const r of rows) {
        if (r.expired_at) {
          if (proven.has(r.render_hash)) expired++;
          else if (unproven.length < 20) unproven.push(r.render_hash);
          continue;
        }
        checked++;
        let ok = false;
        try {
          ok = hashOf(gunzipSync(Buffer.from(r.body, 'base64')).toString('utf8')) === r.render_hash;
        } catch {
          ok = false;
        }
        if (!ok) tampered.push(r.render_hash);
      }
      if (rows.length < pageSize) return { checked, tampered, expired, unproven };
      after = rows[rows.length - 1]?.render_hash ?? after;
    }
  }

  /** how many manifests and how many bytes they take (docs/develop/benchmarks.md: size per 1,000 releases) */
  async stats(): Promise<{ manifests: number; bytes: number; storedBytes: number; expired: number }> {
    const rows = (await this.db.exec(
      all(
        `SELECT COUNT(*) AS n, COALESCE(SUM(bytes), 0) AS b, COALESCE(SUM(stored_bytes), 0) AS s
         FROM release_manifests WHERE expired_at IS NULL`,
      ),
    )) as Array<{ n: number | string; b: number | string; s: number | string }>;
    const gone = (await this.db.exec(
      all('SELECT COUNT(*) AS n FROM release_manifests WHERE expired_at IS NOT NULL'),
    )) as Array<{ n: number | string }>;
    return {
      manifests: Number(rows[0]?.n ?? 0),
      bytes: Number(rows[0]?.b ?? 0),
      storedBytes: Number(rows[0]?.s ?? 0),
      expired: Number(gone[0]?.n ?? 0),
    };
  }
}
