// What the BFF's routes and services are given (built once in main.ts, or by tests).
import type { Accounts } from './auth/index.ts';
import type { AccessRule } from './auth/index.ts';
import type { OidcLogin } from './auth/index.ts';
import type { SessionStore } from './auth/index.ts';
import type { AttemptCounters } from './auth/index.ts';
import type { EvidenceRecorder } from './evidence/index.ts';
import type { AccessReviewer } from './auth/index.ts';
import type { ClusterManager } from './kube/cluster-manager.ts';
import type { AppCatalog } from './apps/index.ts';
import type { DriftTracker } from './drift/index.ts';
import type { ForgeDirectory } from './forge/forge-directory.ts';
import type { ObjectIndex } from './kube/object-index.ts';
import type { EvidenceStore } from './evidence/index.ts';
import type { StateBus } from './store/state-bus.ts';
import type { SandboxKit, TryItService } from './tryit/index.ts';
import type { SinksDeps } from './sinks/index.ts';

export interface AppDeps {
  clusters: ClusterManager;
  catalog: AppCatalog;
  index?: ObjectIndex;
  /** open drift episodes from the informers (the tree marks drifted objects; reconcile status counts reverts) */
  drift?: DriftTracker;
  dataDir?: string;
  /** reads of the evidence (lists, verification); every write goes through `recorder` */
  store: EvidenceStore;
  /** the one way to write evidence: intents fail closed, observations are retried */
  recorder: EvidenceRecorder;
  envOrder: string[];
  staticDir?: string;
  loggerLevel?: string;
  accounts: Accounts;
  sessions: SessionStore;
  oidc?: OidcLogin | undefined;
  /** the sign-in throttles' counters (auth/attempt-store.ts): in the store's database, shared by every replica */
  attempts?: AttemptCounters | undefined;
  /** CONSOLE_PUBLIC_URL's origin: what Origin headers must say; https → Secure cookies */
  publicOrigin?: string | undefined;
  /** set in impersonation mode: Kubernetes RBAC of the signed-in user decides what it sees */
  reviewer?: AccessReviewer | undefined;
  /** where log lines go (tests scan them); default stdout */
  logStream?: NodeJS.WritableStream;
  routes?: Array<{ method: string; url: string; access: AccessRule }>;
  trustProxy?: string[] | undefined;
  /** forges per repo host (CONSOLE_FORGE_TOKENS_FILE): the freeze write-back opens pull requests through them */
  forges?: ForgeDirectory | undefined;
  /** CONSOLE_METRICS_TOKEN: /metrics needs `Authorization: Bearer <it>`; unset, only loopback may scrape */
  metricsToken?: string | undefined;
  /**
   * whether this replica does the work only one may do (it holds the recorder's Lease, or runs alone): planned
   * freeze windows start here (freeze/window-scheduler.ts); unset: this process acts
   */
  leads?: (() => boolean) | undefined;
  /** state changes of prune previews, freezes and sessions to every replica (PostgreSQL LISTEN/NOTIFY) */
  bus?: StateBus | undefined;
  /** a prune journal idle this long belongs to a dead replica (CONSOLE_PRUNE_STALE_SECONDS) */
  pruneStaleMs?: number | undefined;
  /** CONSOLE_DIFF_PROOF: prove "apply changes nothing" from managedFields instead of a dry-run (default on) */
  diffApplyNoop?: boolean | undefined;
  /** environments where only on-call and admin control canaries (CONSOLE_ROLLOUT_ONCALL_ENVS; default prod) */
  rolloutOncallEnvs?: string[] | undefined;
  /** the Flagger load tester hosts whose gates the console may open (CONSOLE_FLAGGER_GATE_HOSTS); unset: none */
  flaggerGateHosts?: string[] | undefined;
  /** the release recorder's counts for /metrics (undefined while this replica does not record) */
  releaseStats?: (() => { followed: number; verificationsPending: number } | undefined) | undefined;
  /** Node's process metrics on /metrics (default on) */
  defaultMetrics?: boolean;
  /**
   * sandbox mode only: the sandbox's scenario helpers (tryit/index.ts loadSandboxKit, a dynamic import) behind
   * the "Try it" page; unset, /api/tryit answers 404
   */
  tryit?: SandboxKit | undefined;
  /** tests: the "Try it" runner to use (default: one built from `tryit`) */
  tryitService?: TryItService | undefined;
  /** event sinks (CONSOLE_EVENT_SINKS_FILE): the admin API and /metrics; unset, none configured */
  sinks?: SinksDeps | undefined;
}
