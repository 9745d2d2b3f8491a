import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { keyedDebounce, keyedThrottle } from './keyed-debounce.ts';

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

describe('keyedThrottle', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('a lone call runs at once', () => {
    const d = keyedThrottle(2000);
    let n = 0;
    d.run('a', () => n++);
    expect(n).toBe(1);
    vi.advanceTimersByTime(5000);
    expect(n).toBe(1);
    d.run('a', () => n++);
    expect(n).toBe(2);
  });

  it('a storm runs once at once and then once per window, with the latest function', () => {
    const d = keyedThrottle(2000);
    const calls: number[] = [];
    for (let t = 0; t < 10_000; t += 10) {
      const at = t;
      d.run('a', () => calls.push(at));
      vi.advanceTimersByTime(10);
    }
    vi.advanceTimersByTime(2000);
    // at 0, then at the end of each 2 s window (the window's last call), and the last burst's trailing one
    expect(calls[0]).toBe(0);
    expect(calls.length).toBe(6);
    expect(calls.at(-1)).toBe(9990);
    d.run('b', () => calls.push(-1));
    expect(calls.at(-1)).toBe(-1);
    d.cancelAll();
  });
});
