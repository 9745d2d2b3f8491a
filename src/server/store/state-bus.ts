// State changes of the console's own records (prune previews, freezes, sessions) reach every replica.
//
// One process: an in-process emitter. With PostgreSQL (several replicas on one database): `pg_notify` on the
// channel `console_state` and one dedicated `LISTEN` connection per replica; each replica hands what it hears
// to its own SSE clients, so a reviewer's approval through replica A updates the page served by replica B.
// A notification carries ids only (never a record): the browser refetches through its own session, so what a
// user may see is decided by the same routes as always.
//
// Losing the LISTEN connection loses notifications: on reconnect the bus emits `resync` (every client
// refetches what it shows). A publish that fails is retried, then logged: it is an observation of a change
// already committed, never the change itself. LISTEN needs a session: not through a transaction-mode pooler
// (PgBouncer `pool_mode=transaction`); point DATABASE_URL at PostgreSQL or a session-mode pool.
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import pg from 'pg';

export const STATE_CHANNEL = 'console_state';

export type StateChange =
  | { kind: 'prune'; id: string; app?: string | undefined }
  | { kind: 'freeze'; id: string; app?: string | undefined }
  | { kind: 'session'; key: string }
  | { kind: 'resync' };

export interface StateEvent {
  change: StateChange;
  /** the replica that published it */
  origin: string;
}

export interface StateBusLog {
  warn(o: object, m: string): void;
}

export interface StateBus {
  readonly replica: string;
  readonly kind: 'local' | 'postgres';
  publish(c: StateChange): void;
  on(listener: (e: StateEvent) => void): () => void;
  /** whether changes of other replicas are heard now (always true for one process) */
  connected(): boolean;
  close(): Promise<void>;
}

const keyOf = (c: StateChange) =>
  c.kind === 'session' ? `session:${c.key}` : c.kind === 'resync' ? 'resync' : `${c.kind}:${c.id}`;

/**
 * Coalesces bursts per record: the first change goes out at once, later ones within `windowMs` become one
 * trailing change (a prune journal marks many objects a second; one notification per window is enough,
 * and the last state is always announced).
 */
class Coalescer {
  private readonly pending = new Map<string, { timer: NodeJS.Timeout; dirty: StateChange | undefined }>();
  constructor(
    private readonly windowMs: number,
    private readonly out: (c: StateChange) => void,
  ) {}

  push(c: StateChange): void {
    const key = keyOf(c);
    const p = this.pending.get(key);
    if (p) {
      p.dirty = c;
      return;
    }
    this.out(c);
    this.arm(key);
  }

  private arm(key: string): void {
    const timer = setTimeout(() => {
      const p = this.pending.get(key);
      this.pending.delete(key);
      if (p?.dirty) {
        this.out(p.dirty);
        this.arm(key);
      }
    }, this.windowMs);
    timer.unref();
    this.pending.set(key, { timer, dirty: undefined });
  }

  flush(): void {
    for (const [key, p] of this.pending) {
      clearTimeout(p.timer);
      if (p.dirty) this.out(p.dirty);
      this.pending.delete(key);
    }
  }
}

const replicaName = () => `${hostname()}/${process.pid}/${randomUUID().slice(0, 6)}`;

/**
 * What both buses share: the replica name, the listeners, and the coalescing of this replica's changes, which
 * are delivered to its own listeners at once and handed to `forward` (the other replicas, if any).
 */
abstract class BusCore {
  readonly replica = replicaName();
  protected readonly emitter = new EventEmitter();
  private readonly coalescer: Coalescer;

  constructor(windowMs: number, forward?: (c: StateChange) => void) {
    this.emitter.setMaxListeners(0);
    this.coalescer = new Coalescer(windowMs, (change) => {
      this.emitter.emit('change', { change, origin: this.replica } satisfies StateEvent);
      forward?.(change);
    });
  }

  publish(c: StateChange): void {
    this.coalescer.push(c);
  }

  on(listener: (e: StateEvent) => void): () => void {
    this.emitter.on('change', listener);
    return () => this.emitter.off('change', listener);
  }

  /** sends what is still held back by the coalescing window, then drops the listeners */
  protected shutDown(): void {
    this.coalescer.flush();
  }
}

/** One process: listeners hear this process's changes. */
export class LocalStateBus extends BusCore implements StateBus {
  readonly kind = 'local' as const;

  constructor(windowMs = 250) {
    super(windowMs);
  }

  connected(): boolean {
    return true;
  }

  async close(): Promise<void> {
    this.shutDown();
    this.emitter.removeAllListeners();
  }
}

const isChange = (v: unknown): v is StateChange => {
  if (!v || typeof v !== 'object') return false;
  const o = v as Record<string, unknown>;
  if (o.kind === 'resync') return true;
  if (o.kind === 'session') return typeof o.key === 'string';
  return (o.kind === 'prune' || o.kind === 'freeze') && typeof o.id === 'string';
};

/**
 * Several replicas on one PostgreSQL: NOTIFY through the store's pool, LISTEN on a connection of its own.
 * This replica's own changes are delivered locally at once (not after a round trip), its echo is ignored.
 */
export class PostgresStateBus extends BusCore implements StateBus {
  readonly kind = 'postgres' as const;
  private client: pg.Client | undefined;
  private listening = false;
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private pinger: NodeJS.Timeout | undefined;
  private backoffMs = 500;
  /** notifications sent and received (tests and /metrics) */
  readonly counts = { sent: 0, received: 0, failed: 0, reconnects: 0 };

  private constructor(
    private readonly url: string,
    private readonly pool: pg.Pool,
    private readonly log: StateBusLog | undefined,
    windowMs: number,
  ) {
    super(windowMs, (change) => void this.notify(change));
  }

  /** Listens before it returns: a replica that answers requests hears the others' changes. */
  static async open(
    url: string,
    pool: pg.Pool,
    opts: { log?: StateBusLog; windowMs?: number } = {},
  ): Promise<PostgresStateBus> {
    const bus = new PostgresStateBus(url, pool, opts.log, opts.windowMs ?? 250);
    try {
      await bus.listen();
    } catch (e) {
      await bus.close();
      throw e;
    }
    bus.pinger = setInterval(() => bus.ping(), 30_000);
    bus.pinger.unref();
    return bus;
  }

  private async listen(): Promise<void> {
    const c = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 10_000, keepAlive: true });
    const lost = (why: string) => {
      if (this.client !== c) return;
      this.client = undefined;
      this.listening = false;
      c.removeAllListeners('notification');
      c.end().catch(() => undefined);
      if (this.closed) return;
      this.log?.warn({ why }, 'state bus: LISTEN connection lost; reconnecting');
      this.reconnectLater();
    };
    c.on('error', (e) => lost(e.message));
    c.on('end', () => lost('connection ended'));
    c.on('notification', (n) => {
      if (n.channel !== STATE_CHANNEL || !n.payload) return;
      let e: StateEvent;
      try {
        e = JSON.parse(n.payload) as StateEvent;
      } catch {
        return;
      }
      if (e.origin === this.replica || !isChange(e.change)) return;
      this.counts.received++;
      this.emitter.emit('change', e);
    });
    this.client = c;
    try {
      await c.connect();
      await c.query(`LISTEN ${STATE_CHANNEL}`);
    } catch (e) {
      lost(e instanceof Error ? e.message : String(e));
      throw e;
    }
    this.listening = true;
  }

  /**
   * A half-open LISTEN connection hears nothing and says nothing: a query every 30 s finds it (then it is
   * replaced); a connection that answers resets the reconnect backoff (a flapping one keeps backing off).
   */
  private ping(): void {
    const c = this.client;
    if (!c || !this.listening) return;
    const timeout = setTimeout(() => c.emit('error', new Error('LISTEN connection did not answer in 10 s')), 10_000);
    timeout.unref();
    c.query('SELECT 1').then(
      () => {
        clearTimeout(timeout);
        this.backoffMs = 500;
      },
      (e: unknown) => {
        clearTimeout(timeout);
        c.emit('error', e instanceof Error ? e : new Error(String(e)));
      },
    );
  }

  private reconnectLater(): void {
    if (this.retryTimer || this.closed) return;
    const wait = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, 10_000);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.listen().then(
        () => {
          this.counts.reconnects++;
          // whatever was announced while deaf is unknown: every client refetches
          this.emitter.emit('change', { change: { kind: 'resync' }, origin: this.replica } satisfies StateEvent);
        },
        () => this.reconnectLater(),
      );
    }, wait);
    this.retryTimer.unref();
  }

  private async notify(change: StateChange): Promise<void> {
    const payload = JSON.stringify({ change, origin: this.replica } satisfies StateEvent);
    for (let attempt = 1; ; attempt++) {
      try {
        await this.pool.query('SELECT pg_notify($1, $2)', [STATE_CHANNEL, payload]);
        this.counts.sent++;
        return;
      } catch (e) {
        if (attempt >= 3 || this.closed) {
          this.counts.failed++;
          this.log?.warn(
            { err: e instanceof Error ? e.message : String(e), kind: change.kind },
            'state bus: NOTIFY failed',
          );
          return;
        }
        await new Promise((r) => setTimeout(r, 200 * attempt));
      }
    }
  }

  connected(): boolean {
    return this.listening;
  }

  async close(): Promise<void> {
    this.shutDown();
    this.closed = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.pinger);
    const c = this.client;
    this.client = undefined;
    this.listening = false;
    await c?.end().catch(() => undefined);
    this.emitter.removeAllListeners();
  }
}
