import { describe, expect, it } from 'vitest';
import { CommitMemo } from './commit-memo.ts';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(64);

function counting(fail = new Set<string>()) {
  const calls: string[] = [];
  const load = async (url: string, sha: string) => {
    calls.push(`${url} ${sha}`);
    await new Promise((r) => setTimeout(r, 5));
    if (fail.has(sha)) throw new Error(`cannot read ${sha}`);
    return { url, sha };
  };
  return { calls, load };
}

describe('the commit memo', () => {
  it('reads a (repository, commit) once: at the same time and later', async () => {
    const { calls, load } = counting();
    const memo = new CommitMemo(load);
    const all = await Promise.all([1, 2, 3, 4].map(() => memo.read('http://git/r.git', A)));
    expect(all.every((x) => x.sha === A)).toBe(true);
    expect(await memo.read('http://git/r.git', A)).toEqual({ url: 'http://git/r.git', sha: A });
    expect(calls).toEqual([`http://git/r.git ${A}`]);
    // another repository, or another commit, is its own read; a SHA-256 id too
    await memo.read('http://git/other.git', A);
    await memo.read('http://git/r.git', C);
    expect(calls).toHaveLength(3);
  });

  it('keeps no failure and no branch name', async () => {
    const { calls, load } = counting(new Set([B]));
    const memo = new CommitMemo(load);
    await expect(memo.read('u', B)).rejects.toThrow(/cannot read/);
    await expect(memo.read('u', B)).rejects.toThrow(/cannot read/);
    await memo.read('u', 'main');
    await memo.read('u', 'main');
    await memo.read('u', A.slice(0, 7));
    expect(calls).toEqual([`u ${B}`, `u ${B}`, 'u main', 'u main', `u ${A.slice(0, 7)}`]);
    expect(memo.size).toBe(0);
  });

  it('keeps at most max commits, dropping the least recently read', async () => {
    const { calls, load } = counting();
    const memo = new CommitMemo(load, 2);
    await memo.read('u', A);
    await memo.read('u', B);
    await memo.read('u', A); // A is now the most recent
    await memo.read('u', C); // drops B
    expect(memo.size).toBe(2);
    await memo.read('u', A);
    await memo.read('u', B);
    expect(calls).toEqual([`u ${A}`, `u ${B}`, `u ${C}`, `u ${B}`]);
  });
});
