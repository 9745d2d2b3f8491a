// Who someone is for the two-person rule: an identity of a principal, and whether two identities are the same
// person (a requester never approves their own prune).
import type { Principal } from '../auth/index.ts';
import type { Identity } from './store.ts';

/** Who someone is, for "not the requester": the issuer and subject of the identity, and the console's name. */
export function identityOf(p: Principal): Identity {
  // OIDC principals may carry the ID token's issuer and subject; local accounts are issued by the console
  const x = p as Principal & { issuer?: string; subject?: string };
  return {
    issuer: x.issuer ?? (p.source === 'local' ? 'console' : 'oidc'),
    subject: x.subject ?? p.name,
    name: p.name,
  };
}

/**
 * The same person: the same identity, or the same name through another provider (a local account "alice"
 * and the OIDC user "oidc:alice" are treated as one person: refusing a real second person is the safe error).
 */
export function samePerson(a: Identity, b: Identity): boolean {
  const bare = (n: string) => n.toLowerCase().replace(/^[a-z0-9-]*:/, '');
  return (a.issuer === b.issuer && a.subject === b.subject) || bare(a.name) === bare(b.name);
}
