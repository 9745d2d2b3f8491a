// An object's environment is the one the console's mapping gives its namespace (a Namespace object's: its own
// name), never the app whose label it carries; what a reader may not read is split off and counted (issue 40).
import { describe, expect, it } from 'vitest';
import { hiddenEnvLine, objectEnv, splitByEnv } from './env-visibility.ts';

/** nonprod/dev=dev, nonprod/staging=staging, anything else `unknown` (as CONSOLE_ENVIRONMENTS answers) */
const mapped = (ns: string) => (ns === 'dev' ? 'dev' : ns === 'staging' ? 'staging' : 'unknown');
const unmapped = () => undefined;
const cm = (namespace: string, name = 'settings') => ({ group: '', kind: 'ConfigMap', namespace, name });

describe('objectEnv', () => {
  it('a namespaced object: its namespace’s environment; a Namespace: its own name’s', () => {
    expect(objectEnv(cm('staging'), mapped)).toBe('staging');
    expect(objectEnv(cm('flux-system'), mapped)).toBe('unknown');
    expect(objectEnv({ group: '', kind: 'Namespace', name: 'staging' }, mapped)).toBe('staging');
  });

  it('nothing decides a cluster-scoped object, nor anything without a mapping', () => {
    expect(objectEnv({ group: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'staging' }, mapped)).toBe(
      undefined,
    );
    // a Namespace kind of another group is not a Namespace
    expect(objectEnv({ group: 'example.com', kind: 'Namespace', name: 'staging' }, mapped)).toBeUndefined();
    expect(objectEnv(cm('staging'), unmapped)).toBeUndefined();
  });
});

describe('splitByEnv', () => {
  it('keeps what the reader may read and what nothing decides, splits off the rest, asks once per environment', () => {
    const asked: string[] = [];
    const items = [
      cm('dev', 'a'),
      cm('staging', 'b'),
      cm('staging', 'c'),
      cm('kube-system', 'd'),
      { group: '', kind: 'Namespace', name: 'staging' },
      { group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition', name: 'widgets.example.com' },
    ];
    const s = splitByEnv(
      items,
      (x) => x,
      mapped,
      (env) => {
        asked.push(env);
        return env === 'dev';
      },
    );
    expect(s.visible.map((x) => x.name)).toEqual(['a', 'widgets.example.com']);
    expect(s.hidden.map((x) => x.name)).toEqual(['b', 'c', 'd', 'staging']);
    expect(asked).toEqual(['dev', 'staging', 'unknown']);
  });

  it('without a mapping, nothing is hidden', () => {
    expect(
      splitByEnv(
        [cm('staging')],
        (x) => x,
        unmapped,
        () => false,
      ).hidden,
    ).toEqual([]);
  });
});

describe('hiddenEnvLine', () => {
  it('says how many, in words', () => {
    expect(hiddenEnvLine(1)).toBe('1 object in an environment you may not read is hidden');
    expect(hiddenEnvLine(3)).toBe('3 objects in environments you may not read are hidden');
  });
});
