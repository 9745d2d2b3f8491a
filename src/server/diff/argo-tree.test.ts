import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ARGO_TREE_CACHE_ENTRIES, checkoutTree } from './argo-tree.ts';

const SHA = 'a'.repeat(40);
let root = '';
let cache = '';
let n = 0;
const work = () => mkdtempSync(join(root, 'work-'));

/** a fetch that writes the commit's files (and a .git) and counts itself */
const fetches: string[] = [];
function fetchInto(files: Record<string, string>, sha = SHA) {
  return async (dir: string) => {
    fetches.push(dir);
    await new Promise((r) => setTimeout(r, 5));
    mkdirSync(join(dir, '.git'), { recursive: true });
    for (const [f, text] of Object.entries(files)) {
      mkdirSync(join(dir, f, '..'), { recursive: true });
      writeFileSync(join(dir, f), text);
    }
    return sha;
  };
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'argo-tree-'));
  cache = join(root, `cache-${n++}`);
  mkdirSync(cache);
  fetches.length = 0;
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('the Argo CD source tree at a commit', () => {
  it('is fetched once per commit; each render gets its own copy to edit', async () => {
    const files = { 'apps/a/kustomization.yaml': 'resources: []\n' };
    const w1 = work();
    const w2 = work();
    expect(await checkoutTree('http://git/r.git', SHA, w1, cache, fetchInto(files))).toBe(SHA);
    writeFileSync(join(w1, 'apps/a/kustomization.yaml'), 'namePrefix: alpha-\n');
    expect(await checkoutTree('http://git/r.git', SHA, w2, cache, fetchInto(files))).toBe(SHA);
    expect(fetches).toHaveLength(1);
    expect(readFileSync(join(w2, 'apps/a/kustomization.yaml'), 'utf8')).toBe('resources: []\n');
    expect(existsSync(join(w2, '.git'))).toBe(false);
  });

  it('parallel renders of one commit share one fetch', async () => {
    const files = { 'x.yaml': 'a: 1\n' };
    const ws = [work(), work(), work()];
    await Promise.all(ws.map((w) => checkoutTree('http://git/r.git', SHA, w, cache, fetchInto(files))));
    expect(fetches).toHaveLength(1);
    for (const w of ws) expect(readFileSync(join(w, 'x.yaml'), 'utf8')).toBe('a: 1\n');
  });

  it('a branch, a tag, a short id or another repository is fetched each time', async () => {
    const files = { 'x.yaml': 'a: 1\n' };
    for (const rev of ['main', 'v1.2.0', 'HEAD', SHA.slice(0, 12)])
      await checkoutTree('http://git/r.git', rev, work(), cache, fetchInto(files));
    await checkoutTree('http://git/r.git', SHA, work(), cache, fetchInto(files));
    await checkoutTree('http://git/other.git', SHA, work(), cache, fetchInto(files));
    expect(fetches).toHaveLength(6);
    // the uncached way fetches straight into the render's directory
    expect(fetches[0]).toMatch(/work-/);
  });

  it('a failed fetch caches nothing: the next render fetches again', async () => {
    const failing = async () => {
      fetches.push('failed');
      throw new Error('git fetch failed');
    };
    await expect(checkoutTree('http://git/r.git', SHA, work(), cache, failing)).rejects.toThrow('git fetch failed');
    expect(readdirSync(cache)).toEqual([]);
    await checkoutTree('http://git/r.git', SHA, work(), cache, fetchInto({ 'x.yaml': '' }));
    expect(fetches).toEqual(['failed', expect.stringContaining('.fill-')]);
  });

  it(`keeps the ${ARGO_TREE_CACHE_ENTRIES} commits used last`, async () => {
    for (let i = 0; i <= ARGO_TREE_CACHE_ENTRIES; i++) {
      const sha = i.toString(16).padStart(40, '0');
      await checkoutTree('http://git/r.git', sha, work(), cache, fetchInto({ 'x.yaml': `${i}\n` }, sha));
    }
    expect(readdirSync(cache)).toHaveLength(ARGO_TREE_CACHE_ENTRIES);
  });
});
