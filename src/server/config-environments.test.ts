// CONSOLE_ENVIRONMENTS: parsed and checked at start-up; a bad rule stops the console with a clear error.
import { describe, expect, it } from 'vitest';
import { parseEnvMapping } from '../domain/environments.ts';
import { ConfigError, loadConfig } from './config.ts';
import { sandboxEnvironmentRules, sandboxEnvironments } from './sandbox-environments.ts';

const load = (env: Record<string, string>) => loadConfig({ CONSOLE_SANDBOX: '1', ...env }, []);

describe('CONSOLE_ENVIRONMENTS', () => {
  it('is no mapping when unset or empty (the label decides)', () => {
    expect(load({}).environments).toBeUndefined();
    expect(load({ CONSOLE_ENVIRONMENTS: '  ' }).environments).toBeUndefined();
  });

  it('reads the rules in order', () => {
    expect(load({ CONSOLE_ENVIRONMENTS: 'prod/canary=staging, prod/*=prod' }).environments).toEqual([
      { cluster: 'prod', namespace: 'canary', env: 'staging' },
      { cluster: 'prod', namespace: '*', env: 'prod' },
    ]);
  });

  it.each([
    ['nonprod/dev', /environments: CONSOLE_ENVIRONMENTS: "nonprod\/dev": expected cluster\/namespace=env/],
    ['*/*=dev,prod/prod=prod', /"prod\/prod=prod" never applies/],
    ['prod/prod=unknown', /"unknown" is the environment of apps no rule covers/],
  ])('refuses %j with a ConfigError naming the rule', (value, message) => {
    expect(() => load({ CONSOLE_ENVIRONMENTS: value })).toThrow(ConfigError);
    expect(() => load({ CONSOLE_ENVIRONMENTS: value })).toThrow(message);
  });
});

describe('the sandbox mapping', () => {
  it('maps each environment namespace of each sandbox cluster to itself', () => {
    const text = sandboxEnvironments({ nonprod: ['dev', 'staging'], prod: ['prod'] });
    expect(text).toBe('nonprod/dev=dev,nonprod/staging=staging,prod/*=prod');
    expect(parseEnvMapping(text)).toEqual(
      sandboxEnvironmentRules([
        { name: 'nonprod', namespaces: ['dev', 'staging'] },
        { name: 'prod', namespaces: ['prod'] },
      ]),
    );
  });
});
