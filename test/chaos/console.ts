// The consoles a chaos cell runs on (./types.ts Console), each started once per run and shared by the cells that need
// that kind: two replicas on one private PostgreSQL, one replica on SQLite, or two on PostgreSQL whose clocks are
// two minutes either side of the host's. Every replica runs with the console's own kubeconfig (deploy/rbac.yaml) and
// a fault directory (CONSOLE_TEST_FAULT_DIR) through which the runner holds an action at a fault point.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubectl } from '../../sandbox/sandbox.ts';
import { REPO_ROOT } from '../../sandbox/state.ts';
import { spawnBff } from '../support/bff-process.ts';
import { postgresControl } from '../support/store-outage.ts';
import { startPostgres, type PgServer } from '../support/postgres.ts';
import { chaosSinkEnv } from './rows/sink-delivery.ts';
import type { Console, Fault, Replica } from './types.ts';

/** A replica's open intent is stale (its process stopped) after 2 s unrenewed: the sweep runs every second. */
const STALE_SECONDS = '2';

const PRUNE_PEOPLE = {
  'prod-developer': ['developer@prod/prod'],
  'prod-reviewer': ['reviewer@prod/prod'],
  'prod-reviewer-2': ['reviewer@prod/prod'],
};

const SKEW_PRELOAD = join(REPO_ROOT, 'test/chaos/clock-skew.mjs');

async function replica(
  name: string,
  store: { url: string } | 'sqlite',
  opts: { skewMs?: number; leaseNamespace?: string } = {},
): Promise<Replica> {
  const faultDir = mkdtempSync(join(tmpdir(), `chaos-faults-${name}-`));
  const b = await spawnBff(`chaos-${name}`, {
    // the prune row's people: one requests, two others approve (deploy's prod reviewers)
    accounts: { users: PRUNE_PEOPLE },
    env: {
      ...(store === 'sqlite' ? {} : { DATABASE_URL: store.url }),
      CONSOLE_TEST_FAULT_DIR: faultDir,
      CONSOLE_INTENT_STALE_SECONDS: STALE_SECONDS,
      // every replica delivers the evidence to the sink row's receiver (read once at start)
      ...(await chaosSinkEnv()),
      // a dead replica's freeze end is taken over after 6 s unrenewed (default 30 s): cells stay within 2 minutes
      CONSOLE_FREEZE_CLAIM_SECONDS: '6',
      // a prune left `executing` by a stopped replica is taken over after 30 s (default 120 s)
      CONSOLE_PRUNE_STALE_SECONDS: '30',
      // replicas record releases under one Lease, as the chart sets them (deploy/rbac.yaml names it)
      ...(opts.leaseNamespace
        ? {
            CONSOLE_RECORDER_LEASE: `${opts.leaseNamespace}/gitops-console-recorder`,
            CONSOLE_RECORDER_LEASE_CLUSTER: 'nonprod',
          }
        : {}),
      ...(opts.skewMs ? { CHAOS_CLOCK_SKEW_MS: String(opts.skewMs) } : {}),
    },
    ...(opts.skewMs ? { nodeArgs: ['--import', SKEW_PRELOAD] } : {}),
    // the disk-full fault refuses the SQLite replica's file writes: its log goes through a pipe
    ...(store === 'sqlite' ? { pipeLog: true } : {}),
  });
  return {
    name,
    base: b.base,
    admin: b.admin,
    child: b.child,
    dataDir: b.dataDir,
    log: b.log,
    faultDir,
    store: store === 'sqlite' ? 'sqlite' : 'postgres',
    async stop() {
      await b.stop();
      rmSync(faultDir, { recursive: true, force: true });
    },
  };
}

const alive = (r: Replica) => r.child.exitCode === null && r.child.signalCode === null;

export interface Consoles {
  get(kind: Fault['console']): Promise<{ console: Console; pg?: { stop(): void; start(): void } }>;
  close(): Promise<void>;
}

/** Consoles started on first use, kept for the run, closed at its end. */
export function consoles(): Consoles {
  const made = new Map<Fault['console'], Promise<{ console: Console; pg?: { stop(): void; start(): void } }>>();
  const servers: PgServer[] = [];
  const replicas: Replica[] = [];
  const namespaces: string[] = [];
  let n = 0;

  async function make(kind: Fault['console']) {
    if (kind === 'sqlite') {
      let actor = await replica(`sqlite-${++n}`, 'sqlite');
      replicas.push(actor);
      const c: Console = {
        get actor() {
          return actor;
        },
        reader: () => actor,
        async respawnActor() {
          // one replica on SQLite: a new one starts on a new data directory (the cells that kill run on PostgreSQL)
          actor = await replica(`sqlite-${++n}`, 'sqlite');
          replicas.push(actor);
        },
      };
      return { console: c };
    }
    const pg = await startPostgres();
    servers.push(pg);
    const control = await postgresControl(pg.url);
    // the skewed pair: the actor 2 minutes ahead, the peer 2 minutes behind (4 minutes apart)
    const skew = kind === 'skewed-pair' ? 120_000 : 0;
    // the pair's own namespace for its recorder Lease (the console's role may create Leases, renew only that name)
    const leaseNamespace = `chaos-lease-${kind}-${process.pid}`;
    kubectl('nonprod', ['create', 'namespace', leaseNamespace]);
    namespaces.push(leaseNamespace);
    // the actor starts first and so holds the Lease: a kill of the actor is a kill of the recorder
    let actor = await replica(`${kind}-actor-${++n}`, pg, { skewMs: skew, leaseNamespace });
    const peer = await replica(`${kind}-peer-${++n}`, pg, { skewMs: -skew, leaseNamespace });
    replicas.push(peer, actor);
    const c: Console = {
      get actor() {
        return actor;
      },
      peer,
      reader: () => (alive(peer) ? peer : actor),
      async respawnActor() {
        actor = await replica(`${kind}-actor-${++n}`, pg, { skewMs: skew, leaseNamespace });
        replicas.push(actor);
      },
    };
    return { console: c, pg: control };
  }

  return {
    get(kind) {
      let p = made.get(kind);
      if (!p) {
        p = make(kind);
        made.set(kind, p);
      }
      return p;
    },
    async close() {
      for (const r of replicas) {
        if (alive(r)) await r.stop().catch(() => undefined);
        rmSync(r.dataDir, { recursive: true, force: true });
        rmSync(r.faultDir, { recursive: true, force: true });
      }
      for (const s of servers) await s.stop().catch(() => undefined);
      for (const ns of namespaces)
        kubectl('nonprod', ['delete', 'namespace', ns, '--ignore-not-found', '--wait=false']);
    },
  };
}
