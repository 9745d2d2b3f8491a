// The canary rule held from outside the console (issue 25): someone with kubectl and RBAC to patch Rollouts and
// Canaries in a governed namespace still cannot promote, abort, pause or resume a canary, nor skip a Flagger
// analysis — deploy/prune-admission-policy.yaml (gitops-console-rollout-control, gitops-console-flagger-control)
// denies it; other changes of the same objects pass. The console's own way (rollout.control, with a reason on
// record) passes the same policy: rollouts.test.ts and flagger.test.ts act through it.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl } from '../../sandbox/state.ts';

const CLUSTER = 'nonprod';
const NS = ['-n', 'staging'];
const intruder = `canary-hand-${randomBytes(3).toString('hex')}`;
const as = [`--as=${intruder}`, ...NS];
const guard = /canary control goes through the GitOps console/;

beforeAll(() => {
  kubectl(CLUSTER, [
    ...NS,
    ...['create', 'role', intruder, '--verb=get,patch,update'],
    '--resource=rollouts.argoproj.io,rollouts.argoproj.io/status,canaries.flagger.app',
  ]);
  kubectl(CLUSTER, [...NS, 'create', 'rolebinding', intruder, `--role=${intruder}`, `--user=${intruder}`]);
});
afterAll(() => {
  kubectl(CLUSTER, [...NS, 'delete', 'role,rolebinding', intruder, '--ignore-not-found']);
});

describe('canary control with kubectl, around the console', () => {
  it('RBAC would let them, the policy does not', () => {
    expect(
      kubectl(CLUSTER, [
        'auth',
        'can-i',
        'patch',
        'rollouts.argoproj.io/checkout',
        '--subresource=status',
        ...as,
      ]).trim(),
    ).toBe('yes');
    const status = (p: object) => [
      ...as,
      'patch',
      'rollout',
      'checkout',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify(p),
    ];
    // the plugin's abort, promote-full, skip of a step, and clearing the pause — each denied
    expect(() => kubectl(CLUSTER, status({ status: { abort: true } }))).toThrow(guard);
    expect(() => kubectl(CLUSTER, status({ status: { promoteFull: true } }))).toThrow(guard);
    expect(() => kubectl(CLUSTER, status({ status: { currentStepIndex: 99 } }))).toThrow(guard);
    // pause / resume
    expect(() =>
      kubectl(CLUSTER, [...as, 'patch', 'rollout', 'checkout', '--type=merge', '-p', '{"spec":{"paused":true}}']),
    ).toThrow(guard);
    // a Flagger canary: skip its analysis, suspend it
    for (const spec of [{ skipAnalysis: true }, { suspend: true }])
      expect(() =>
        kubectl(CLUSTER, [...as, 'patch', 'canary', 'payments', '--type=merge', '-p', JSON.stringify({ spec })]),
      ).toThrow(guard);
    // nothing changed
    const ro = JSON.parse(kubectl(CLUSTER, [...NS, 'get', 'rollout', 'checkout', '-o', 'json'])) as {
      spec: { paused?: boolean };
      status: { abort?: boolean; promoteFull?: boolean };
    };
    expect(ro.spec.paused).not.toBe(true);
    expect(ro.status.abort).not.toBe(true);
    expect(ro.status.promoteFull).not.toBe(true);
  });

  it('other changes of the same objects are not the policy’s', () => {
    kubectl(CLUSTER, [...as, 'label', '--overwrite', 'rollout', 'checkout', `policy-test=${intruder}`]);
    kubectl(CLUSTER, [...as, 'label', 'rollout', 'checkout', 'policy-test-']);
    kubectl(CLUSTER, [...as, 'label', '--overwrite', 'canary', 'payments', `policy-test=${intruder}`]);
    kubectl(CLUSTER, [...as, 'label', 'canary', 'payments', 'policy-test-']);
  });
});
