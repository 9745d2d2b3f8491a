import { describe, expect, it } from 'vitest';
import { ACTIONS, can, formatGrant, parseGrant, ROLES, whyNot, type Grant } from './access.ts';

const g = (s: string): Grant => parseGrant(s);

describe('can: roles per cluster and environment', () => {
  it.each([
    // grant, action, scope, allowed
    ['viewer', 'app.read', { cluster: 'prod', env: 'prod' }, true],
    ['viewer', 'app.reconcile', { cluster: 'prod', env: 'prod' }, false],
    ['viewer', 'evidence.read', {}, false],
    ['developer', 'app.reconcile', { cluster: 'nonprod', env: 'dev' }, true],
    ['developer', 'prune.approve', { cluster: 'nonprod', env: 'dev' }, false],
    ['reviewer@nonprod/dev', 'prune.approve', { cluster: 'nonprod', env: 'dev' }, true],
    ['reviewer@nonprod/dev', 'prune.approve', { cluster: 'prod', env: 'prod' }, false],
    ['reviewer@nonprod/dev', 'prune.approve', { cluster: 'nonprod', env: 'staging' }, false],
    ['reviewer@nonprod/dev', 'app.read', { cluster: 'nonprod', env: 'staging' }, false],
    ['reviewer@nonprod', 'app.read', { cluster: 'nonprod', env: 'staging' }, true],
    ['reviewer@nonprod/dev', 'app.read', { cluster: 'nonprod' }, true],
    ['reviewer@nonprod/dev', 'app.read', {}, true],
    ['oncall@prod/prod', 'freeze.toggle', { cluster: 'prod', env: 'prod' }, true],
    ['oncall@prod/prod', 'freeze.toggle', { cluster: 'nonprod', env: 'prod' }, false],
    ['auditor', 'evidence.verify', {}, true],
    ['auditor', 'app.reconcile', { cluster: 'nonprod', env: 'dev' }, false],
    ['admin', 'users.manage', {}, true],
    ['admin@nonprod', 'users.manage', { cluster: 'prod' }, false],
    ['developer@nonprod/dev,staging', 'app.reconcile', { cluster: 'nonprod', env: 'staging' }, true],
  ] as const)('%s → %s %j = %s', (grant, action, scope, allowed) => {
    expect(can([g(grant)], action, scope)).toBe(allowed);
  });

  it('no grants, nothing allowed', () => {
    for (const a of Object.keys(ACTIONS)) expect(can([], a as keyof typeof ACTIONS)).toBe(false);
  });

  it('admin can do every action and every role can read apps', () => {
    for (const roles of Object.values(ACTIONS)) expect(roles).toContain('admin');
    for (const r of ROLES) expect(ACTIONS['app.read']).toContain(r);
  });
});

describe('whyNot', () => {
  it('names the roles and the place', () => {
    expect(whyNot([g('viewer')], 'app.reconcile', { cluster: 'nonprod', env: 'dev' })).toBe(
      'needs the developer or oncall role on nonprod/dev',
    );
    expect(whyNot([g('developer')], 'app.reconcile', { cluster: 'nonprod', env: 'dev' })).toBeUndefined();
  });
});

describe('grants in words', () => {
  it('round-trips', () => {
    for (const s of ['viewer', 'reviewer@nonprod/dev', 'oncall@prod/*', 'developer@a,b/dev,staging']) {
      const parsed = parseGrant(s);
      expect(parseGrant(formatGrant(parsed))).toEqual(parsed);
    }
    expect(formatGrant(g('admin@*/*'))).toBe('admin');
  });
  it('refuses unknown roles and junk', () => {
    expect(() => parseGrant('root')).toThrow(/invalid grant "root"/);
    expect(() => parseGrant('viewer@')).toThrow();
    expect(() => parseGrant('viewer @prod')).toThrow();
  });
});
