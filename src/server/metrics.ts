// Prometheus metrics of the BFF (GET /metrics, metrics-routes.ts). One registry per app instance.
//
// Cardinality is bounded by construction: labels are route templates (never the raw URL), HTTP methods,
// status classes, cluster names (kubeconfig contexts: configured, few), watched kinds (a fixed list),
// and enums (sync, health, preview status, append result). Never repo URLs, user names, namespaces, object
// names or UIDs. Gauges of the stores (prune previews, freezes) and caches are computed at scrape time.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { EvidenceRecorder } from './evidence/index.ts';
import type { ClusterManager } from './kube/cluster-manager.ts';
import type { AppCatalog } from './apps/index.ts';
import type { ObjectIndex } from './kube/object-index.ts';
import type { EvidenceStore } from './evidence/index.ts';
import { FreezeStore } from './freeze/index.ts';
import { PruneStore } from './prune/index.ts';
import type { StateBus } from './store/state-bus.ts';
import type { SinkStatus } from './sinks/index.ts';

export interface MetricsSources {
  clusters: ClusterManager;
  catalog: AppCatalog;
  index?: ObjectIndex | undefined;
  recorder: EvidenceRecorder;
  store: EvidenceStore;
  /** the state bus (replicas) and the sessions this process holds */
  bus?: StateBus | undefined;
  sessions?: { size: number } | undefined;
  /** the release recorder's counts (undefined while this replica does not record) */
  releaseStats?: (() => { followed: number; verificationsPending: number } | undefined) | undefined;
  /** the event sinks (counts from this replica's delivery; absent where it does not deliver) */
  sinks?: { delivery: { status(): SinkStatus[] }; delivering(): boolean } | undefined;
}

const PREFIX = 'gitops_console_';
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const OWN_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);

/** The route label: the template an API route was registered with; static files and misses are one label each. */
export function routeLabel(req: FastifyRequest): string {
  const url = req.routeOptions.url;
  if (!url) return 'unmatched';
  if (url.startsWith('/api/') || OWN_ROUTES.has(url)) return url;
  return 'static';
}

export const statusClass = (code: number): string => `${Math.floor(code / 100)}xx`;

export class ConsoleMetrics {
  readonly registry = new Registry();
  private readonly httpDuration: Histogram<'route' | 'method' | 'status_class'>;
  private readonly httpErrors: Counter<'route' | 'method' | 'status'>;
  private readonly appendSeconds: Histogram<'result'>;
  private readonly appendFailures: Counter;
  private readonly onAppend = (seconds: number, ok: boolean) => {
    this.appendSeconds.observe({ result: ok ? 'ok' : 'error' }, seconds);
    if (!ok) this.appendFailures.inc();
  };

  constructor(
    private readonly src: MetricsSources,
    opts: { defaultMetrics?: boolean } = {},
  ) {
    const registers = [this.registry];
    if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });

    this.httpDuration = new Histogram({
      name: `${PREFIX}http_request_duration_seconds`,
      help: 'HTTP request duration by route template, method and status class (SSE streams: their whole life)',
      labelNames: ['route', 'method', 'status_class'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.httpErrors = new Counter({
      name: `${PREFIX}http_errors_total`,
      help: 'HTTP responses with a 4xx or 5xx status, by route template, method and status code',
      labelNames: ['route', 'method', 'status'],
      registers,
    });

    // informers: lists (the first and every relist after a 410 or an error), watch lag, cache sizes
    const informers = () =>
      [...src.clusters.clusters.values()].flatMap((c) =>
        [...c.informers.values()].map((inf) => ({
          cluster: c.name,
          // Deployment.apps, Kustomization.kustomize.toolkit.fluxcd.io, Pod
          kind: inf.kind.group ? `${inf.kind.kind}.${inf.kind.group}` : inf.kind.kind,
          inf,
        })),
      );
    new Counter({
      name: `${PREFIX}informer_lists_total`,
      help: 'Complete LISTs per informer: the first one, then every relist (410 Gone, watch errors)',
      labelNames: ['cluster', 'kind'],
      registers,
      collect() {
        this.reset();
        for (const { cluster, kind, inf } of informers()) this.inc({ cluster, kind }, inf.state.relists);
      },
    });
    new Gauge({
      name: `${PREFIX}informer_watch_idle_seconds`,
      help: 'Seconds since the informer last heard from its watch (an event or a bookmark) or completed a list',
      labelNames: ['cluster', 'kind'],
      registers,
      collect() {
        this.reset();
        const now = Date.now();
        for (const { cluster, kind, inf } of informers())
          if (inf.lastEventAt) this.set({ cluster, kind }, (now - inf.lastEventAt) / 1000);
      },
    });
    new Gauge({
      name: `${PREFIX}informer_synced`,
      help: '1 when the informer has listed its kind and watches it without error',
      labelNames: ['cluster', 'kind'],
      registers,
      collect() {
        this.reset();
        for (const { cluster, kind, inf } of informers())
          this.set({ cluster, kind }, inf.state.synced && !inf.state.error ? 1 : 0);
      },
    });
    new Gauge({
      name: `${PREFIX}informer_cache_objects`,
      help: 'Objects in the informer cache per cluster and kind',
      labelNames: ['cluster', 'kind'],
      registers,
      collect() {
        this.reset();
        for (const { cluster, kind, inf } of informers()) this.inc({ cluster, kind }, inf.store.size);
      },
    });
    new Gauge({
      name: `${PREFIX}object_index_objects`,
      help: 'Objects in the resource-tree index per cluster',
      labelNames: ['cluster'],
      registers,
      collect() {
        this.reset();
        for (const [cluster, n] of src.index?.sizes() ?? []) this.set({ cluster }, n);
      },
    });
    new Gauge({
      name: `${PREFIX}cluster_connected`,
      help: '1 when the cluster is connected, 0 while connecting or unreachable',
      labelNames: ['cluster'],
      registers,
      collect() {
        this.reset();
        for (const s of src.clusters.states()) this.set({ cluster: s.name }, s.status === 'connected' ? 1 : 0);
      },
    });
    new Gauge({
      name: `${PREFIX}apps`,
      help: 'GitOps apps per cluster, sync and health',
      labelNames: ['cluster', 'sync', 'health'],
      registers,
      collect() {
        this.reset();
        for (const a of src.catalog.list()) this.inc({ cluster: a.cluster, sync: a.sync, health: a.health });
      },
    });

    // evidence: append latency and failures, the recorder's backlog
    this.appendSeconds = new Histogram({
      name: `${PREFIX}evidence_append_duration_seconds`,
      help: 'Evidence store appends (hash-chained, one transaction each) by result',
      labelNames: ['result'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.appendFailures = new Counter({
      name: `${PREFIX}evidence_append_failures_total`,
      help: 'Evidence appends that failed (every retry counts)',
      registers,
    });
    src.recorder.on('append', this.onAppend);
    new Gauge({
      name: `${PREFIX}evidence_pending`,
      help: 'Observations and outcomes waiting for the evidence store (retried until written)',
      registers,
      collect() {
        this.set(src.recorder.status().pending);
      },
    });
    new Gauge({
      name: `${PREFIX}evidence_store_failing`,
      help: '1 while the evidence store fails (the last append failed and none succeeded since)',
      registers,
      collect() {
        this.set(src.recorder.status().failing ? 1 : 0);
      },
    });
    new Counter({
      name: `${PREFIX}evidence_refused_actions_total`,
      help: 'Actions refused because their intent could not be recorded (fail closed)',
      registers,
      collect() {
        this.reset();
        this.inc(src.recorder.status().refused);
      },
    });

    // governance state in the store: computed per scrape; a store that cannot answer leaves them out
    const prune = new PruneStore(src.store);
    const freezes = new FreezeStore(src.store);
    new Gauge({
      name: `${PREFIX}prune_previews`,
      help: 'Prune previews by status',
      labelNames: ['status'],
      registers,
      async collect() {
        this.reset();
        try {
          for (const [status, n] of Object.entries(await prune.countByStatus())) this.set({ status }, n);
        } catch {
          // the store is down: no sample (evidence_store_failing says why)
        }
      },
    });
    new Gauge({
      name: `${PREFIX}freezes_active`,
      help: 'Incident freezes holding their apps (active or ending)',
      registers,
      async collect() {
        this.reset();
        try {
          this.set(await freezes.countActive());
        } catch {
          // as above
        }
      },
    });
    new Gauge({
      name: `${PREFIX}state_bus_listening`,
      help: "1 when this replica hears the other replicas' state changes (PostgreSQL LISTEN; always 1 alone)",
      registers,
      collect() {
        this.set(src.bus ? (src.bus.connected() ? 1 : 0) : 1);
      },
    });
    new Counter({
      name: `${PREFIX}state_bus_notifications_total`,
      help: 'State-change notifications to and from the other replicas (sent, received, failed, reconnects)',
      labelNames: ['event'],
      registers,
      collect() {
        this.reset();
        const counts = (src.bus as { counts?: Record<string, number> } | undefined)?.counts;
        for (const [event, n] of Object.entries(counts ?? {})) this.inc({ event }, n);
      },
    });
    new Gauge({
      name: `${PREFIX}release_verifications_pending`,
      help: 'Releases followed by the recorder whose verification (the real request check) is not recorded yet',
      registers,
      collect() {
        this.reset();
        const st = src.releaseStats?.();
        if (st) this.set(st.verificationsPending);
      },
    });
    new Gauge({
      name: `${PREFIX}releases_followed`,
      help: 'Releases the recorder follows now (their states still being recorded); absent on a replica that does not record',
      registers,
      collect() {
        this.reset();
        const st = src.releaseStats?.();
        if (st) this.set(st.followed);
      },
    });
    /** one gauge per field of each sink's status, on the replica that delivers */
    const sinkGauge = (name: string, help: string, value: (s: SinkStatus) => number | null) =>
      new Gauge({
        name: `${PREFIX}${name}`,
        help,
        labelNames: ['sink'],
        registers,
        collect() {
          this.reset();
          if (!src.sinks?.delivering()) return;
          for (const s of src.sinks.delivery.status()) {
            const v = value(s);
            if (v !== null) this.set({ sink: s.name }, v);
          }
        },
      });
    sinkGauge(
      'sink_up',
      '1 while the event sink takes records; 0 while it is down (its last record a dead letter)',
      (s) => (s.down ? 0 : 1),
    );
    sinkGauge(
      'sink_lag_records',
      'Evidence records after the sink cursor (not yet delivered or given up on)',
      (s) => s.lag,
    );
    sinkGauge(
      'sink_delivered',
      'Records the event sink took since this replica started delivering',
      (s) => s.delivered,
    );
    sinkGauge(
      'sink_failed_attempts',
      'Failed delivery attempts to the event sink (each retry counts)',
      (s) => s.failedAttempts,
    );
    sinkGauge('sink_dead_letters', 'Records in the event sink dead-letter list', (s) => s.deadLettered);
    new Gauge({
      name: `${PREFIX}sessions_cached`,
      help: 'Sessions this replica holds in memory (all of them live in the store)',
      registers,
      collect() {
        this.set(src.sessions?.size ?? 0);
      },
    });
  }

  /** Times every response of the app (hook on the root instance: API, health, static files and misses). */
  install(app: FastifyInstance): void {
    app.addHook('onResponse', async (req, rep) => {
      const route = routeLabel(req);
      const method = METHODS.has(req.method) ? req.method : 'other';
      const code = rep.statusCode;
      this.httpDuration.observe({ route, method, status_class: statusClass(code) }, rep.elapsedTime / 1000);
      if (code >= 400) this.httpErrors.inc({ route, method, status: String(code) });
    });
    app.addHook('onClose', async () => {
      this.src.recorder.off('append', this.onAppend);
    });
  }
}
