// An informer cache for one kind on one cluster: a streamed list (WatchList: one watch that sends every object,
// then a bookmark marking the end of the initial events, then the changes; Kubernetes ≥ 1.32 by default) or,
// where the apiserver does not stream lists, a paged list; then a watch from the list's resourceVersion with
// bookmarks; on 410 Gone relist and emit only the real differences (never a false delete); on errors back off
// exponentially with jitter, honouring Retry-After on 429.
import { compactObject } from './compact.ts';
import { KubeError, type ClusterConnection } from './connection.ts';

export interface ResourceKind {
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
}

export type KubeObject = Record<string, unknown> & {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; uid?: string };
};

export type InformerEventType = 'add' | 'update' | 'delete';
export interface InformerEvent {
  type: InformerEventType;
  kind: ResourceKind;
  obj: KubeObject;
  old?: KubeObject;
}

export interface InformerState {
  synced: boolean;
  absent: boolean;
  error?: KubeError;
  lastSyncAt?: string;
  relists: number;
}

export interface InformerOptions {
  pageSize?: number;
  /** list by streaming (WatchList) where the apiserver can (default true); false: paged lists only */
  watchList?: boolean;
  watchTimeoutSeconds?: number;
  maxBackoffMs?: number;
  baseBackoffMs?: number;
  /** called on sync / error changes */
  onState?: (s: InformerState) => void;
  random?: () => number;
}

export function resourcePath(k: ResourceKind, namespace?: string): string {
  const base = k.group ? `/apis/${k.group}/${k.version}` : `/api/${k.version}`;
  return namespace && k.namespaced ? `${base}/namespaces/${namespace}/${k.plural}` : `${base}/${k.plural}`;
}

export const keyOf = (o: KubeObject): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

/** Exponential back-off with "equal jitter": half fixed, half random. */
export function backoffMs(attempt: number, base: number, max: number, random: () => number): number {
  const exp = Math.min(max, base * 2 ** Math.min(attempt, 20));
  return Math.round(exp / 2 + (random() * exp) / 2);
}

export class Informer {
  readonly store = new Map<string, KubeObject>();
  state: InformerState = { synced: false, absent: false, relists: 0 };
  /** how the last list was read: streamed (WatchList) or paged (metrics, tests) */
  listMode: 'stream' | 'paged' | undefined;
  /** when the last list completed or the last watch event (bookmarks too) arrived, epoch ms (metrics: watch lag) */
  lastEventAt = 0;
  private abort = new AbortController();
  private stopped = false;
  private running?: Promise<void>;
  private wake?: () => void;

  constructor(
    private readonly conn: ClusterConnection,
    readonly kind: ResourceKind,
    private readonly onEvent: (e: InformerEvent) => void,
    private readonly opts: InformerOptions = {},
  ) {}

  start(): void {
    this.running ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    this.wake?.();
    await this.running;
  }

  /** Retry now (e.g. after the cluster probe sees the apiserver back). */
  nudge(): void {
    this.wake?.();
  }

  private setState(p: Partial<InformerState>): void {
    this.state = { ...this.state, ...p };
    this.opts.onState?.(this.state);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((r) => {
      const t = setTimeout(r, ms);
      this.wake = () => {
        clearTimeout(t);
        r();
      };
    });
  }

  private async run(): Promise<void> {
    let attempt = 0;
    const random = this.opts.random ?? Math.random;
    while (!this.stopped) {
      try {
        if (this.opts.watchList !== false && !this.streamUnsupported) {
          const r = await this.streamList(() => (attempt = 0));
          // 'unsupported': paged lists from now on; 'gone': the stream's watch expired (410), list again
          if (typeof r === 'string') continue;
          await this.watchFrom(r.rv);
          continue;
        }
        const rv = await this.list();
        attempt = 0;
        await this.watchFrom(rv);
      } catch (e) {
        if (this.stopped) return;
        const err = e instanceof KubeError ? e : new KubeError(String(e), this.conn.name, 0, 'Error');
        if (err.status === 404) {
          // the kind is not served (CRD not installed): nothing to cache; look again later
          for (const [k, o] of this.store) {
            this.store.delete(k);
            this.onEvent({ type: 'delete', kind: this.kind, obj: o });
          }
          this.setState({ synced: true, absent: true, error: undefined });
          await this.sleep(30_000);
          continue;
        }
        this.setState({ error: err });
        const delay =
          err.retryAfterMs ??
          backoffMs(attempt++, this.opts.baseBackoffMs ?? 500, this.opts.maxBackoffMs ?? 30_000, random);
        await this.sleep(delay);
      }
    }
  }

  /** the apiserver does not stream lists (WatchList): paged lists only */
  private streamUnsupported = false;

  /**
   * A streamed list: a watch with `sendInitialEvents=true` gets every object as ADDED from the watch cache, then a
   * bookmark annotated `k8s.io/initial-events-end` (then the store is replaced by diff, as a paged list does),
   * then changes on the same stream. Returns the resourceVersion to watch on from when the stream ends; 'gone'
   * when its watch expired (410: list again); 'unsupported' when the apiserver does not stream lists (a 400/422,
   * a plain bookmark or the end of the stream before the end of the initial events): the caller then pages.
   */
  private async streamList(onSynced: () => void): Promise<{ rv: string } | 'gone' | 'unsupported'> {
    const q = new URLSearchParams({
      watch: '1',
      sendInitialEvents: 'true',
      resourceVersionMatch: 'NotOlderThan',
      allowWatchBookmarks: 'true',
      timeoutSeconds: String(this.opts.watchTimeoutSeconds ?? 240),
    });
    const seen = new Map<string, KubeObject>();
    const apiVersion = this.kind.group ? `${this.kind.group}/${this.kind.version}` : this.kind.version;
    let initial = true;
    let unsupported = false;
    let gone = false;
    let rv = '';
    const ac = new AbortController();
    const stop = () => ac.abort();
    this.abort.signal.addEventListener('abort', stop, { once: true });
    try {
      await this.conn.watch(
        `${resourcePath(this.kind)}?${q}`,
        (ev) => {
          const obj = ev.object as KubeObject;
          this.lastEventAt = Date.now();
          if (ev.type === 'ERROR') {
            gone = this.watchError(obj);
            return;
          }
          const newRv = obj.metadata?.resourceVersion;
          if (newRv) rv = newRv;
          if (!initial) {
            this.applyEvent(ev.type, obj);
            return;
          }
          if (ev.type === 'BOOKMARK') {
            const annotations = (obj.metadata as { annotations?: Record<string, string> } | undefined)?.annotations;
            if (annotations?.['k8s.io/initial-events-end'] !== 'true') {
              unsupported = true; // a plain watch's bookmark: this apiserver does not stream lists
              ac.abort();
              return;
            }
            initial = false;
            this.replaceStore(seen, 'stream');
            seen.clear();
            onSynced();
            return;
          }
          obj.apiVersion ??= apiVersion;
          obj.kind ??= this.kind.kind;
          if (ev.type === 'DELETED') seen.delete(keyOf(obj));
          else seen.set(keyOf(obj), compactObject(obj));
        },
        ac.signal,
      );
    } catch (e) {
      // our own abort (a plain bookmark: `unsupported` is set) may surface as the response's error, not an end
      if (unsupported || this.stopped) {
        /* handled below */
      } else if (e instanceof KubeError && (e.status === 400 || e.status === 422) && initial) unsupported = true;
      else if (e instanceof KubeError && e.status === 410) gone = true;
      else throw e;
    } finally {
      this.abort.signal.removeEventListener('abort', stop);
    }
    if (this.stopped) return { rv };
    if (gone) return 'gone';
    if (initial) unsupported = true; // the stream ended before the end of the initial events
    if (unsupported) {
      this.streamUnsupported = true;
      return 'unsupported';
    }
    return { rv };
  }

  /** A watch's ERROR event: true for 410 Gone (the caller lists again); any other status is thrown */
  private watchError(status: KubeObject): true {
    const code = (status as { code?: number }).code;
    if (code === 410) return true;
    throw new KubeError(
      `watch error: ${String((status as { message?: string }).message)}`,
      this.conn.name,
      code ?? 500,
    );
  }

  /** Replaces the store by diff with a complete, fresh list: only real differences become events. */
  private replaceStore(seen: Map<string, KubeObject>, mode: 'stream' | 'paged'): void {
    this.lastEventAt = Date.now();
    this.listMode = mode;
    this.setState({ relists: this.state.relists + 1 });
    for (const [k, obj] of seen) {
      const old = this.store.get(k);
      if (!old) {
        this.store.set(k, obj);
        this.onEvent({ type: 'add', kind: this.kind, obj });
      } else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) {
        this.store.set(k, obj);
        this.onEvent({ type: 'update', kind: this.kind, obj, old });
      }
    }
    for (const [k, old] of this.store) {
      if (!seen.has(k)) {
        // truly gone: it is absent from a complete, fresh list
        this.store.delete(k);
        this.onEvent({ type: 'delete', kind: this.kind, obj: old });
      }
    }
    this.setState({ synced: true, absent: false, error: undefined, lastSyncAt: new Date().toISOString() });
  }

  /** One watch event on the store (after the list). */
  private applyEvent(type: string, obj: KubeObject): void {
    if (type === 'BOOKMARK') return;
    const k = keyOf(obj);
    const old = this.store.get(k);
    if (type === 'DELETED') {
      this.store.delete(k);
      this.onEvent({ type: 'delete', kind: this.kind, obj });
    } else {
      this.store.set(k, compactObject(obj));
      this.onEvent({ type: old ? 'update' : 'add', kind: this.kind, obj, ...(old ? { old } : {}) });
    }
  }

  /** Paged list; replaces the store by diff and returns the list's resourceVersion. */
  private async list(): Promise<string> {
    const seen = new Map<string, KubeObject>();
    let cont = '';
    let rv = '';
    const limit = this.opts.pageSize ?? 500;
    do {
      const q = new URLSearchParams({ limit: String(limit) });
      if (cont) q.set('continue', cont);
      const page = await this.conn.json<{
        metadata?: { resourceVersion?: string; continue?: string };
        items?: KubeObject[];
      }>('GET', `${resourcePath(this.kind)}?${q}`, { timeoutMs: 60_000 });
      const apiVersion = this.kind.group ? `${this.kind.group}/${this.kind.version}` : this.kind.version;
      for (const item of page.items ?? []) {
        // list items carry no kind/apiVersion; put them back so objects are self-describing
        item.apiVersion ??= apiVersion;
        item.kind ??= this.kind.kind;
        seen.set(keyOf(item), compactObject(item));
      }
      cont = page.metadata?.continue ?? '';
      rv = page.metadata?.resourceVersion ?? rv;
    } while (cont);
    this.replaceStore(seen, 'paged');
    return rv;
  }

  private async watchFrom(startRv: string): Promise<void> {
    let rv = startRv;
    while (!this.stopped) {
      const q = new URLSearchParams({
        watch: '1',
        allowWatchBookmarks: 'true',
        resourceVersion: rv,
        timeoutSeconds: String(this.opts.watchTimeoutSeconds ?? 240),
      });
      let gone = false;
      const watching = this.conn.watch(
        `${resourcePath(this.kind)}?${q}`,
        (ev) => {
          const obj = ev.object as KubeObject;
          this.lastEventAt = Date.now();
          if (ev.type === 'ERROR') {
            gone = this.watchError(obj);
            return;
          }
          const newRv = obj.metadata?.resourceVersion;
          if (newRv) rv = newRv;
          this.applyEvent(ev.type, obj);
        },
        this.abort.signal,
      );
      try {
        await watching;
      } catch (e) {
        // some apiservers answer a too-old resourceVersion with HTTP 410 instead of an ERROR event
        if (e instanceof KubeError && e.status === 410) return;
        throw e;
      }
      if (gone) return; // 410: resourceVersion too old → caller relists
    }
  }
}
