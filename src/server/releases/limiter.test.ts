// The recorder's semaphore: never more than `max` jobs at once, the others run as earlier ones finish.
import { describe, expect, it } from 'vitest';
import { Limiter } from './limiter.ts';

describe('limiter', () => {
  it('runs at most max jobs at a time, and a failed job frees its slot', async () => {
    const l = new Limiter(2);
    let running = 0;
    let peak = 0;
    const job = (fail = false) =>
      l.run(async () => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 5));
        running--;
        if (fail) throw new Error('boom');
        return 'ok';
      });
    const results = await Promise.allSettled([job(), job(true), job(), job(), job()]);
    expect(peak).toBe(2);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
  });
});
