import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, chainText, GENESIS_HASH, verifyChain, type EvidenceEvent } from './evidence.ts';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

function chain(n: number): EvidenceEvent[] {
  const out: EvidenceEvent[] = [];
  let prev = GENESIS_HASH;
  for (let i = 1; i <= n; i++) {
    const base = {
      seq: i,
      time: `2026-11-30T12:00:0${i}Z`,
      type: 'console.started' as const,
      actor: 'console',
      app: null,
      cluster: null,
      env: null,
      data: { i },
      prevHash: prev,
    };
    const e = { ...base, hash: sha(chainText(base)) };
    out.push(e);
    prev = e.hash;
  }
  return out;
}

describe('canonicalJson', () => {
  it.each([
    [{ b: 1, a: 2 }, '{"a":2,"b":1}'],
    [{ a: { d: [3, { z: 1, y: 2 }], c: null } }, '{"a":{"c":null,"d":[3,{"y":2,"z":1}]}}'],
    [{ a: undefined, b: 'x' }, '{"b":"x"}'],
    [[undefined, 1], '[null,1]'],
    ['é"\n', '"é\\"\\n"'],
  ])('%j → %s', (input, want) => expect(canonicalJson(input)).toBe(want));

  it('is independent of key insertion order', () => {
    expect(canonicalJson({ x: 1, y: { b: 2, a: 1 } })).toBe(canonicalJson({ y: { a: 1, b: 2 }, x: 1 }));
  });
  it('rejects non-finite numbers', () => expect(() => canonicalJson({ n: Infinity })).toThrow());
});

describe('verifyChain', () => {
  it('accepts an intact chain and returns its head', () => {
    const c = chain(5);
    expect(verifyChain(c, sha)).toEqual({ ok: true, count: 5, head: c[4]?.hash });
  });
  it('finds an edited event', () => {
    const c = chain(5);
    c[2] = { ...c[2]!, data: { i: 99 } };
    expect(verifyChain(c, sha)).toMatchObject({ ok: false, brokenAt: 3 });
  });
  it('finds a missing event', () => {
    const c = chain(5);
    c.splice(1, 1);
    expect(verifyChain(c, sha)).toMatchObject({ ok: false, brokenAt: 2, reason: expect.stringMatching(/missing/) });
  });
  it('finds a truncated tail against the recorded head', () => {
    const c = chain(5);
    expect(verifyChain(c.slice(0, 4), sha, { seq: 5, hash: c[4]!.hash })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/removed from the end/),
    });
  });
});
