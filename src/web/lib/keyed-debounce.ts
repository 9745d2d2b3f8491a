/**
 * Coalesces bursts per key: `run(key, fn)` calls `fn` once, `ms` after the last call for that key (trailing),
 * but no later than `maxMs` after the first call of a burst, so a steady stream still refreshes.
 * A storm of SSE messages for one app (every pod status change) becomes one refetch per window.
 */
export function keyedDebounce(ms: number, maxMs = ms * 4) {
  const pending = new Map<string, { timer: ReturnType<typeof setTimeout>; first: number; fn: () => void }>();
  const fire = (key: string) => {
    const p = pending.get(key);
    if (!p) return;
    pending.delete(key);
    p.fn();
  };
  return {
    run(key: string, fn: () => void): void {
      const now = Date.now();
      const p = pending.get(key);
      if (p) clearTimeout(p.timer);
      const first = p?.first ?? now;
      const wait = Math.max(0, Math.min(ms, first + maxMs - now));
      pending.set(key, { first, fn, timer: setTimeout(() => fire(key), wait) });
    },
    cancelAll(): void {
      for (const p of pending.values()) clearTimeout(p.timer);
      pending.clear();
    },
  };
}
