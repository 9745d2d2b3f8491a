// Sessions in the store's database (table `sessions`, migration 5): any replica finds a session another one
// started, and a restarted console keeps everyone signed in. Only the cookie's SHA-256 is stored.
import { all, dialectOf, run, type Dialect } from '../store/dialect.ts';
import type { EvidenceStore } from '../evidence/index.ts';
import type { Principal, Session, SessionBackend } from './session-types.ts';

export type { SessionBackend };

interface SessionRow {
  key: string;
  doc: string;
  created_at: number | string;
  last_seen: number | string;
}

export class DbSessionBackend implements SessionBackend {
  private readonly db: Dialect;

  constructor(store: EvidenceStore) {
    this.db = dialectOf(store);
  }

  async load(key: string): Promise<Session | undefined> {
    const rows = (await this.db.exec(
      all('SELECT key, doc, created_at, last_seen FROM sessions WHERE key = ?', [key]),
    )) as SessionRow[];
    const r = rows[0];
    if (!r) return undefined;
    const doc = JSON.parse(r.doc) as { user: Principal; csrf: string };
    // a session an older version stored does not say which identity (issuer, subject) and person it is: it is
    // not served (the browser signs in again, once)
    if (!doc.user.issuer || !doc.user.subject || !doc.user.person) return undefined;
    return {
      key: r.key,
      user: doc.user,
      csrf: doc.csrf,
      createdAt: Number(r.created_at),
      lastSeen: Number(r.last_seen),
    };
  }

  async save(s: Session): Promise<void> {
    await this.db.exec(
      run('INSERT INTO sessions (key, user_source, user_name, doc, created_at, last_seen) VALUES (?, ?, ?, ?, ?, ?)', [
        s.key,
        s.user.source,
        s.user.name,
        JSON.stringify({ user: s.user, csrf: s.csrf }),
        s.createdAt,
        s.lastSeen,
      ]),
    );
  }

  async touch(key: string, lastSeen: number): Promise<void> {
    await this.db.exec(
      run('UPDATE sessions SET last_seen = ? WHERE key = ? AND last_seen < ?', [lastSeen, key, lastSeen]),
    );
  }

  async remove(key: string): Promise<void> {
    await this.db.exec(run('DELETE FROM sessions WHERE key = ?', [key]));
  }

  async removeUser(source: Principal['source'], name: string): Promise<string[]> {
    return this.db.tx(function* () {
      const rows = (yield all('SELECT key FROM sessions WHERE user_source = ? AND user_name = ?', [
        source,
        name,
      ])) as Array<{ key: string }>;
      yield run('DELETE FROM sessions WHERE user_source = ? AND user_name = ?', [source, name]);
      return rows.map((r) => r.key);
    });
  }

  async sweep(idleBefore: number, createdBefore: number): Promise<number> {
    return (await this.db.exec(
      run('DELETE FROM sessions WHERE last_seen < ? OR created_at < ?', [idleBefore, createdBefore]),
    )) as number;
  }
}
