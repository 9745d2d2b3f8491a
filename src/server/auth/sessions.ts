// Server-side sessions. The browser holds a random id in an httpOnly cookie;
// the server keeps only its SHA-256, so a leaked store cannot be replayed.
// Idle and absolute expiry; revoking a session ends its event streams.
import { createHash, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { StateBus } from '../store/state-bus.ts';
import type { Principal, Session, SessionBackend } from './session-types.ts';

export type { Principal, Session, SessionBackend };

const hash = (id: string) => createHash('sha256').update(id).digest('base64url');

/** what a session store with a database needs; see session-backend.ts */
export interface SessionSharing {
  backend: SessionBackend;
  /** tells the other replicas a session ended (their streams of it end too) */
  bus?: StateBus | undefined;
  log?: { warn(o: object, m: string): void } | undefined;
  /**
   * How long this process trusts its copy of a session before reading the row again. 0 (several replicas on
   * PostgreSQL): every request reads the row, so a sign-out that returned has ended the session on every
   * replica, whether or not its notification has arrived yet. Default 30 s (one process: nobody else ends it).
   */
  recheckMs?: number | undefined;
}

/** a database copy is read again after this long by default (another replica may have ended or used it) */
const RECHECK_MS = 30_000;
/** how long an ended session's key is remembered (longer than any database read takes) */
const TOMBSTONE_MS = 5 * 60_000;
/** lastSeen is written to the database at most this often per session */
const TOUCH_MS = 60_000;

interface Entry extends Session {
  /** when this process last read or wrote the database row */
  checkedAt: number;
  /** the lastSeen the database holds (as far as this process knows) */
  persistedSeen: number;
}

export class SessionStore extends EventEmitter<{ revoked: [string] }> {
  private readonly byKey = new Map<string, Entry>();
  /** sessions ended here or announced ended: a database read that raced the end cannot bring one back */
  private readonly ended = new Map<string, number>();
  private sharing: SessionSharing | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  /** when "the store did not answer" was last logged */
  private warnedAt = -Infinity;
  /**
   * Re-checks a session's user on every use (and on every stream heartbeat): a removed account ends its
   * sessions at once, and changed grants apply at once. False → the session is revoked.
   */
  validator: ((s: Session) => boolean) | undefined;

  constructor(
    readonly idleMs: number,
    readonly absoluteMs: number,
  ) {
    super();
  }

  /**
   * Keeps sessions in the database too (every replica finds every session; a restart signs nobody out) and
   * hears other replicas' sign-outs on the bus.
   */
  share(sharing: SessionSharing): () => void {
    this.sharing = sharing;
    const off = sharing.bus?.on((e) => {
      if (e.change.kind === 'session') this.forget(e.change.key);
      // a replica that was deaf for a while reads every session it holds again at the next use
      if (e.change.kind === 'resync') for (const s of this.byKey.values()) s.checkedAt = 0;
    });
    const sweep = () => {
      const now = Date.now();
      // this process's copies of expired sessions, and old tombstones
      for (const [key, e] of this.byKey)
        if (this.expired(e, now) && now - e.createdAt > this.absoluteMs) this.byKey.delete(key);
      for (const [key, at] of this.ended) if (now - at > TOMBSTONE_MS) this.ended.delete(key);
      sharing.backend
        .sweep(now - this.idleMs, now - this.absoluteMs)
        .catch((e: unknown) => sharing.log?.warn({ err: String(e) }, 'sessions: sweeping expired sessions failed'));
    };
    sweep();
    this.sweeper = setInterval(sweep, 10 * 60_000);
    this.sweeper.unref();
    return () => {
      off?.();
      clearInterval(this.sweeper);
      this.sharing = undefined;
    };
  }

  create(user: Principal, now = Date.now()): { id: string; session: Session } {
    const id = randomBytes(32).toString('base64url');
    const session: Entry = {
      key: hash(id),
      user,
      csrf: randomBytes(24).toString('base64url'),
      createdAt: now,
      lastSeen: now,
      checkedAt: now,
      persistedSeen: now,
    };
    this.byKey.set(session.key, session);
    return { id, session };
  }

  /** Starts a session and, when shared, writes it to the database before the browser gets its cookie. */
  async start(user: Principal, now = Date.now()): Promise<{ id: string; session: Session }> {
    const started = this.create(user, now);
    if (this.sharing) {
      try {
        await this.sharing.backend.save(started.session);
      } catch (e) {
        this.byKey.delete(started.session.key);
        throw e;
      }
    }
    return started;
  }

  /** The live session for a cookie value (touching it), or undefined when unknown or expired (this process). */
  get(id: string | undefined, now = Date.now()): Session | undefined {
    if (!id || id.length > 100) return undefined;
    const s = this.byKey.get(hash(id));
    if (!s) return undefined;
    if (this.expired(s, now) || !this.valid(s)) {
      this.revokeKey(s.key);
      return undefined;
    }
    s.lastSeen = now;
    return s;
  }

  /**
   * The live session for a cookie value: this process's copy, or the database's (a session another replica
   * started), read again every 30 s so an end elsewhere applies here even when a notification was lost.
   */
  async find(id: string | undefined, now = Date.now()): Promise<Session | undefined> {
    const sharing = this.sharing;
    if (!sharing) return this.get(id, now);
    if (!id || id.length > 100) return undefined;
    const key = hash(id);
    let s = this.byKey.get(key);
    if (!s || now - s.checkedAt >= (sharing.recheckMs ?? RECHECK_MS) || this.expired(s, now)) {
      let row: Session | undefined;
      try {
        row = await sharing.backend.load(key);
      } catch (e) {
        // the store does not answer: a session this process holds, still valid by its own copy, is served
        // (reads stay up during a database outage); one it does not hold cannot be checked (503 upstream)
        if (this.ended.has(key)) return undefined;
        if (!s || this.expired(s, now)) throw e;
        // once per 30 s at most (with every request reading its row, an outage would log each one)
        if (now - this.warnedAt >= RECHECK_MS || now < this.warnedAt) {
          this.warnedAt = now;
          sharing.log?.warn({ err: String(e) }, "sessions: the store did not answer; using this replica's copy");
        }
        s.lastSeen = now;
        return this.valid(s) ? s : undefined;
      }
      if (this.ended.has(key)) return undefined;
      if (!row) {
        if (s) this.forget(key);
        return undefined;
      }
      const lastSeen = Math.max(row.lastSeen, s?.lastSeen ?? 0);
      s = { ...row, user: s?.user ?? row.user, lastSeen, checkedAt: now, persistedSeen: row.lastSeen };
      this.byKey.set(key, s);
    }
    if (this.expired(s, now) || !this.valid(s)) {
      this.revokeKey(key);
      return undefined;
    }
    s.lastSeen = now;
    if (now - s.persistedSeen > TOUCH_MS) {
      s.persistedSeen = now;
      sharing.backend
        .touch(key, now)
        .catch((e: unknown) => sharing.log?.warn({ err: String(e) }, 'sessions: recording a use failed'));
    }
    return s;
  }

  /** Still valid, without touching it (for long-lived streams). */
  alive(key: string, now = Date.now()): boolean {
    const s = this.byKey.get(key);
    if (!s) return false;
    // a stream outlives many requests: its session is read from the database again now and then (an end
    // announced while this replica was deaf applies within RECHECK_MS)
    if (this.sharing && now - s.checkedAt > RECHECK_MS) {
      s.checkedAt = now;
      void this.refresh(key, now);
    }
    if (!this.expired(s, now) && this.valid(s)) return true;
    if (this.sharing && this.valid(s) && now - s.createdAt <= this.absoluteMs) {
      // idle here, maybe busy on another replica: the database decides (next heartbeat)
      s.checkedAt = 0;
      void this.refresh(key, now);
      return true;
    }
    this.revokeKey(key);
    return false;
  }

  private async refresh(key: string, now: number): Promise<void> {
    const sharing = this.sharing;
    if (!sharing) return;
    try {
      const row = await sharing.backend.load(key);
      const s = this.byKey.get(key);
      if (!s) return;
      if (!row) return this.forget(key);
      s.lastSeen = Math.max(s.lastSeen, row.lastSeen);
      s.persistedSeen = row.lastSeen;
      s.checkedAt = now;
      if (this.expired(s, now)) this.revokeKey(key);
    } catch (e) {
      sharing.log?.warn({ err: String(e) }, 'sessions: reading a session failed');
    }
  }

  private expired(s: Session, now: number): boolean {
    return now - s.lastSeen > this.idleMs || now - s.createdAt > this.absoluteMs;
  }

  private valid(s: Session): boolean {
    try {
      return this.validator ? this.validator(s) : true;
    } catch {
      return false;
    }
  }

  /**
   * Ends a session everywhere (a sign-out): this process at once, the other replicas by the bus, the database
   * row before it returns — or, when the store cannot take it now, by retries until it does.
   */
  async end(key: string): Promise<void> {
    const sharing = this.sharing;
    // ended here at once (a failing store never keeps a session alive on this replica), then the row
    this.forget(key);
    sharing?.bus?.publish({ kind: 'session', key });
    if (!sharing) return;
    try {
      await sharing.backend.remove(key);
    } catch (e) {
      // the store is down: the removal is retried until it is done (the other replicas cannot load the
      // session meanwhile either, and their copies are read again within 30 s of it coming back)
      sharing.log?.warn({ err: String(e) }, 'sessions: removing a session failed; retrying');
      this.removeLater(key, 1000);
    }
  }

  private removeLater(key: string, waitMs: number): void {
    const t = setTimeout(() => {
      const sharing = this.sharing;
      if (!sharing) return;
      sharing.backend.remove(key).then(
        () => sharing.bus?.publish({ kind: 'session', key }),
        () => this.removeLater(key, Math.min(waitMs * 2, 30_000)),
      );
    }, waitMs);
    t.unref();
  }

  /** Ends a session everywhere, without waiting for the database (expiry, a removed account). */
  revokeKey(key: string): void {
    this.forget(key);
    const sharing = this.sharing;
    if (!sharing) return;
    sharing.backend
      .remove(key)
      .catch((e: unknown) => sharing.log?.warn({ err: String(e) }, 'sessions: removing a session failed'));
    sharing.bus?.publish({ kind: 'session', key });
  }

  /** Ends this process's copy (another replica ended the session). */
  private forget(key: string): void {
    if (this.sharing) this.ended.set(key, Date.now());
    if (this.byKey.delete(key)) this.emit('revoked', key);
  }

  revokeUser(source: Principal['source'], name: string): void {
    for (const s of [...this.byKey.values()])
      if (s.user.source === source && s.user.name === name) this.revokeKey(s.key);
    const sharing = this.sharing;
    if (!sharing) return;
    sharing.backend.removeUser(source, name).then(
      (keys) => {
        for (const key of keys) sharing.bus?.publish({ kind: 'session', key });
      },
      (e: unknown) => sharing.log?.warn({ err: String(e) }, "sessions: ending a user's sessions failed"),
    );
  }

  /** Ends every session of a user, everywhere, before it returns (a password change). */
  async revokeUserEverywhere(source: Principal['source'], name: string): Promise<void> {
    for (const s of [...this.byKey.values()]) if (s.user.source === source && s.user.name === name) this.forget(s.key);
    const sharing = this.sharing;
    if (!sharing) return;
    for (const key of await sharing.backend.removeUser(source, name)) sharing.bus?.publish({ kind: 'session', key });
  }

  get size(): number {
    return this.byKey.size;
  }
}
