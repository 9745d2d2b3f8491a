// A small bounded cache: least recently used entries go first once either bound is passed (entry count, total
// weight), and an entry older than its time-to-live is never returned. Plain Map insertion order is the recency.

export interface LruOptions<V> {
  maxEntries: number;
  /** bound on the sum of `weigh(value)` over all entries (e.g. approximate bytes, or objects) */
  maxWeight?: number;
  weigh?: (value: V) => number;
  /** default time-to-live of an entry, ms (none: until evicted) */
  ttlMs?: number;
  now?: () => number;
}

interface Entry<V> {
  value: V;
  weight: number;
  expires: number;
}

export class Lru<K, V> {
  private readonly map = new Map<K, Entry<V>>();
  private total = 0;
  private readonly now: () => number;

  constructor(private readonly opts: LruOptions<V>) {
    this.now = opts.now ?? Date.now;
  }

  get(key: K): V | undefined {
    const e = this.map.get(key);
    if (!e) return undefined;
    this.map.delete(key);
    if (e.expires <= this.now()) {
      this.total -= e.weight;
      return undefined;
    }
    this.map.set(key, e); // most recently used last
    return e.value;
  }

  /** `ttlMs` overrides the default for this entry. A value heavier than the whole bound is not kept. */
  set(key: K, value: V, ttlMs = this.opts.ttlMs): void {
    this.delete(key);
    const weight = this.opts.weigh ? this.opts.weigh(value) : 1;
    if (this.opts.maxWeight !== undefined && weight > this.opts.maxWeight) return;
    this.map.set(key, { value, weight, expires: ttlMs === undefined ? Infinity : this.now() + ttlMs });
    this.total += weight;
    for (const [k, e] of this.map) {
      if (
        this.map.size <= this.opts.maxEntries &&
        (this.opts.maxWeight === undefined || this.total <= this.opts.maxWeight)
      )
        break;
      this.map.delete(k);
      this.total -= e.weight;
    }
  }

  delete(key: K): void {
    const e = this.map.get(key);
    if (!e) return;
    this.map.delete(key);
    this.total -= e.weight;
  }

  get size(): number {
    return this.map.size;
  }

  get weight(): number {
    return this.total;
  }
}
