// An informer cache for one kind on one cluster: list (paged), then watch
// from the list's resourceVersion with bookmarks; on 410 Gone relist and emit
// only the real differences (never a false delete); on errors back off
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
        const rv = await this.list();
        attempt = 0;
        this.setState({ synced: true, absent: false, error: undefined, lastSyncAt: new Date().toISOString() });
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
    this.lastEventAt = Date.now();
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
            const code = (obj as { code?: number }).code;
            if (code === 410) {
              gone = true;
              return;
            }
            throw new KubeError(
              `watch error: ${String((obj as { message?: string }).message)}`,
              this.conn.name,
              code ?? 500,
            );
          }
          const newRv = obj.metadata?.resourceVersion;
          if (newRv) rv = newRv;
          if (ev.type === 'BOOKMARK') return;
          const k = keyOf(obj);
          const old = this.store.get(k);
          if (ev.type === 'DELETED') {
            this.store.delete(k);
            this.onEvent({ type: 'delete', kind: this.kind, obj });
          } else {
            this.store.set(k, compactObject(obj));
            this.onEvent({ type: old ? 'update' : 'add', kind: this.kind, obj, ...(old ? { old } : {}) });
          }
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
