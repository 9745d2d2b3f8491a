import { describe, expect, it } from 'vitest';
import { ACTIONS, can, formatGrant, parseGrant, ROLES, whyNot, whyNotOnApp, type Grant } from './access.ts';

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
      'You need the developer or oncall role on nonprod/dev to reconcile this app',
    );
    expect(whyNot([g('developer')], 'app.reconcile', { cluster: 'nonprod', env: 'dev' })).toBeUndefined();
  });
  it('says it as a person would: any role reads an app', () => {
    expect(whyNot([g('viewer@prod')], 'app.read', { cluster: 'nonprod', env: 'dev' })).toBe(
      'You need a role on nonprod/dev to see this app',
    );
    expect(whyNot([], 'evidence.read', { env: 'dev' })).toBe(
      "You need the reviewer, oncall or auditor role in dev to see this app's evidence",
    );
  });
  it('names the cluster of a refused app but not its environment', () => {
    expect(whyNotOnApp('app.read', 'prod')).toBe("You need a role on this app's environment in prod to see this app");
    expect(whyNotOnApp('app.reconcile', '*')).toBe('You need the developer or oncall role to reconcile this app');
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
