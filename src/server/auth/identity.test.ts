// Who is the same person for the two-person rule: the same person (linked identities) or the same identity;
// names of different issuers never make one person; rows stored before people were kept compare as then.
import { describe, expect, it } from 'vitest';
import { identityOf, samePerson, type Identity } from './identity.ts';
import { parseGrant } from '../../domain/access.ts';
import type { Principal } from './session-types.ts';

const dev: Principal = { name: 'dev', source: 'local', groups: [], grants: [parseGrant('developer@prod/prod')] };

const IDP = 'https://login.example.com';
const local = (name: string, id: string, person = `console:local#${id}`): Identity => ({
  issuer: 'console:local',
  subject: id,
  name,
  person,
});
const sso = (sub: string, person = `${IDP}#${sub}`): Identity => ({
  issuer: IDP,
  subject: sub,
  name: `oidc:${sub}`,
  person,
});

describe('who is the same person', () => {
  it.each<[string, Identity, Identity, boolean]>([
    ['one account', local('alice', 'a1'), local('alice', 'a1'), true],
    ['an account renamed (its id and person stay)', local('alice', 'a1'), local('alice.smith', 'a1'), true],
    ['two accounts', local('alice', 'a1'), local('bob', 'b1'), false],
    // each replica may hold its own auth.json: one local name is one person
    ["two replicas' accounts of one name", local('admin', 'r1'), local('admin', 'r2'), true],
    // names never make a person across issuers: local alice and SSO alice are two people unless linked
    ['local alice and unlinked SSO alice', local('alice', 'a1'), sso('alice'), false],
    ['local alice and SSO alice linked by an admin', local('alice', 'a1'), sso('alice', 'console:local#a1'), true],
    [
      'an account with an email and the SSO identity that verified it',
      local('carol', 'c1', 'email:carol@example.com'),
      sso('c-7', 'email:carol@example.com'),
      true,
    ],
    ['two SSO identities of one issuer', sso('x'), sso('y'), false],
    ['one SSO identity under two names', sso('x'), { ...sso('x'), name: 'oidc:renamed' }, true],
    // rows from before (issuer console/oidc, no person) are compared as then: by the name without its prefix
    [
      'a stored legacy local requester and SSO alice',
      { issuer: 'console', subject: 'alice', name: 'alice' },
      sso('alice'),
      true,
    ],
    [
      'a stored legacy SSO requester and local alice',
      { issuer: 'oidc', subject: 'oidc:alice', name: 'oidc:alice' },
      local('alice', 'a1'),
      true,
    ],
    [
      'a stored legacy local requester and local bob',
      { issuer: 'console', subject: 'alice', name: 'alice' },
      local('bob', 'b1'),
      false,
    ],
  ])('%s → %s', (_what, a, b, same) => {
    expect(samePerson(a, b)).toBe(same);
    expect(samePerson(b, a)).toBe(same);
  });

  it('a session names its identity and person; one without them (test fixtures) is a local account by its name', () => {
    expect(identityOf(dev)).toEqual({
      issuer: 'console:local',
      subject: 'dev',
      name: 'dev',
      person: 'console:local#dev',
    });
    expect(
      identityOf({ ...dev, name: 'oidc:x', source: 'oidc', issuer: IDP, subject: 'x', person: 'email:x@example.com' }),
    ).toEqual({ issuer: IDP, subject: 'x', name: 'oidc:x', person: 'email:x@example.com' });
  });
});
