// Who is signed in and what a session holds: the types the session store and its database backend share
// (apart, so that neither imports the other).
import type { Grant } from '../../domain/access.ts';

export interface Principal {
  name: string;
  source: 'local' | 'oidc';
  /**
   * Who issued the identity: `console:local` for a local account, the ID token's `iss` for OIDC. Set on every
   * session this version starts (a session stored by an older version, without it, is not loaded: sign in again).
   */
  issuer?: string;
  /** the identity at its issuer: a local account's stable id (survives renames), the ID token's `sub` */
  subject?: string;
  /**
   * The person behind the identity (accounts.ts personOf): local and SSO identities linked by a verified email
   * or by an admin in `auth.json` share it. Every "not the same person" rule compares this, never names.
   */
  person?: string;
  /** OIDC: the email address the issuer verified (`email_verified: true`), which may link this identity */
  email?: string;
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

export interface SessionBackend {
  load(key: string): Promise<Session | undefined>;
  save(s: Session): Promise<void>;
  touch(key: string, lastSeen: number): Promise<void>;
  remove(key: string): Promise<void>;
  /** removes every session of a user; returns their keys */
  removeUser(source: Principal['source'], name: string): Promise<string[]>;
  /** removes sessions idle or older than the limits; returns how many */
  sweep(idleBefore: number, createdBefore: number): Promise<number>;
}
