// Fixed-window attempt counters (sign-in, SSO): per client address, per user name and address.
// Bounded: expired windows are swept at most once a second, and the oldest keys go first past the cap.
export class RateLimiter {
  private readonly hits = new Map<string, { count: number; resetAt: number }>();
  private lastSweep = 0;

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly maxKeys = 100_000,
  ) {}

  /** Counts one attempt; returns the seconds to wait when over the limit. */
  take(key: string, now = Date.now()): number | undefined {
    let h = this.hits.get(key);
    if (!h || h.resetAt <= now) {
      this.hits.delete(key);
      h = { count: 0, resetAt: now + this.windowMs };
      this.hits.set(key, h);
      this.bound(now);
    }
    h.count++;
    return h.count > this.limit ? Math.max(1, Math.ceil((h.resetAt - now) / 1000)) : undefined;
  }

  /** The seconds to wait if the limit is already reached, without counting an attempt. */
  peek(key: string, now = Date.now()): number | undefined {
    const h = this.hits.get(key);
    if (!h || h.resetAt <= now || h.count < this.limit) return undefined;
    return Math.max(1, Math.ceil((h.resetAt - now) / 1000));
  }

  get size(): number {
    return this.hits.size;
  }

  private bound(now: number): void {
    if (this.hits.size <= this.maxKeys) return;
    if (now - this.lastSweep > 1000) {
      this.lastSweep = now;
      for (const [k, h] of this.hits) if (h.resetAt <= now) this.hits.delete(k);
    }
    // Map order is insertion order: the oldest windows go first
    for (const k of this.hits.keys()) {
      if (this.hits.size <= this.maxKeys) break;
      this.hits.delete(k);
    }
  }
}

/** The key of a client address: IPv4 as is, IPv6 by its /64 (one host usually owns a whole /64). */
export function clientKey(ip: string): string {
  if (!ip.includes(':') || ip.startsWith('::ffff:')) return ip.replace(/^::ffff:/, '');
  const full = ip.includes('::')
    ? (() => {
        const [a = '', b = ''] = ip.split('::');
        const left = a ? a.split(':') : [];
        const right = b ? b.split(':') : [];
        return [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
      })()
    : ip.split(':');
  return `${full.slice(0, 4).join(':')}::/64`;
}
