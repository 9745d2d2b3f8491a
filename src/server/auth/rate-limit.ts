// Fixed-window attempt counters for sign-in: per client address and per user name.
export class RateLimiter {
  private readonly hits = new Map<string, { count: number; resetAt: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /** Counts one attempt; returns the seconds to wait when over the limit. */
  take(key: string, now = Date.now()): number | undefined {
    let h = this.hits.get(key);
    if (!h || h.resetAt <= now) {
      h = { count: 0, resetAt: now + this.windowMs };
      this.hits.set(key, h);
    }
    h.count++;
    if (this.hits.size > 10_000) this.sweep(now);
    return h.count > this.limit ? Math.max(1, Math.ceil((h.resetAt - now) / 1000)) : undefined;
  }

  private sweep(now: number): void {
    for (const [k, h] of this.hits) if (h.resetAt <= now) this.hits.delete(k);
  }
}
