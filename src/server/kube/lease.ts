// One release recorder among several BFF replicas (issue 16): a coordination.k8s.io/v1 Lease, as controllers
// elect their leader. The holder renews it every `renewMs`; another replica takes it over only once its
// renewTime is older than leaseDurationSeconds. Every write carries the Lease's resourceVersion, so two replicas
// that race get one 200 and one 409 — the loser stays a follower. A leader that cannot renew for the lease
// duration (apiserver down, 403) stops leading before anyone else may start: at most one records at a time.
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
  private lastRenew = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
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
      await this.tryOnce().catch(() => undefined);
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
    if (!this.leading) return;
    this.lose('stopped');
    try {
      const cur = await this.o.conn.json<LeaseObj>('GET', this.path());
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

  private win(): void {
    this.lastRenew = this.now();
    if (this.leading) return;
    this.leading = true;
    this.o.log?.info({ lease: `${this.o.namespace}/${this.o.name}`, identity: this.o.identity }, 'lease: leading');
    this.o.onStart();
  }

  private lose(why: string): void {
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
        this.win();
        return true;
      }
      const holder = cur.spec.holderIdentity ?? '';
      const renewed = cur.spec.renewTime ? Date.parse(cur.spec.renewTime) : 0;
      const expired = !holder || renewed + (cur.spec.leaseDurationSeconds ?? this.durationS) * 1000 < t;
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
      this.win();
      return true;
    } catch (e) {
      // a lost race (409/422) or an apiserver that does not answer: lead no longer than the lease lasts
      if (status(e) === 409) this.lose('another replica took the lease');
      // (a renew deadline of two thirds of the duration, as client-go's: the leader stops before others may start)
      else if (this.leading && this.now() - this.lastRenew >= (this.durationS * 1000 * 2) / 3)
        this.lose(`cannot renew: ${e instanceof Error ? e.message : String(e)}`);
      return false;
    }
  }
}
