import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { keyedDebounce } from './keyed-debounce.ts';

describe('keyedDebounce', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('one call per key per burst, trailing', () => {
    const d = keyedDebounce(1000);
    const calls: string[] = [];
    for (let i = 0; i < 100; i++) {
      d.run('a', () => calls.push('a'));
      d.run('b', () => calls.push('b'));
      vi.advanceTimersByTime(5);
    }
    expect(calls).toEqual([]);
    vi.advanceTimersByTime(1000);
    expect(calls.sort()).toEqual(['a', 'b']);
  });

  it('a steady stream still fires every maxMs', () => {
    const d = keyedDebounce(1000, 3000);
    let n = 0;
    for (let t = 0; t < 10_000; t += 100) {
      d.run('a', () => n++);
      vi.advanceTimersByTime(100);
    }
    expect(n).toBe(3);
    d.cancelAll();
  });
});
