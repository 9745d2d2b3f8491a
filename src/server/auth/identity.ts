// Who someone is for the two-person rule: the identity (issuer + subject) and the person behind it
// (auth/accounts.ts personOf: identities linked by a verified email or by an admin are one person), and whether
// two of them are the same person (a requester never approves their own prune or break-glass, nobody decides
// twice).
import { LOCAL_ISSUER as LOCAL } from './accounts.ts';
import type { Principal } from './session-types.ts';

export interface Identity {
  /** who issued the identity: `console:local` for local accounts, the OIDC issuer otherwise */
  issuer: string;
  subject: string;
  /** the console's name for the person */
  name: string;
  /** the person behind the identity (absent in rows stored before people were kept) */
  person?: string;
}

/** The issuers rows stored before people were kept carry (local accounts: `console`; SSO: `oidc`). */
const LEGACY = new Set(['console', 'oidc']);

/** Who someone is, for "not the same person": issuer, subject and person of the session, and its name. */
export function identityOf(p: Principal): Identity {
  const issuer = p.issuer ?? (p.source === 'local' ? LOCAL : 'oidc');
  const subject = p.subject ?? p.name;
  return { issuer, subject, name: p.name, person: p.person ?? `${issuer}#${subject}` };
}

/**
 * The same person: the same person id (linked identities), or the same identity; two local accounts with the
 * same name are one person too (each replica may hold its own auth.json, with its own ids). Names of different
 * issuers never make a person: local `alice` and SSO `oidc:alice` are one person only when linked. Rows stored
 * before people were kept (issuer `console`/`oidc`, no person) are compared as then: by the name without its
 * prefix — refusing a real second person is the safe error.
 */
export function samePerson(a: Identity, b: Identity): boolean {
  if (a.person && b.person && a.person === b.person) return true;
  if (a.issuer === b.issuer && a.subject === b.subject) return true;
  const local = (x: Identity) => x.issuer === LOCAL || x.issuer === 'console';
  if (local(a) && local(b) && a.name === b.name) return true;
  if (LEGACY.has(a.issuer) || LEGACY.has(b.issuer)) {
    const bare = (n: string) => n.toLowerCase().replace(/^[a-z0-9-]*:/, '');
    return bare(a.name) === bare(b.name);
  }
  return false;
}
