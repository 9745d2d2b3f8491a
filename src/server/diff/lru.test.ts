import { describe, expect, it } from 'vitest';
import { Lru } from './lru.ts';

describe('Lru', () => {
  it('evicts the least recently used entry past maxEntries', () => {
    const c = new Lru<string, number>({ maxEntries: 2 });
    c.set('a', 1);
    c.set('b', 2);
    expect(c.get('a')).toBe(1); // a is now the most recent
    c.set('c', 3);
    expect([c.get('a'), c.get('b'), c.get('c')]).toEqual([1, undefined, 3]);
    expect(c.size).toBe(2);
  });

  it('evicts past maxWeight and refuses a value heavier than the bound', () => {
    const c = new Lru<string, string>({ maxEntries: 100, maxWeight: 10, weigh: (v) => v.length });
    c.set('a', 'xxxx');
    c.set('b', 'yyyy');
    c.set('c', 'zzzz'); // 12 > 10: a goes
    expect([c.get('a'), c.get('b'), c.get('c')]).toEqual([undefined, 'yyyy', 'zzzz']);
    expect(c.weight).toBe(8);
    c.set('big', 'x'.repeat(11));
    expect(c.get('big')).toBeUndefined();
    expect(c.weight).toBe(8);
  });

  it('never returns an expired entry, and drops its weight', () => {
    let now = 0;
    const c = new Lru<string, string>({
      maxEntries: 10,
      maxWeight: 100,
      weigh: (v) => v.length,
      ttlMs: 50,
      now: () => now,
    });
    c.set('a', 'aaa');
    c.set('b', 'bbb', 500);
    now = 60;
    expect(c.get('a')).toBeUndefined();
    expect(c.get('b')).toBe('bbb');
    expect(c.weight).toBe(3);
  });

  it('replacing a key replaces its weight', () => {
    const c = new Lru<string, string>({ maxEntries: 10, maxWeight: 100, weigh: (v) => v.length });
    c.set('a', 'aaaa');
    c.set('a', 'a');
    expect(c.weight).toBe(1);
    expect(c.size).toBe(1);
  });
});
