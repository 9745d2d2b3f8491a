import { describe, expect, it } from 'vitest';
import { can, parseGrant } from './access.ts';
import { decideEnv, formatEnvMapping, globMatch, mappedEnv, parseEnvMapping, UNKNOWN_ENV } from './environments.ts';

const SANDBOX = parseEnvMapping('nonprod/dev=dev,nonprod/staging=staging,prod/prod=prod');

describe('parseEnvMapping', () => {
  it.each([
    ['nonprod/dev=dev', [{ cluster: 'nonprod', namespace: 'dev', env: 'dev' }]],
    [
      ' a/b = c , d/e=f ',
      [
        { cluster: 'a', namespace: 'b', env: 'c' },
        { cluster: 'd', namespace: 'e', env: 'f' },
      ],
    ],
    [
      '# comment\nprod/*=prod\n\n*/team-*=dev',
      [
        { cluster: 'prod', namespace: '*', env: 'prod' },
        { cluster: '*', namespace: 'team-*', env: 'dev' },
      ],
    ],
    // a context name with a '/' (an EKS ARN): the namespace follows the last one
    [
      'arn:aws:eks:eu-west-1:1:cluster/prod/payments=prod',
      [{ cluster: 'arn:aws:eks:eu-west-1:1:cluster/prod', namespace: 'payments', env: 'prod' }],
    ],
    ['', []],
    [' , ', []],
  ])('%j → %j', (text, rules) => {
    expect(parseEnvMapping(text)).toEqual(rules);
  });

  it.each([
    ['dev=dev', /expected cluster\/namespace=env/],
    ['nonprod/dev', /expected cluster\/namespace=env/],
    ['nonprod/dev=dev=x', /expected cluster\/namespace=env/],
    ['nonprod/Dev=dev', /not a namespace name/],
    ['nonprod/dev=Dev', /not an environment name/],
    ['nonprod/dev=*', /not an environment name/],
    ['nonprod/dev=a b', /not an environment name/],
    ['nonprod/dev=unknown', /"unknown" is the environment of apps no rule covers/],
    ['non prod/dev=dev', /not a cluster name/],
    // a rule an earlier one covers entirely could never apply
    ['*/*=dev,prod/prod=prod', /"prod\/prod=prod" never applies: the earlier rule \*\/\*=dev covers it/],
    ['prod/*=prod,prod/prod=prod', /never applies/],
    ['*/team-*=dev,nonprod/team-a*=qa', /never applies/],
    ['prod/prod=prod,prod/prod=prod', /never applies/],
  ])('refuses %j', (text, message) => {
    expect(() => parseEnvMapping(text)).toThrow(message);
  });

  it('names every bad rule in one error', () => {
    expect(() => parseEnvMapping('x,nonprod/dev=unknown,ok/ok=ok')).toThrow(/"x".*"nonprod\/dev=unknown"/);
  });

  it('keeps a specific rule written before a wildcard', () => {
    const rules = parseEnvMapping('prod/canary=staging,prod/*=prod');
    expect(mappedEnv(rules, 'prod', 'canary')).toBe('staging');
    expect(mappedEnv(rules, 'prod', 'payments')).toBe('prod');
    expect(formatEnvMapping(rules)).toBe('prod/canary=staging,prod/*=prod');
  });
});

describe('globMatch', () => {
  it.each([
    ['*', '', true],
    ['*', 'anything', true],
    ['dev', 'dev', true],
    ['dev', 'dev2', false],
    ['team-*', 'team-a', true],
    ['team-*', 'team-', true],
    ['team-*', 'tea', false],
    ['*-prod', 'eu-prod', true],
    ['*-prod', 'eu-prod-2', false],
    ['a*b*c', 'abc', true],
    ['a*b*c', 'axxbyyc', true],
    ['a*b*c', 'acb', false],
    ['a*a', 'a', false],
    ['a.b', 'axb', false],
  ])('%s ~ %s = %s', (pattern, value, ok) => {
    expect(globMatch(pattern, value)).toBe(ok);
  });
});

describe('decideEnv', () => {
  const input = (o: Partial<Parameters<typeof decideEnv>[0]>) => ({
    cluster: 'prod',
    destinations: ['prod'],
    fallback: 'prod',
    ...o,
  });

  it.each([
    // no mapping: the label decides, else today's fallback (target namespace, app namespace, cluster)
    ['no mapping, label', undefined, input({ label: 'dev' }), { env: 'dev', source: 'label' }],
    ['empty mapping = no mapping', [], input({ label: 'dev' }), { env: 'dev', source: 'label' }],
    ['no mapping, no label', undefined, input({ fallback: 'qa' }), { env: 'qa', source: 'namespace' }],
    ['no mapping, empty label', undefined, input({ label: '', fallback: 'qa' }), { env: 'qa', source: 'namespace' }],
    // a mapping decides; a label that agrees is no conflict
    ['mapped, label agrees', SANDBOX, input({ label: 'prod' }), { env: 'prod', source: 'mapping' }],
    ['mapped, no label', SANDBOX, input({}), { env: 'prod', source: 'mapping' }],
    // the hostile owner: a prod app labelled dev stays prod, flagged
    [
      'mapped, label disagrees',
      SANDBOX,
      input({ label: 'dev' }),
      { env: 'prod', source: 'mapping', conflict: "label says dev; the console's mapping says prod" },
    ],
    // the same namespace name on another cluster is another environment
    [
      'namespace dev on prod is not covered',
      SANDBOX,
      input({ destinations: ['dev'], label: 'dev' }),
      {
        env: UNKNOWN_ENV,
        source: 'unmapped',
        conflict: "no rule of the console's environment mapping covers prod/dev (label says dev): environment unknown",
      },
    ],
    [
      'one destination uncovered',
      SANDBOX,
      input({ cluster: 'nonprod', destinations: ['dev', 'team-x'] }),
      {
        env: UNKNOWN_ENV,
        source: 'unmapped',
        conflict: "no rule of the console's environment mapping covers nonprod/team-x: environment unknown",
      },
    ],
    [
      'destinations in two environments',
      SANDBOX,
      input({ cluster: 'nonprod', destinations: ['staging', 'dev'], label: 'dev' }),
      {
        env: UNKNOWN_ENV,
        source: 'unmapped',
        conflict:
          'deploys to several environments (dev → dev, staging → staging) (label says dev): environment unknown',
      },
    ],
    [
      'two namespaces, one environment',
      parseEnvMapping('nonprod/dev-*=dev'),
      input({ cluster: 'nonprod', destinations: ['dev-a', 'dev-b', 'dev-a'] }),
      { env: 'dev', source: 'mapping' },
    ],
    [
      'no destination at all',
      SANDBOX,
      input({ destinations: [] }),
      {
        env: UNKNOWN_ENV,
        source: 'unmapped',
        conflict:
          "no rule of the console's environment mapping covers prod (no destination namespace): environment unknown",
      },
    ],
    [
      'wildcard cluster',
      parseEnvMapping('*/prod=prod'),
      input({ cluster: 'prod-eu', label: 'prod' }),
      { env: 'prod', source: 'mapping' },
    ],
  ] as const)('%s', (_name, rules, inp, decision) => {
    expect(decideEnv(inp, rules)).toEqual(decision);
  });

  it('an unknown environment is covered only by a grant on every environment of the cluster', () => {
    const { env } = decideEnv(input({ destinations: ['team-x'] }), SANDBOX);
    const scope = { cluster: 'prod', env };
    expect(can([parseGrant('auditor@prod')], 'app.read', scope)).toBe(true);
    expect(can([parseGrant('auditor')], 'app.read', scope)).toBe(true);
    expect(can([parseGrant('auditor@prod/prod')], 'app.read', scope)).toBe(false);
    expect(can([parseGrant('reviewer@*/dev')], 'prune.approve', scope)).toBe(false);
  });

  it('the label cannot move a mapped app into another environment', () => {
    for (const label of ['dev', 'staging', 'prod', '*', 'unknown', undefined]) {
      const { env } = decideEnv(input({ label }), SANDBOX);
      expect(env).toBe('prod');
      expect(can([parseGrant('reviewer@*/dev')], 'prune.approve', { cluster: 'prod', env })).toBe(false);
      expect(can([parseGrant('auditor@prod/prod')], 'app.read', { cluster: 'prod', env })).toBe(true);
    }
  });
});
