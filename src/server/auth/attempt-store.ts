// Sign-in throttles every replica shares (issue 40): the fixed-window counters of rate-limit.ts, kept in the
// store's database (table `auth_attempts`, migration 13). Five wrong passwords are five, whichever replicas
// the load balancer sent them to. One upsert per attempt, atomic on SQLite and PostgreSQL alike.
//
// When the database cannot count, the replica's own counter still does (the limit then holds per replica):
// a throttle never fails open to "no limit", and a sign-in is never refused only because the counter is down
// (the sign-in itself records evidence first and answers 503 when the store is down).
import { createHash } from 'node:crypto';
import { all, run, type Dialect } from '../store/dialect.ts';
import { RateLimiter } from './rate-limit.ts';

/** Counts attempts per key within fixed windows; the answers are the seconds to wait, when over the limit. */
export interface AttemptCounter {
  /** Counts one attempt; returns the seconds to wait when over the limit. */
  take(key: string, now?: number): Promise<number | undefined>;
  /** The seconds to wait if the limit is already reached, without counting an attempt. */
  peek(key: string, now?: number): Promise<number | undefined>;
}

/** Makes the counter of one throttle (its name keeps the throttles' keys apart). */
export type AttemptCounters = (name: string, limit: number, windowMs: number) => AttemptCounter;

/** One process's counters (a single replica, and unit tests). */
export const memoryCounters: AttemptCounters = (_name, limit, windowMs) => {
  const r = new RateLimiter(limit, windowMs);
  return { take: async (k, now) => r.take(k, now), peek: async (k, now) => r.peek(k, now) };
};

const waitOf = (resetAt: number, now: number) => Math.max(1, Math.ceil((resetAt - now) / 1000));

/** Counters in the database; `onError` hears a failure once per throttle until it works again. */
export function dbCounters(db: Dialect, onError?: (e: unknown) => void): AttemptCounters {
  let lastSweep = 0;
  const sweep = (now: number) => {
    if (now - lastSweep < 60_000) return;
    lastSweep = now;
    db.exec(run('DELETE FROM auth_attempts WHERE reset_at <= ?', [now])).catch(() => undefined);
  };
  return (name, limit, windowMs) => {
    const local = new RateLimiter(limit, windowMs);
    const keyOf = (k: string) => createHash('sha256').update(`${name}\0${k}`).digest('hex');
    let failing = false;
    const failed = (e: unknown) => {
      if (!failing) onError?.(e);
      failing = true;
    };
    return {
      async take(k, now = Date.now()) {
        // the replica counts too: it answers alone the moment the database cannot
        const alone = local.take(k, now);
        try {
          const rows = (await db.exec(
            all(
              `INSERT INTO auth_attempts (key, count, reset_at) VALUES (?, 1, ?)
               ON CONFLICT (key) DO UPDATE SET
                 count = CASE WHEN auth_attempts.reset_at <= ? THEN 1 ELSE auth_attempts.count + 1 END,
                 reset_at = CASE WHEN auth_attempts.reset_at <= ? THEN excluded.reset_at ELSE auth_attempts.reset_at END
               RETURNING count, reset_at`,
              [keyOf(k), now + windowMs, now, now],
            ),
          )) as Array<{ count: number | string; reset_at: number | string }>;
          failing = false;
          sweep(now);
          const r = rows[0];
          if (!r) return alone;
          return Number(r.count) > limit ? waitOf(Number(r.reset_at), now) : undefined;
        } catch (e) {
          failed(e);
          return alone;
        }
      },
      async peek(k, now = Date.now()) {
        try {
          const rows = (await db.exec(
            all('SELECT count, reset_at FROM auth_attempts WHERE key = ? AND reset_at > ?', [keyOf(k), now]),
          )) as Array<{ count: number | string; reset_at: number | string }>;
          failing = false;
          const r = rows[0];
          return r && Number(r.count) >= limit ? waitOf(Number(r.reset_at), now) : undefined;
        } catch (e) {
          failed(e);
          return local.peek(k, now);
        }
      },
    };
  };
}
