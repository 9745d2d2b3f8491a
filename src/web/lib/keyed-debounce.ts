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

/**
 * At most one call per key per `ms`, the first of a burst at once: `run(key, fn)` calls `fn` now when the key
 * was quiet for `ms`; calls meanwhile become one call when the window ends. A lone change shows at once
 * (issue 27: a re-diff after one object changed), a storm still refetches once per window.
 */
export function keyedThrottle(ms: number) {
  const last = new Map<string, number>();
  const trailing = new Map<string, { timer: ReturnType<typeof setTimeout>; fn: () => void }>();
  const fire = (key: string, fn: () => void) => {
    last.set(key, Date.now());
    fn();
  };
  return {
    run(key: string, fn: () => void): void {
      const now = Date.now();
      const at = last.get(key);
      const t = trailing.get(key);
      if (t) {
        t.fn = fn;
        return;
      }
      if (at === undefined || now - at >= ms) {
        fire(key, fn);
        return;
      }
      const entry = {
        fn,
        timer: setTimeout(
          () => {
            trailing.delete(key);
            fire(key, entry.fn);
          },
          ms - (now - at),
        ),
      };
      trailing.set(key, entry);
    },
    cancelAll(): void {
      for (const t of trailing.values()) clearTimeout(t.timer);
      trailing.clear();
      last.clear();
    },
  };
}
