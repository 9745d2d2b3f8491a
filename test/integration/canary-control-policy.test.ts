// The canary rule held from outside the console (issue 25): someone with kubectl and RBAC to patch Rollouts and
// Canaries in a governed namespace still cannot promote, abort, pause or resume a canary, nor skip a Flagger
// analysis — deploy/prune-admission-policy.yaml (gitops-console-rollout-control, gitops-console-flagger-control)
// denies it; other changes of the same objects pass. The console's own way (rollout.control, with a reason on
// record) passes the same policy: rollouts.test.ts and flagger.test.ts act through it.
// The Rollout and the Canary are the file's own estate's: the seed's checkout Rollout and payments Deployment with
// a Flagger Canary, applied by Flux from a repository of its own into a governed namespace of its own, where
// Argo Rollouts' and Flagger's controllers run them as they run the seed's.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl } from '../../sandbox/state.ts';
import { checkoutFiles, paymentsFiles } from '../../sandbox/seed.ts';
import { ownEstate, type Estate } from '../support/own-estate.ts';

const intruder = `canary-hand-${randomBytes(3).toString('hex')}`;
const guard = /canary control goes through the GitOps console/;

/** The estate's files: checkout (a Rollout with a canary) and payments (a Deployment and its Flagger Canary). */
function canaryFiles(): Record<string, string> {
  const checkout = checkoutFiles();
  const payments = paymentsFiles();
  const canary = (payments['flux/payments/canary.yaml'] ?? '')
    // no webhooks: no analysis runs here (the seed's go to the staging business endpoint, by a postBuild variable)
    .replace(/\n {4}webhooks:[\s\S]*$/, '\n');
  return {
    'canary/kustomization.yaml': [
      'apiVersion: kustomize.config.k8s.io/v1beta1',
      'kind: Kustomization',
      'resources: [rollout.yaml, service.yaml, deployment.yaml, canary.yaml]',
      '',
    ].join('\n'),
    'canary/rollout.yaml': (checkout['argo/checkout/rollout.yaml'] ?? '').replace('replicas: 5', 'replicas: 1'),
    'canary/service.yaml': checkout['argo/checkout/service.yaml'] ?? '',
    'canary/deployment.yaml': payments['flux/payments/deployment.yaml'] ?? '',
    'canary/canary.yaml': canary,
  };
}

let estate: Estate;
let CLUSTER: string;
let NS: string[];
let as: string[];

beforeAll(async () => {
  estate = await ownEstate({
    name: 'canary-policy',
    env: 'staging',
    governed: true,
    files: canaryFiles(),
    apps: [{ name: 'app', path: 'canary' }],
  });
  CLUSTER = estate.cluster;
  NS = ['-n', estate.namespace];
  as = [`--as=${intruder}`, ...NS];
  kubectl(CLUSTER, [
    ...NS,
    ...['create', 'role', intruder, '--verb=get,patch,update'],
    '--resource=rollouts.argoproj.io,rollouts.argoproj.io/status,canaries.flagger.app',
  ]);
  kubectl(CLUSTER, [...NS, 'create', 'rolebinding', intruder, `--role=${intruder}`, `--user=${intruder}`]);
}, 300_000);
afterAll(async () => {
  // the Role and RoleBinding go with the estate's namespace
  await estate?.teardown();
}, 120_000);

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

  it('Argo CD’s server (its UI’s resource actions) is not a controller: only the application controller is exempt (issue 40)', () => {
    // argocd-server with the same RBAC in this namespace, as Argo CD's resource actions (promote-full, abort) use it
    const server = 'system:serviceaccount:argocd:argocd-server';
    const binding = `${intruder}-server`;
    kubectl(CLUSTER, [
      ...NS,
      'create',
      'rolebinding',
      binding,
      `--role=${intruder}`,
      '--serviceaccount=argocd:argocd-server',
    ]);
    try {
      const asServer = [`--as=${server}`, ...NS];
      expect(() =>
        kubectl(CLUSTER, [
          ...asServer,
          ...['patch', 'rollout', 'checkout', '--subresource=status', '--type=merge', '-p'],
          JSON.stringify({ status: { promoteFull: true } }),
        ]),
      ).toThrow(guard);
      expect(() =>
        kubectl(CLUSTER, [
          ...asServer,
          'patch',
          'canary',
          'payments',
          '--type=merge',
          '-p',
          '{"spec":{"skipAnalysis":true}}',
        ]),
      ).toThrow(guard);
      // the application controller (it applies the Rollout from Git) passes the same policy: a dry run says so
      const controller = ['--as=system:serviceaccount:argocd:argocd-application-controller', ...NS];
      kubectl(CLUSTER, [
        ...NS,
        'create',
        'rolebinding',
        `${binding}-ctl`,
        `--role=${intruder}`,
        '--serviceaccount=argocd:argocd-application-controller',
      ]);
      kubectl(CLUSTER, [
        ...controller,
        ...['patch', 'rollout', 'checkout', '--type=merge', '--dry-run=server', '-p'],
        '{"spec":{"paused":true}}',
      ]);
    } finally {
      kubectl(CLUSTER, [...NS, 'delete', 'rolebinding', binding, `${binding}-ctl`, '--ignore-not-found']);
    }
  });

  it('other changes of the same objects are not the policy’s', () => {
    kubectl(CLUSTER, [...as, 'label', '--overwrite', 'rollout', 'checkout', `policy-test=${intruder}`]);
    kubectl(CLUSTER, [...as, 'label', 'rollout', 'checkout', 'policy-test-']);
    kubectl(CLUSTER, [...as, 'label', '--overwrite', 'canary', 'payments', `policy-test=${intruder}`]);
    kubectl(CLUSTER, [...as, 'label', 'canary', 'payments', 'policy-test-']);
  });
});
