// Server-side sessions. The browser holds a random id in an httpOnly cookie;
// the server keeps only its SHA-256, so a leaked store cannot be replayed.
// Idle and absolute expiry; revoking a session ends its event streams.
import { createHash, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Grant } from '../../domain/access.ts';

export interface Principal {
  name: string;
  source: 'local' | 'oidc';
  groups: string[];
  grants: Grant[];
  /** OIDC: the issuer's group names, mapped to grants again on every request */
  idpGroups?: string[];
  /** a first-start one-time password that must be replaced before anything else */
  mustChangePassword?: boolean;
}

export interface Session {
  key: string;
  user: Principal;
  csrf: string;
  createdAt: number;
  lastSeen: number;
}

const hash = (id: string) => createHash('sha256').update(id).digest('base64url');

export class SessionStore extends EventEmitter<{ revoked: [string] }> {
  private readonly byKey = new Map<string, Session>();
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

  create(user: Principal, now = Date.now()): { id: string; session: Session } {
    const id = randomBytes(32).toString('base64url');
    const session: Session = {
      key: hash(id),
      user,
      csrf: randomBytes(24).toString('base64url'),
      createdAt: now,
      lastSeen: now,
    };
    this.byKey.set(session.key, session);
    return { id, session };
  }

  /** The live session for a cookie value (touching it), or undefined when unknown or expired. */
  get(id: string | undefined, now = Date.now()): Session | undefined {
    if (!id || id.length > 100) return undefined;
    const s = this.byKey.get(hash(id));
    if (!s) return undefined;
    if (now - s.lastSeen > this.idleMs || now - s.createdAt > this.absoluteMs || !this.valid(s)) {
      this.revokeKey(s.key);
      return undefined;
    }
    s.lastSeen = now;
    return s;
  }

  /** Still valid, without touching it (for long-lived streams). */
  alive(key: string, now = Date.now()): boolean {
    const s = this.byKey.get(key);
    if (!s) return false;
    if (now - s.lastSeen <= this.idleMs && now - s.createdAt <= this.absoluteMs && this.valid(s)) return true;
    this.revokeKey(key);
    return false;
  }

  private valid(s: Session): boolean {
    try {
      return this.validator ? this.validator(s) : true;
    } catch {
      return false;
    }
  }

  revokeKey(key: string): void {
    if (this.byKey.delete(key)) this.emit('revoked', key);
  }

  revokeUser(source: Principal['source'], name: string): void {
    for (const s of [...this.byKey.values()])
      if (s.user.source === source && s.user.name === name) this.revokeKey(s.key);
  }

  get size(): number {
    return this.byKey.size;
  }
}
