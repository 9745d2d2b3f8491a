// The bare cluster's cache key (sandbox/bare-cluster-cache.ts) names what made the cluster, not where the checkout
// is: the same files in two directories (a worktree and a fresh clone, as CI has) give one key; a changed file or
// a renamed one gives another.
import { cpSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bareCacheKey } from '../../sandbox/bare-cluster-cache.ts';

const root = mkdtempSync(join(tmpdir(), 'bare-key-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** a checkout's worth of set-up files: a CRD folder and a deploy file */
function checkout(name: string): { crds: string; rbac: string } {
  const dir = join(root, name);
  mkdirSync(join(dir, 'crds', 'flux'), { recursive: true });
  mkdirSync(join(dir, 'deploy'), { recursive: true });
  writeFileSync(join(dir, 'crds', 'flux', 'a.yaml'), 'kind: CustomResourceDefinition\nmetadata: {name: a}\n');
  writeFileSync(join(dir, 'crds', 'flux', 'b.yaml'), 'kind: CustomResourceDefinition\nmetadata: {name: b}\n');
  writeFileSync(join(dir, 'deploy', 'rbac.yaml'), 'kind: ClusterRole\n');
  return { crds: join(dir, 'crds', 'flux'), rbac: join(dir, 'deploy', 'rbac.yaml') };
}
const topology = { nonprod: ['dev', 'staging'], prod: ['prod'] };
const key = (c: { crds: string; rbac: string }) => bareCacheKey([], [c.crds, c.rbac], topology);

describe('bareCacheKey', () => {
  it('is the same for the same files in another directory', () => {
    const a = checkout('worktree');
    cpSync(join(root, 'worktree'), join(root, 'elsewhere', 'fresh-clone'), { recursive: true });
    const b = {
      crds: join(root, 'elsewhere', 'fresh-clone', 'crds', 'flux'),
      rbac: join(root, 'elsewhere', 'fresh-clone', 'deploy', 'rbac.yaml'),
    };
    expect(key(b)).toBe(key(a));
  });

  it('changes with a file’s content, a file’s name, or the topology', () => {
    const c = checkout('changes');
    const before = key(c);
    writeFileSync(c.rbac, 'kind: ClusterRole\nrules: []\n');
    const edited = key(c);
    expect(edited).not.toBe(before);
    renameSync(join(c.crds, 'b.yaml'), join(c.crds, 'c.yaml'));
    expect(key(c)).not.toBe(edited);
    expect(bareCacheKey([], [c.crds, c.rbac], { nonprod: ['dev'], prod: ['prod'] })).not.toBe(key(c));
  });
});
