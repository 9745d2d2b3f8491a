// One release recorder among several BFF replicas (issue 16): a coordination.k8s.io/v1 Lease, as controllers
// elect their leader. The holder renews it every `renewMs`; another replica takes it over only once its
// Lease has not changed (its resourceVersion) for leaseDurationSeconds of this replica's own clock, as client-go
// judges it (no comparison of another machine's timestamps). Every write carries the Lease's resourceVersion, so
// two replicas that race get one 200 and one 409 — the loser stays a follower. A leader stops leading two thirds
// of the duration after the start of its last successful renewal unless it renews again (a timer, not only a
// failed attempt), so it has stopped before anyone else may start: at most one records at a time.
import type { KubeError } from './connection.ts';

export interface LeaseConn {
  json<T = Record<string, unknown>>(
    method: string,
    path: string,
    opts?: { body?: string; contentType?: string; timeoutMs?: number },
  ): Promise<T>;
}

interface LeaseObj {
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

export interface LeaseElectorOptions {
  conn: LeaseConn;
  namespace: string;
  name: string;
  identity: string;
  durationS?: number;
  renewMs?: number;
  onStart: () => void;
  onStop: (why: string) => void;
  log?: { info(o: object, m: string): void; warn(o: object, m: string): void };
  now?: () => number;
}

const micro = (t: number) => new Date(t).toISOString().replace('Z', '000Z');
const status = (e: unknown) => (e as Partial<KubeError>)?.status;

export class LeaseElector {
  private leading = false;
  private timer: NodeJS.Timeout | undefined;
  private deadline: NodeJS.Timeout | undefined;
  private inflight: Promise<unknown> | undefined;
  private stopped = false;
  /** the Lease as this replica last saw it change: its resourceVersion and when (local clock) */
  private seen: { rv: string; at: number } | undefined;
  private readonly durationS: number;
  private readonly renewMs: number;

  constructor(private readonly o: LeaseElectorOptions) {
    this.durationS = o.durationS ?? 15;
    this.renewMs = o.renewMs ?? Math.max(1000, Math.floor((this.durationS * 1000) / 3));
  }

  get isLeader(): boolean {
    return this.leading;
  }

  private now(): number {
    return this.o.now?.() ?? Date.now();
  }

  private path(name = true): string {
    const base = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.o.namespace)}/leases`;
    return name ? `${base}/${encodeURIComponent(this.o.name)}` : base;
  }

  start(): void {
    const loop = async () => {
      if (this.stopped) return;
      this.inflight = this.tryOnce().catch(() => undefined);
      await this.inflight;
      if (!this.stopped) {
        this.timer = setTimeout(() => void loop(), this.renewMs);
        this.timer.unref();
      }
    };
    void loop();
  }

  /** Stops electing; a leader gives the Lease up (renewTime cleared) so another replica takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.inflight; // an attempt in flight ends first (win() no longer starts anything)
    this.lose('stopped');
    // give the Lease up if this replica holds it (also when an attempt won just as it stopped)
    try {
      const cur = await this.o.conn.json<LeaseObj>('GET', this.path(), { timeoutMs: 5000 });
      if (cur.spec.holderIdentity === this.o.identity)
        await this.put({ ...cur, spec: { ...cur.spec, holderIdentity: '', renewTime: micro(0) } });
    } catch {
      /* it expires by itself */
    }
  }

  private put(l: LeaseObj): Promise<LeaseObj> {
    return this.o.conn.json<LeaseObj>('PUT', this.path(), {
      body: JSON.stringify({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', ...l }),
      contentType: 'application/json',
      timeoutMs: 5000,
    });
  }

  /** `started`: when the successful attempt began (the renewTime it wrote), on the local clock. */
  private win(started: number): void {
    if (this.stopped) return;
    if (this.deadline) clearTimeout(this.deadline);
    const left = started + (this.durationS * 1000 * 2) / 3 - this.now();
    this.deadline = setTimeout(() => this.lose('could not renew the lease in time'), Math.max(0, left));
    this.deadline.unref();
    if (this.leading) return;
    this.leading = true;
    this.o.log?.info({ lease: `${this.o.namespace}/${this.o.name}`, identity: this.o.identity }, 'lease: leading');
    this.o.onStart();
  }

  private lose(why: string): void {
    if (this.deadline) clearTimeout(this.deadline);
    this.deadline = undefined;
    if (!this.leading) return;
    this.leading = false;
    this.o.log?.warn({ lease: `${this.o.namespace}/${this.o.name}`, why }, 'lease: no longer leading');
    this.o.onStop(why);
  }

  /** One round: create, renew, or take over an expired Lease. Exposed for tests. */
  async tryOnce(): Promise<boolean> {
    const t = this.now();
    try {
      let cur: LeaseObj | undefined;
      try {
        cur = await this.o.conn.json<LeaseObj>('GET', this.path(), { timeoutMs: 5000 });
      } catch (e) {
        if (status(e) !== 404) throw e;
      }
      const spec = {
        holderIdentity: this.o.identity,
        leaseDurationSeconds: this.durationS,
        renewTime: micro(t),
      };
      if (!cur) {
        await this.o.conn.json('POST', this.path(false), {
          body: JSON.stringify({
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name: this.o.name, namespace: this.o.namespace },
            spec: { ...spec, acquireTime: micro(t), leaseTransitions: 0 },
          }),
          contentType: 'application/json',
          timeoutMs: 5000,
        });
        this.win(t);
        return true;
      }
      const holder = cur.spec.holderIdentity ?? '';
      const rv = cur.metadata.resourceVersion ?? '';
      if (this.seen?.rv !== rv) this.seen = { rv, at: t };
      const expired = !holder || t - this.seen.at > (cur.spec.leaseDurationSeconds ?? this.durationS) * 1000;
      if (holder !== this.o.identity && !expired) {
        this.lose(`held by ${holder}`);
        return false;
      }
      const mine = holder === this.o.identity;
      await this.put({
        metadata: cur.metadata,
        spec: {
          ...cur.spec,
          ...spec,
          ...(mine
            ? {}
            : { acquireTime: micro(t), leaseTransitions: (cur.spec.leaseTransitions ?? 0) + (holder ? 1 : 0) }),
        },
      });
      this.win(t);
      return true;
    } catch (e) {
      // a lost race: another replica wrote first. Otherwise (apiserver down, 403) the deadline timer of the last
      // successful renewal stops the leader in time.
      if (status(e) === 409) this.lose('another replica took the lease');
      return false;
    }
  }
}
