// Who is the same person for the two-person rule: the same identity, or the same name through another provider.
import { describe, expect, it } from 'vitest';
import { identityOf, samePerson } from './identity.ts';
import { dev } from './test-fixture.ts';

describe('who is the same person', () => {
  it.each([
    [
      { issuer: 'console', subject: 'alice', name: 'alice' },
      { issuer: 'console', subject: 'alice', name: 'alice' },
      true,
    ],
    [
      { issuer: 'console', subject: 'alice', name: 'alice' },
      { issuer: 'https://idp', subject: '123', name: 'oidc:alice' },
      true,
    ],
    [
      { issuer: 'https://idp', subject: '123', name: 'oidc:a' },
      { issuer: 'https://idp', subject: '123', name: 'oidc:b' },
      true,
    ],
    [{ issuer: 'console', subject: 'alice', name: 'alice' }, { issuer: 'console', subject: 'bob', name: 'bob' }, false],
  ])('%o vs %o → %s', (a, b, same) => expect(samePerson(a, b)).toBe(same));
  it('local accounts are issued by the console', () =>
    expect(identityOf(dev)).toEqual({ issuer: 'console', subject: 'dev', name: 'dev' }));
});
