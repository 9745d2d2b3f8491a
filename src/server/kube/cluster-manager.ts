// One ClusterConnection + informers per kubeconfig context, and each
// cluster's connection state: connecting / connected / unreachable (stale
// since T). A probe notices a dead apiserver even when no watch is open, and
// nudges informers to reconnect as soon as it answers again.
import { EventEmitter } from 'node:events';
import { KubeConfig } from '@kubernetes/client-node';
import { ClusterConnection, KubeError } from './connection.ts';
import { Informer, type InformerEvent, type InformerOptions, type KubeObject, type ResourceKind } from './informer.ts';

export type ConnectionStatus = 'connecting' | 'connected' | 'unreachable';

export interface ClusterState {
  name: string;
  server: string;
  status: ConnectionStatus;
  since: string;
  /** set while the cached data may be outdated */
  staleSince?: string;
  reason?: string;
  kinds: Record<string, { synced: boolean; absent: boolean; objects: number; error?: string }>;
}

export interface ClusterEvents {
  state: [ClusterState];
  object: [string, InformerEvent];
}

/** What the last probes of an apiserver said: the error that makes the cluster unreachable, and timeouts in a row. */
export interface ProbeState {
  error?: KubeError;
  timeouts: number;
}

/**
 * The probe's verdict after one more answer. A refused connection or a non-200 is a verdict at once (a stopped
 * apiserver refuses within milliseconds). One timed-out probe is not: a loaded apiserver, or a busy event loop in
 * this process, answers the next one, and a cluster shown unreachable on one slow /readyz would flash "stale" and
 * make every plan of it unknown. The second timeout in a row (about 2 s later) is a verdict.
 */
export function nextProbe(prev: ProbeState, failure: KubeError | undefined): ProbeState {
  if (!failure) return { timeouts: 0 };
  if (failure.reason !== 'ETIMEDOUT') return { error: failure, timeouts: 0 };
  const timeouts = prev.timeouts + 1;
  return { error: timeouts >= 2 ? failure : prev.error, timeouts };
}

export class ManagedCluster {
  readonly informers = new Map<string, Informer>();
  state: ClusterState;
  private probeTimer?: NodeJS.Timeout;

  constructor(
    readonly name: string,
    readonly conn: ClusterConnection,
    private readonly emitter: EventEmitter<ClusterEvents>,
    private readonly probeMs: number,
    private readonly informerOpts: InformerOptions,
  ) {
    this.state = { name, server: conn.server, status: 'connecting', since: new Date().toISOString(), kinds: {} };
  }

  watch(kind: ResourceKind): Informer {
    const key = `${kind.group}/${kind.kind}`;
    const existing = this.informers.get(key);
    if (existing) return existing;
    const inf = new Informer(this.conn, kind, (e) => this.emitter.emit('object', this.name, e), {
      ...this.informerOpts,
      onState: () => this.recompute(),
    });
    this.informers.set(key, inf);
    inf.start();
    return inf;
  }

  get(kind: ResourceKind | string, namespace: string | undefined, name: string): KubeObject | undefined {
    const key = typeof kind === 'string' ? kind : `${kind.group}/${kind.kind}`;
    return this.informers.get(key)?.store.get(`${namespace ?? ''}/${name}`);
  }

  list(kind: ResourceKind | string): KubeObject[] {
    const key = typeof kind === 'string' ? kind : `${kind.group}/${kind.kind}`;
    return [...(this.informers.get(key)?.store.values() ?? [])];
  }

  start(): void {
    const probe = async () => {
      try {
        const res = await this.conn.request('GET', '/readyz', { timeoutMs: 3000 });
        if (res.status !== 200) throw this.conn.httpError(res, 'readyz');
        this.probe = nextProbe(this.probe, undefined);
        // the apiserver answers: informers waiting out a back-off after a network error retry now
        // (a 429 keeps its Retry-After)
        for (const i of this.informers.values()) if (i.state.error && i.state.error.status !== 429) i.nudge();
      } catch (e) {
        this.probe = nextProbe(this.probe, e instanceof KubeError ? e : new KubeError(String(e), this.name, 0));
      }
      this.recompute();
      this.probeTimer = setTimeout(probe, this.probeMs);
      this.probeTimer.unref();
    };
    void probe();
  }

  private probe: ProbeState = { timeouts: 0 };

  private recompute(): void {
    const kinds: ClusterState['kinds'] = {};
    let allSynced = true;
    let err: KubeError | undefined = this.probe.error;
    for (const [k, inf] of this.informers) {
      kinds[k] = {
        synced: inf.state.synced,
        absent: inf.state.absent,
        objects: inf.store.size,
        ...(inf.state.error ? { error: inf.state.error.message } : {}),
      };
      if (!inf.state.synced) allSynced = false;
      if (inf.state.error && !err) err = inf.state.error;
    }
    const prev = this.state;
    let next: ClusterState;
    const now = new Date().toISOString();
    if (err) {
      const reason =
        err.status === 429
          ? `throttled by the apiserver (429): ${err.message}`
          : err.status === 403
            ? `forbidden: ${err.message}`
            : err.message;
      next = {
        ...prev,
        status: 'unreachable',
        since: prev.status === 'unreachable' ? prev.since : now,
        staleSince: prev.staleSince ?? (prev.status === 'connected' ? now : prev.since),
        reason,
        kinds,
      };
    } else if (allSynced && this.informers.size > 0) {
      next = { ...prev, status: 'connected', since: prev.status === 'connected' ? prev.since : now, kinds };
      delete next.staleSince;
      delete next.reason;
    } else {
      next = { ...prev, status: prev.status === 'unreachable' ? 'unreachable' : 'connecting', kinds };
    }
    const changed = next.status !== prev.status || next.reason !== prev.reason;
    this.state = next;
    if (changed) this.emitter.emit('state', next);
  }

  async stop(): Promise<void> {
    clearTimeout(this.probeTimer);
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
    this.conn.close();
  }
}

export class ClusterManager extends EventEmitter<ClusterEvents> {
  readonly clusters = new Map<string, ManagedCluster>();

  constructor(private readonly opts: { probeMs?: number; informer?: InformerOptions } = {}) {
    super();
    this.setMaxListeners(100);
  }

  /** Loads contexts from a kubeconfig file; throws a clear error naming the file or context. */
  static loadContexts(file: string, contexts: string[] | undefined): Array<{ name: string; kc: KubeConfig }> {
    const base = new KubeConfig();
    try {
      base.loadFromFile(file);
    } catch (e) {
      throw new Error(`cannot read kubeconfig ${file}: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`);
    }
    const available = base.getContexts().map((c) => c.name);
    if (available.length === 0) throw new Error(`kubeconfig ${file} has no contexts`);
    const wanted = contexts && contexts.length ? contexts : available;
    return wanted.map((name) => {
      if (!available.includes(name))
        throw new Error(`context "${name}" not found in kubeconfig ${file} (available: ${available.join(', ')})`);
      const kc = new KubeConfig();
      kc.loadFromFile(file);
      kc.setCurrentContext(name);
      if (!kc.getCurrentCluster()) throw new Error(`context "${name}" in ${file} names a cluster that is not defined`);
      return { name, kc };
    });
  }

  add(name: string, kc: KubeConfig): ManagedCluster {
    const c = new ManagedCluster(
      name,
      new ClusterConnection(name, kc),
      this,
      this.opts.probeMs ?? 2000,
      this.opts.informer ?? {},
    );
    this.clusters.set(name, c);
    c.start();
    return c;
  }

  watchEverywhere(kinds: ResourceKind[]): void {
    for (const c of this.clusters.values()) for (const k of kinds) c.watch(k);
  }

  states(): ClusterState[] {
    return [...this.clusters.values()].map((c) => c.state);
  }

  async stop(): Promise<void> {
    await Promise.all([...this.clusters.values()].map((c) => c.stop()));
  }
}
