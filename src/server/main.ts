// Starts the BFF: config → (sandbox) → evidence store → clusters → catalog → listen.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildApp } from './app.ts';
import type { AccessRule } from './auth/index.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { ClusterManager } from './kube/cluster-manager.ts';
import { APP_WATCH_KINDS } from './kube/kinds.ts';
import { AppCatalog, imageAutomationFor } from './apps/index.ts';
import { DriftTracker } from './drift/index.ts';
import { ObjectIndex } from './kube/object-index.ts';
import { loadMaskKey } from './kube/secret-mask.ts';
import { openEvidenceStore } from './evidence/index.ts';
import { EvidenceRecorder } from './evidence/index.ts';
import { OpenIntents } from './evidence/index.ts';
import { checkpointIntervalMs, EvidenceCheckpoints } from './evidence/index.ts';
import { loadSigningKey, signingKeyPath } from './evidence/index.ts';
import { Accounts, INITIAL_PASSWORD_FILE, passwordCostOf } from './auth/index.ts';
import { OidcLogin } from './auth/index.ts';
import { SessionStore } from './auth/index.ts';
import { DbSessionBackend } from './auth/index.ts';
import { dialectOf } from './store/dialect.ts';
import { dbCounters } from './auth/index.ts';
import { LocalStateBus, PostgresStateBus, type StateBus } from './store/state-bus.ts';
import type pg from 'pg';
import { AccessReviewer } from './auth/index.ts';
import { startStartupServer } from './startup-page.ts';
import { loadForgeDirectory } from './forge/forge-directory.ts';
import { configureUrlPolicy } from './git/url-policy.ts';
import { sandboxGitHosts } from './sandbox-git-hosts.ts';
import { sandboxEnvironmentRules } from './sandbox-environments.ts';
import { sandboxDefaults, type SandboxFacts } from './sandbox-defaults.ts';
import { loadSandboxKit } from './tryit/index.ts';
import { dirname, join } from 'node:path';
import {
  ManifestRetention,
  ManifestStore,
  parseRegistryMirrors,
  ReleaseRecorder,
  validateRender,
} from './releases/index.ts';
import { LeaseElector } from './kube/lease.ts';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { DiffService } from './diff/index.ts';
import { FreezeStore } from './freeze/index.ts';
import { FreezeReminder, NotificationPrefs, Notifier } from './notify/index.ts';
import { loadSinks, SinkDelivery, SinkStore, type SinksDeps } from './sinks/index.ts';

export interface RunningConsole {
  url: string;
  /** every API route with its access rule */
  routes: Array<{ method: string; url: string; access: AccessRule }>;
  /** the kubeconfig the console connects with (in sandbox mode: the sandbox's kubeconfig-console) */
  kubeconfig: string;
  close(): Promise<void>;
}

export interface StartOptions {
  /** where log lines go (tests scan them for secrets) */
  logStream?: NodeJS.WritableStream;
  /** where the first-start one-time password is printed (stdout) */
  announce?: (line: string) => void;
}

export async function startConsole(cfg: Config, opts: StartOptions = {}): Promise<RunningConsole> {
  let kubeconfig = cfg.kubeconfig;
  let gitAllowHosts = cfg.git.allowHosts;
  let flaggerGateHosts = cfg.flaggerGateHosts;
  if (cfg.sandbox) {
    // the embedded default: a local sandbox cluster pair, started (or reused) here
    const { startSandbox, CONSOLE_KUBECONFIG_PATH, REPO_ROOT } = await import('../../sandbox/sandbox.ts');
    const { BuildProgress, componentsOf } = await import('../../sandbox/build-progress.ts');
    process.stderr.write('no kubeconfig given (or --sandbox): starting the local sandbox clusters…\n');
    // the console's address answers at once with the build's progress (the first build takes a while)
    const progress = new BuildProgress(componentsOf(readFileSync(join(REPO_ROOT, 'sandbox/build.sh'), 'utf8')));
    const page = cfg.port
      ? await startStartupServer(cfg.host, cfg.port, () => progress.snapshot()).catch(() => undefined)
      : undefined;
    if (page) process.stderr.write(`the console's start-up page: http://${cfg.host}:${cfg.port}/\n`);
    const ticker = setInterval(() => process.stderr.write(`${progress.summary()}\n`), 30_000);
    try {
      const st = await startSandbox({
        reuse: true,
        onBuildLine: (line) => {
          if (progress.line(line)) process.stderr.write(`${progress.summary()}\n`);
          if (/assets ready/.test(line)) progress.finishBuild();
        },
      });
      // the sandbox's forge (Git and API) and each cluster's Flux artifact server listen on 127.0.0.1: those
      // host:ports, and no other loopback address, pass the Git URL policy (src/server/git/url-policy.ts)
      gitAllowHosts = [...gitAllowHosts, ...sandboxGitHosts(st)];
      cfg.environments ??= sandboxEnvironmentRules(st.clusters); // each sandbox namespace is its environment
      // complete release chains from the first start: the sandbox's checks, registry and forge token
      const d = sandboxDefaults(st as unknown as SandboxFacts, join(cfg.dataDir, 'sandbox'));
      cfg.releases.verificationsFile ??= d.verificationsFile;
      cfg.releases.registryMirrors ??= d.registryMirrors;
      cfg.forgeTokensFile ??= d.forgeTokensFile;
      // the seed's Canaries' gates (the sandbox's load tester stand-ins), beside any the operator named
      flaggerGateHosts = [...flaggerGateHosts, ...d.flaggerGateHosts];
      progress.ready();
    } catch (e) {
      progress.failed(e instanceof Error ? e.message : String(e));
      throw e;
    } finally {
      clearInterval(ticker);
      await page?.close();
    }
    // the console's own least-privilege identity (deploy/rbac.yaml), as it ships: the admin kubeconfig is for
    // the sandbox's set-up and its scenarios only
    kubeconfig = CONSOLE_KUBECONFIG_PATH;
  }
  configureUrlPolicy({ ...cfg.git, allowHosts: gitAllowHosts });
  if (!kubeconfig) throw new ConfigError('no kubeconfig');
  const contexts = ClusterManager.loadContexts(kubeconfig, cfg.contexts);
  loadMaskKey(cfg.dataDir, cfg.maskKeyFile); // Secret masks and render hashes stay equal across restarts
  const store = await openEvidenceStore({
    dataDir: cfg.dataDir,
    ...(cfg.databaseUrl ? { databaseUrl: cfg.databaseUrl } : {}),
  });
  const clusters = new ClusterManager();
  const authFile = cfg.authFile ?? join(cfg.dataDir, 'auth.json');
  const accounts = await Accounts.open(authFile, opts.announce, {
    passwordCost: passwordCostOf(cfg),
    // outside sandbox mode stdout is a log (a Pod's): the first-start password goes to a 0600 file instead
    ...(cfg.sandbox ? {} : { passwordFile: join(dirname(authFile), INITIAL_PASSWORD_FILE) }),
  });
  const sessions = new SessionStore(cfg.sessionIdleMinutes * 60_000, cfg.sessionMaxHours * 3_600_000);
  const publicOrigin = cfg.publicUrl ? new URL(cfg.publicUrl).origin : undefined;
  const oidc = cfg.oidc
    ? new OidcLogin({
        ...cfg.oidc,
        redirectUrl:
          cfg.oidc.redirectUrl ?? `${publicOrigin ?? `http://${cfg.host}:${cfg.port}`}/api/auth/oidc/callback`,
      })
    : undefined;
  const routes: RunningConsole['routes'] = [];
  // the one writer of evidence; its log is Fastify's once the app exists
  // before the app exists (its start-up awaits): a JSON line on stderr of the same shape
  let built: { log: Record<'info' | 'warn' | 'error', (o: object, m: string) => void> } | undefined = undefined;
  const early = (level: string) => (o: object, m: string) =>
    process.stderr.write(`${JSON.stringify({ level, time: Date.now(), ...o, msg: m })}\n`);
  const log = {
    info: (o: object, m: string) => (built ? built.log.info(o, m) : early('info')(o, m)),
    warn: (o: object, m: string) => (built ? built.log.warn(o, m) : early('warn')(o, m)),
    error: (o: object, m: string) => (built ? built.log.error(o, m) : early('error')(o, m)),
  };
  // a store that stops taking writes (a full disk) is reported within 10 s, not at the next action
  const recorder = new EvidenceRecorder(store, log, { healthProbeMs: 10_000 });
  // every action's intent noted until its outcome is: one left by a process that stopped gets action.interrupted
  const untrackIntents = recorder.trackOpenIntents(
    new OpenIntents(dialectOf(store), { staleMs: cfg.intentStaleSeconds * 1000, log }),
  );
  // prune previews, freezes and sign-outs reach every replica: LISTEN/NOTIFY on PostgreSQL, in-process on SQLite
  const bus: StateBus =
    store.kind === 'postgres'
      ? await PostgresStateBus.open(cfg.databaseUrl ?? '', (store as unknown as { pool: pg.Pool }).pool, { log })
      : new LocalStateBus();
  // sessions in the store: any replica serves any browser, and a restart signs nobody out; with several
  // replicas each request reads its session's row (a sign-out through one holds on all once it returned)
  const unshare = sessions.share({
    backend: new DbSessionBackend(store),
    bus,
    log,
    recheckMs: store.kind === 'postgres' ? 0 : undefined,
  });
  // the release recorder starts after the app (and, with a Lease, comes and goes): /metrics asks through this
  const releaseStats: { get(): { followed: number; verificationsPending: number } | undefined } = {
    get: () => undefined,
  };
  // event sinks (issue 28): delivered by the replica that records releases (the Lease's holder, or the only one)
  const sinkConfigs = loadSinks(cfg.eventSinksFile);
  let sinksDelivering = false;
  const sinks: SinksDeps | undefined = sinkConfigs.length
    ? (() => {
        const sinkStore = new SinkStore(store);
        const source = cfg.publicUrl ?? 'gitops-console';
        const delivery = new SinkDelivery({
          sinks: sinkConfigs,
          store,
          sinkStore,
          source,
          ...(cfg.publicUrl ? { publicUrl: cfg.publicUrl } : {}),
          log,
          // notifications sinks (format slack or json): each record's notification, to the people whose job it is
          notifications: new Notifier({
            directory: () => accounts.directory(),
            prefs: new NotificationPrefs(store),
            source,
            publicUrl: cfg.publicUrl,
          }),
        });
        return { delivery, sinkStore, delivering: () => sinksDelivering };
      })()
    : undefined;
  // "a freeze ends in 15 minutes" is recorded where notifications are sent, when a sink sends that kind
  const reminder = sinkConfigs.some((s) => s.notify.includes('freeze.ending-soon'))
    ? new FreezeReminder({ freezes: new FreezeStore(store), store, recorder, log })
    : undefined;
  // manifest retention (CONSOLE_MANIFEST_RETENTION_DAYS; unset: keep all) runs beside them, on the same replica
  const retention =
    cfg.releases.manifestRetentionDays > 0
      ? new ManifestRetention({
          days: cfg.releases.manifestRetentionDays,
          manifests: new ManifestStore(store),
          store,
          recorder,
          apps: () => catalog.list(),
          log,
        })
      : undefined;
  const startSinks = () => {
    sinksDelivering = true;
    sinks?.delivery.start();
    reminder?.start();
    retention?.start();
  };
  const stopSinks = async () => {
    sinksDelivering = false;
    await Promise.all([sinks?.delivery.stop(), reminder?.stop(), retention?.stop()]);
  };
  const deps = {
    sinks,
    releaseStats: () => releaseStats.get(),
    bus,
    pruneStaleMs: cfg.pruneStaleSeconds * 1000,
    diffApplyNoop: cfg.diffProof === 'managed-fields',
    rolloutOncallEnvs: cfg.rolloutOncallEnvs,
    flaggerGateHosts,
    routes,
    trustProxy: cfg.trustProxy,
    metricsToken: cfg.metricsToken,
    forges: loadForgeDirectory(cfg.forgeTokensFile),
    accounts,
    sessions,
    oidc,
    // sign-in throttles count in the store: five wrong passwords are five across every replica (issue 40)
    attempts: dbCounters(dialectOf(store), (e) =>
      log.warn({ err: e instanceof Error ? e.message : String(e) }, 'sign-in throttles count on this replica alone'),
    ),
    publicOrigin,
    ...(cfg.clusterAccess === 'impersonate' ? { reviewer: new AccessReviewer(clusters) } : {}),
    ...(opts.logStream ? { logStream: opts.logStream } : {}),
    clusters,
    store,
    recorder,
    envOrder: cfg.envOrder,
    dataDir: cfg.dataDir,
    staticDir: cfg.staticDir ?? resolve('dist/web'),
    loggerLevel: cfg.logLevel,
    // sandbox mode only: the "Try it" page's scenario helpers (sandbox code, imported dynamically)
    ...(cfg.sandbox ? { tryit: await loadSandboxKit() } : {}),
  };
  // the catalog needs a logger before the app exists; use a console-backed one until Fastify's is ready
  const catalog = new AppCatalog(clusters, recorder, { label: cfg.envLabel, rules: cfg.environments }, log);
  const index = new ObjectIndex(clusters);
  catalog.attachIndex(index);
  // drift as a live signal, from the same informer updates (no dry-run)
  const drift = new DriftTracker({ recorder, apps: () => catalog.list() });
  // benchmarks only: the same BFF without detection, to measure what detection costs
  if (process.env.CONSOLE_DRIFT_DETECTION === 'off') drift.setEnabled(false);
  index.on('updated', (cluster, prev, next) => drift.onObject(cluster, prev, next));
  catalog.attachDrift(drift);
  catalog.on('app', (e) => drift.appsChanged(e));
  // the Lease below decides which replica does the one-replica work (planned windows); none configured: this one
  const leadership = { leads: () => true };
  const app = await buildApp({ ...deps, catalog, index, drift, leads: () => leadership.leads() });
  built = app;
  await catalog.start();
  // an operator reads in the log when a cluster's data went stale, and why (the UI's banner says it too)
  clusters.on('state', (s) => {
    if (s.status === 'unreachable') app.log.warn({ cluster: s.name, reason: s.reason }, 'cluster unreachable');
  });
  for (const c of contexts) clusters.add(c.name, c.kc);
  clusters.watchEverywhere(APP_WATCH_KINDS);
  index.start();
  // release evidence for every app, whether or not anyone looks (issue 16); CONSOLE_RELEASE_RECORDER=off skips it
  // (every object dry-run: the validation state is the apiserver's word now, not a proof from managedFields)
  const releaseDiffs = new DiffService(
    { clusters, catalog, index, recorder, dataDir: cfg.dataDir },
    { applyNoop: false },
  );
  const newReleaseRecorder = () =>
    new ReleaseRecorder({
      catalog,
      recorder,
      store,
      index,
      desired: (a) => releaseDiffs.desired(a, undefined),
      dataDir: cfg.dataDir,
      log,
      verificationsFile: cfg.releases.verificationsFile,
      registryMirrors: parseRegistryMirrors(cfg.releases.registryMirrors),
      verifyIntervalMs: cfg.releases.verifyIntervalS * 1000,
      reachable: (c) => clusters.clusters.get(c)?.state.status === 'connected',
      forges: deps.forges,
      reviewRequiredEnvs: cfg.releases.reviewRequiredEnvs,
      envOrder: cfg.envOrder,
      validate: (a) => validateRender(releaseDiffs, a),
      manifests: new ManifestStore(store),
      imageAutomation: (a) => imageAutomationFor(clusters, a),
    });
  // with several replicas only one records: a Lease (CONSOLE_RECORDER_LEASE=<namespace>/<name>) on the first
  // cluster, or CONSOLE_RECORDER_LEASE_CLUSTER's; without it this process records (one replica)
  let releases: ReleaseRecorder | undefined;
  releaseStats.get = () => releases?.stats();
  let lease: LeaseElector | undefined;
  /** the stop of a recorder that lost the Lease: awaited before another starts and at close */
  let stopping: Promise<void> = Promise.resolve();
  if (cfg.releases.lease && (cfg.releases.enabled || sinks)) {
    const [ns = '', leaseName = ''] = cfg.releases.lease.split('/');
    const leaseCluster = cfg.releases.leaseCluster ?? contexts[0]?.name ?? '';
    const conn = clusters.clusters.get(leaseCluster)?.conn;
    if (!conn) throw new Error(`CONSOLE_RECORDER_LEASE_CLUSTER: no cluster ${leaseCluster}`);
    lease = new LeaseElector({
      conn,
      namespace: ns,
      name: leaseName,
      identity: `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`,
      log,
      onStart: () => {
        startSinks();
        if (!cfg.releases.enabled) return;
        const r = newReleaseRecorder();
        releases = r;
        void stopping.then(() => {
          if (releases === r) r.start();
        });
      },
      onStop: () => {
        const r = releases;
        releases = undefined;
        // the sinks stop at once (their POSTs in flight are aborted); a new start waits for that stop itself
        const sinksStopped = stopSinks();
        stopping = stopping.then(() => Promise.all([r?.stop(), sinksStopped]).then(() => undefined));
      },
    });
    const elector = lease;
    leadership.leads = () => elector.isLeader;
    lease.start();
  } else {
    if (sinks && store.kind === 'postgres')
      log.warn(
        {},
        'event sinks without CONSOLE_RECORDER_LEASE: every replica delivers (duplicates); set the Lease with several replicas',
      );
    startSinks();
    if (cfg.releases.enabled) {
      releases = newReleaseRecorder();
      releases.start();
    }
  }
  recorder.observe({
    time: new Date().toISOString(),
    type: 'console.started',
    actor: 'console',
    data: {
      clusters: contexts.map((c) => c.name),
      store: store.kind,
      sandbox: cfg.sandbox,
      version: process.env.npm_package_version ?? 'dev',
    },
  });
  // signed checkpoints of the chain head, with a key kept outside the store (at start, every interval, at stop)
  const checkpoints = new EvidenceCheckpoints(store, loadSigningKey(signingKeyPath(cfg.dataDir)), {
    intervalMs: checkpointIntervalMs(),
    log,
  });
  checkpoints.start();
  const address = await app.listen({ host: cfg.host, port: cfg.port });
  if (!['127.0.0.1', 'localhost', '::1'].includes(cfg.host) && !cfg.publicUrl)
    app.log.warn(
      { host: cfg.host },
      'listening beyond loopback without CONSOLE_PUBLIC_URL: session cookies are not marked Secure; set CONSOLE_PUBLIC_URL=https://… behind TLS',
    );
  app.log.info({ address, clusters: contexts.map((c) => c.name), store: store.kind }, 'console listening');
  return {
    url: address,
    routes,
    kubeconfig,
    async close() {
      await app.close();
      unshare();
      untrackIntents();
      await bus.close();
      await lease?.stop();
      await releases?.stop();
      await stopSinks();
      await stopping;
      await clusters.stop();
      await recorder.flush();
      await checkpoints.stop();
      recorder.close();
      await store.close();
    },
  };
}

export async function main(): Promise<void> {
  process.umask(0o077); // the data dir and whatever the renderers write are owner-only
  let cfg: Config;
  try {
    cfg = loadConfig();
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(2);
  }
  let running: RunningConsole;
  try {
    running = await startConsole(cfg);
  } catch (e) {
    // start-up errors are the user's to fix: print the message, not a stack trace
    process.stderr.write(`console failed to start: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(2);
  }
  process.stdout.write(`GitOps console on ${running.url}\n`);
  let closing = false;
  const shutdown = (sig: string) => {
    if (closing) return;
    closing = true;
    process.stderr.write(`${sig}: shutting down\n`);
    const t = setTimeout(() => process.exit(1), 10_000);
    t.unref();
    running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

if (process.argv[1] && resolve(process.argv[1]).endsWith('main.ts')) void main();
