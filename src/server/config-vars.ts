// Every environment variable the BFF reads, described once: the source of docs/operate/configuration.md
// (scripts/gen-config-docs.ts writes it) and of the docs check (scripts/docs-check.ts). The readers stay where they
// are (config.ts, and a few services that read their own switch); src/server/config-vars.test.ts proves this table
// and the names the server code reads are the same set, so a new variable cannot go undocumented.
// Data only: it imports nothing, and nothing in the console imports it. Over 500 lines: one entry of about ten lines
// per variable (over sixty), a table that splits no better than the reference it feeds.

/** Who sets it: operators of an install, developers running the console from the sources, or the tests. */
export type ConfigAudience = 'operator' | 'developer' | 'test';

/** What a variable configures: one section of the reference each, in this order. */
export const CONFIG_GROUPS = {
  server: 'Server and start-up',
  clusters: 'Clusters',
  environments: 'Environments and permissions',
  identity: 'Identity, sessions and the proxy',
  storage: 'Storage and several replicas',
  evidence: 'Evidence and event sinks',
  releases: 'Releases, verifications and forges',
  git: 'Git URL policy',
  diff: 'Diff, renders and drift',
  tests: 'Tests and benchmarks only',
} as const;
export type ConfigGroup = keyof typeof CONFIG_GROUPS;

export interface ConfigVar {
  name: string;
  /** the command-line flag that wins over the variable, if any */
  flag?: string;
  /** the value's shape: `list` is comma-separated; `switch` is a fixed word such as `1` or `off` */
  type: 'string' | 'integer' | 'number' | 'list' | 'switch' | 'enum' | 'url' | 'path';
  /** the value when unset, as people read it (not necessarily a literal) */
  default: string;
  description: string;
  audience: ConfigAudience;
  group: ConfigGroup;
  /** the chart value that sets it (deploy/chart/values.yaml), or how the chart sets it */
  chart?: string;
}

/**
 * Read by the server code but set by the system, not configuration: the scan of the sources finds them, so they
 * are named here, with why they are not in the reference.
 */
export const AMBIENT_ENV: Readonly<Record<string, string>> = {
  HOME: "the user's home: `npm run cli -- diff` looks for `~/.kube/config` there",
  npm_package_version: 'set by npm: the version /api/version reports (`dev` when not started by npm)',
};

export const CONFIG_VARS: readonly ConfigVar[] = [
  // --- server and start-up
  {
    name: 'CONSOLE_HOST',
    flag: '--host',
    type: 'string',
    default: '`127.0.0.1`',
    description: 'listen address; must not be empty (the image sets `0.0.0.0`)',
    audience: 'operator',
    group: 'server',
    chart: 'set to `0.0.0.0`',
  },
  {
    name: 'CONSOLE_PORT',
    flag: '--port',
    type: 'integer',
    default: '`8080`',
    description: 'listen port (0–65535); `PORT` is read when it is unset',
    audience: 'operator',
    group: 'server',
    chart: 'set to `8080`; the Service listens on `service.port`',
  },
  {
    name: 'PORT',
    type: 'integer',
    default: 'unset',
    description: 'the listen port when neither `--port` nor `CONSOLE_PORT` is given (platforms that set `PORT`)',
    audience: 'operator',
    group: 'server',
  },
  {
    name: 'CONSOLE_DATA_DIR',
    flag: '--data-dir',
    type: 'path',
    default: '`.data`',
    description:
      'SQLite evidence file and other local state: `auth.json`, the Secret-mask key, the checkpoint signing key, the render cache',
    audience: 'operator',
    group: 'server',
    chart: 'set to `/data` (`dataVolume`)',
  },
  {
    name: 'CONSOLE_STATIC_DIR',
    type: 'path',
    default: '`dist/web`',
    description: 'the built SPA the BFF serves (the image sets `/app/dist/web`; `npm start` sets its `dist/web`)',
    audience: 'developer',
    group: 'server',
  },
  {
    name: 'LOG_LEVEL',
    type: 'enum',
    default: '`info`',
    description:
      'BFF log level: `fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`; one JSON object per line (pino) on stdout',
    audience: 'operator',
    group: 'server',
    chart: '`config.logLevel`',
  },
  {
    name: 'CONSOLE_SANDBOX',
    flag: '--sandbox',
    type: 'switch',
    default: 'off (on when no kubeconfig is found)',
    description:
      '`1`: start (or reuse) the local sandbox and use its kubeconfig; also the mode with no `KUBECONFIG`, `--kubeconfig` or `~/.kube/config`',
    audience: 'developer',
    group: 'server',
  },
  {
    name: 'CONSOLE_INSTALL',
    type: 'switch',
    default: 'unset',
    description:
      '`1` (set by the chart and the kustomize base): an install; it refuses to start without `CONSOLE_ENVIRONMENTS` or `CONSOLE_ENVIRONMENTS_FROM_LABELS=1` (sandbox mode excepted), and the first admin password goes to `<data dir>/initial-admin-password` (0600, removed when the password is changed), never to the log',
    audience: 'operator',
    group: 'server',
    chart: 'always `1`',
  },
  // --- clusters
  {
    name: 'KUBECONFIG',
    flag: '--kubeconfig',
    type: 'path',
    default: '`~/.kube/config`, else sandbox',
    description:
      'kubeconfig to read (first path of a `:` list); a bad kubeconfig or an unknown context stops start-up with one line naming the file or context (exit code 2)',
    audience: 'operator',
    group: 'clusters',
    chart: '`kubeconfig.existingSecret`/`.key`, or `inCluster: true`',
  },
  {
    name: 'CONSOLE_CONTEXTS',
    flag: '--contexts a,b',
    type: 'list',
    default: 'every context',
    description: 'contexts to connect to; one cluster connection per context',
    audience: 'operator',
    group: 'clusters',
    chart: '`contexts`',
  },
  {
    name: 'CONSOLE_CLUSTER_ACCESS',
    type: 'enum',
    default: '`service`',
    description:
      "`service`: the BFF's own identity; `impersonate`: act as the signed-in user (the BFF then also needs `deploy/rbac-impersonation.yaml`)",
    audience: 'operator',
    group: 'clusters',
    chart: '`config.clusterAccess`',
  },
  // --- environments and permissions
  {
    name: 'CONSOLE_ENVIRONMENTS',
    type: 'list',
    default: 'unset',
    description:
      "which environment each cluster/namespace is: `nonprod/dev=dev,prod/*=prod` (`*` wildcards, first match wins); set, it decides every app's environment (and so every permission) and the label is only checked; an app no rule covers is in `unknown`; unset, the label decides. Required by an install (`CONSOLE_INSTALL=1`) unless `CONSOLE_ENVIRONMENTS_FROM_LABELS=1`",
    audience: 'operator',
    group: 'environments',
    chart: '`config.environments`',
  },
  {
    name: 'CONSOLE_ENVIRONMENTS_FROM_LABELS',
    type: 'switch',
    default: 'unset',
    description:
      "`1`: an install without `CONSOLE_ENVIRONMENTS` starts, and each app's env label decides its environment (whoever may label an app then picks its environment): for a trial only",
    audience: 'operator',
    group: 'environments',
    chart: '`config.environmentsFromLabels`',
  },
  {
    name: 'CONSOLE_ENV_LABEL',
    type: 'string',
    default: '`env`',
    description: 'label on the app object naming its environment',
    audience: 'operator',
    group: 'environments',
    chart: '`config.envLabel`',
  },
  {
    name: 'CONSOLE_ENV_ORDER',
    type: 'list',
    default: '`dev,staging,prod`',
    description:
      "column order of the overview; also which environment is next (a release's promotion is recorded when the next one runs it)",
    audience: 'operator',
    group: 'environments',
    chart: '`config.envOrder`',
  },
  {
    name: 'CONSOLE_ROLLOUT_ONCALL_ENVS',
    type: 'list',
    default: '`prod`',
    description:
      "environments where only on-call and admin control canaries (promote, abort, rollback…): a developer's `rollout.control` grant does not reach them",
    audience: 'operator',
    group: 'environments',
    chart: '`config.extra`',
  },
  {
    name: 'CONSOLE_FLAGGER_GATE_HOSTS',
    type: 'list',
    default: 'unset (sandbox: its stand-ins)',
    description:
      'Flagger load-tester hosts (`host` or `host:port`, comma-separated) whose gates the console opens for a promote or rollback; unset: none (409 naming the setting); resolved once, connected to that address, only the status read',
    audience: 'operator',
    group: 'environments',
    chart: '`config.flaggerGateHosts`',
  },
  // --- identity
  {
    name: 'CONSOLE_AUTH_FILE',
    type: 'path',
    default: '`<data dir>/auth.json`',
    description: 'local accounts (scrypt hashes) and group → role grants (see Identity)',
    audience: 'operator',
    group: 'identity',
  },
  {
    name: 'CONSOLE_PUBLIC_URL',
    type: 'url',
    default: "the request's own host",
    description:
      'URL people open (behind a proxy); Origin checks; `https` → `Secure` cookies; links in notifications; listening beyond loopback without it logs a warning (cookies would not be `Secure`)',
    audience: 'operator',
    group: 'identity',
    chart: '`config.publicUrl`',
  },
  {
    name: 'CONSOLE_TRUST_PROXY',
    type: 'list',
    default: 'unset',
    description: 'reverse proxy address(es): client addresses (rate limits, logs) from `X-Forwarded-For`',
    audience: 'operator',
    group: 'identity',
    chart: '`config.trustProxy`',
  },
  {
    name: 'CONSOLE_PASSWORD_SCRYPT_LOG2N',
    type: 'integer',
    default: '`17`',
    description:
      "local passwords' scrypt cost, log2 N (14–17; r=8, p=1): ~0.8 s of one core and 128 MiB a hash at 17 (OWASP's minimum); older hashes still verify and are re-hashed at sign-in; the test consoles run at 14",
    audience: 'operator',
    group: 'identity',
    chart: '`config.extra`',
  },
  {
    name: 'CONSOLE_SESSION_IDLE_MINUTES',
    type: 'number',
    default: '`30`',
    description: 'a session unused this long ends',
    audience: 'operator',
    group: 'identity',
    chart: '`config.sessionIdleMinutes`',
  },
  {
    name: 'CONSOLE_SESSION_MAX_HOURS',
    type: 'number',
    default: '`12`',
    description: 'a session ends this long after sign-in, used or not',
    audience: 'operator',
    group: 'identity',
    chart: '`config.sessionMaxHours`',
  },
  {
    name: 'CONSOLE_OIDC_ISSUER',
    type: 'url',
    default: 'unset',
    description:
      'enables OIDC sign-in (see Identity) with the variables below; plain-http issuers are refused except on loopback (tests)',
    audience: 'operator',
    group: 'identity',
    chart: '`config.oidc.issuer`',
  },
  {
    name: 'CONSOLE_OIDC_CLIENT_ID',
    type: 'string',
    default: 'unset',
    description: 'the OIDC client id (required with the issuer)',
    audience: 'operator',
    group: 'identity',
    chart: '`config.oidc.clientId`',
  },
  {
    name: 'CONSOLE_OIDC_CLIENT_SECRET',
    type: 'string',
    default: 'unset',
    description:
      'the OIDC client secret; prefer `CONSOLE_OIDC_CLIENT_SECRET_FILE` (never shown in configuration errors)',
    audience: 'operator',
    group: 'identity',
  },
  {
    name: 'CONSOLE_OIDC_CLIENT_SECRET_FILE',
    type: 'path',
    default: 'unset',
    description:
      'a file holding the OIDC client secret (a mounted Secret); wins over `CONSOLE_OIDC_CLIENT_SECRET`; an unreadable file stops start-up',
    audience: 'operator',
    group: 'identity',
    chart: '`secrets.oidcClientSecret`',
  },
  {
    name: 'CONSOLE_OIDC_REDIRECT_URL',
    type: 'url',
    default: '`<public URL origin>/api/auth/oidc/callback`',
    description: 'the redirect URL registered at the IdP (without a public URL: `http://<host>:<port>/…`)',
    audience: 'operator',
    group: 'identity',
    chart: '`config.oidc.redirectUrl`',
  },
  {
    name: 'CONSOLE_OIDC_SCOPES',
    type: 'string',
    default: '`openid profile email groups`',
    description: 'the scopes asked for',
    audience: 'operator',
    group: 'identity',
    chart: '`config.oidc.scopes`',
  },
  {
    name: 'CONSOLE_OIDC_GROUPS_CLAIM',
    type: 'string',
    default: '`groups`',
    description: "the claim holding the user's groups (group → role grants)",
    audience: 'operator',
    group: 'identity',
    chart: '`config.oidc.groupsClaim`',
  },
  {
    name: 'CONSOLE_OIDC_USERNAME_CLAIM',
    type: 'string',
    default: '`sub`',
    description:
      'the claim that names the user (`sub`: stable and unique per issuer); with `email` the actor named in evidence and notifications is an address',
    audience: 'operator',
    group: 'identity',
    chart: '`config.oidc.usernameClaim`',
  },
  {
    name: 'CONSOLE_OIDC_USERNAME_PREFIX',
    type: 'string',
    default: '`oidc:`',
    description:
      "prefix of OIDC user names, like kube-apiserver's `--oidc-*-prefix`: an IdP user never shares a name with a local account or Kubernetes' own",
    audience: 'operator',
    group: 'identity',
    chart: '`config.oidc.usernamePrefix`',
  },
  {
    name: 'CONSOLE_OIDC_GROUPS_PREFIX',
    type: 'string',
    default: '`oidc:`',
    description: 'prefix of OIDC groups, as the user name prefix',
    audience: 'operator',
    group: 'identity',
    chart: '`config.oidc.groupsPrefix`',
  },
  {
    name: 'CONSOLE_METRICS_TOKEN',
    type: 'string',
    default: 'unset',
    description:
      '`/metrics` needs `Authorization: Bearer <token>`; unset, only loopback clients (no proxy) may scrape (never shown in configuration errors)',
    audience: 'operator',
    group: 'identity',
    chart: '`secrets.metricsToken`',
  },
  // --- storage and replicas
  {
    name: 'DATABASE_URL',
    type: 'url',
    default: 'unset (SQLite in the data dir)',
    description:
      '`postgres://…`: PostgreSQL for evidence, sessions, prune previews and freezes (required for several replicas; changes reach every replica by `pg_notify`)',
    audience: 'operator',
    group: 'storage',
    chart: '`secrets.databaseUrl`',
  },
  {
    name: 'CONSOLE_MASK_KEY_FILE',
    type: 'path',
    default: '`<data dir>/mask.key`',
    description:
      'the key Secret values are masked (and renders hashed) with: 64 hex digits (`openssl rand -hex 32`); the same file for every replica',
    audience: 'operator',
    group: 'storage',
    chart: '`secrets.maskKey`',
  },
  {
    name: 'CONSOLE_PRUNE_STALE_SECONDS',
    type: 'integer',
    default: '`120`',
    description:
      'a prune journal idle this long belongs to a dead replica: another one reports it (nothing is deleted again); 2–3600',
    audience: 'operator',
    group: 'storage',
    chart: '`config.extra`',
  },
  {
    name: 'CONSOLE_INTENT_STALE_SECONDS',
    type: 'integer',
    default: '`120`',
    description:
      "an action's open intent not renewed this long belongs to a process that stopped: any replica records `action.interrupted` for it (whether it took effect is unknown; a process cut off from the database this long while still acting may get it too, and what it did follows as `action.resolved`); 2–3600",
    audience: 'operator',
    group: 'storage',
    chart: '`config.extra`',
  },
  {
    name: 'CONSOLE_FREEZE_CLAIM_SECONDS',
    type: 'integer',
    default: '`30`',
    description:
      "how long the claim of a freeze's end holds unless its process renews it (every sixth of it): an end whose claim expired belongs to a dead process and is taken over (2–600; measured on the watcher's own clock)",
    audience: 'operator',
    group: 'storage',
    chart: '`config.extra`',
  },
  {
    name: 'CONSOLE_RECORDER_LEASE',
    type: 'string',
    default: 'unset',
    description:
      '`<namespace>/gitops-console-recorder`: with several replicas, only the holder of this coordination.k8s.io Lease records releases (renewed every 5 s, 15 s duration; a holder that cannot renew stops after 10 s)',
    audience: 'operator',
    group: 'storage',
    chart: 'set when `replicaCount` > 1',
  },
  {
    name: 'CONSOLE_RECORDER_LEASE_CLUSTER',
    type: 'string',
    default: 'the first context',
    description: 'the cluster the Lease lives in',
    audience: 'operator',
    group: 'storage',
    chart: '`config.extra`',
  },
  // --- evidence
  {
    name: 'CONSOLE_EVIDENCE_SIGNING_KEY_FILE',
    type: 'path',
    default: '`<data dir>/checkpoint.key`',
    description:
      'Ed25519 private key (PEM, created 0600 on first start) that signs evidence checkpoints; keep it outside the database (e.g. a mounted Secret)',
    audience: 'operator',
    group: 'evidence',
    chart: '`secrets.evidenceSigningKey`',
  },
  {
    name: 'CONSOLE_CHECKPOINT_INTERVAL_S',
    type: 'number',
    default: '`300`',
    description: 'how often the head of the evidence chain is signed (also at start and stop)',
    audience: 'operator',
    group: 'evidence',
    chart: '`config.extra`',
  },
  {
    name: 'CONSOLE_EVENT_SINKS_FILE',
    type: 'path',
    default: 'unset',
    description:
      'JSON `{"sinks": [{name, url, secretFile, deadLetterAfterSeconds?, retryMaxSeconds?, from?, format?, notify?}]}`: the evidence as signed CDEvents to each sink, or notifications (`format` slack/json; see Event sinks)',
    audience: 'operator',
    group: 'evidence',
  },
  {
    name: 'CONSOLE_MANIFEST_RETENTION_DAYS',
    type: 'integer',
    default: '`0` (keep all)',
    description:
      "manifests of renders unused this many days expire daily (each app's newest stays; the expiry is evidence; see Manifests per release)",
    audience: 'operator',
    group: 'evidence',
    chart: '`config.extra`',
  },
  // --- releases
  {
    name: 'CONSOLE_RELEASE_RECORDER',
    type: 'switch',
    default: 'on',
    description: '`off`: record no release states (see Releases)',
    audience: 'operator',
    group: 'releases',
    chart: '`config.extra`',
  },
  {
    name: 'CONSOLE_VERIFICATIONS_FILE',
    type: 'path',
    default: 'unset (sandbox: its endpoints)',
    description:
      'JSON `{"<cluster>/<env>" or app id: {url, expectStatus, bodyMatch?, versionHeader?, timeoutMs}}`: the HTTP check of each release; the `versionHeader` must name the release\'s image digest or tag (state 8)',
    audience: 'operator',
    group: 'releases',
  },
  {
    name: 'CONSOLE_VERIFICATION_INTERVAL_S',
    type: 'integer',
    default: '`300`',
    description: "how often every app's applied release is verified again (10–86400)",
    audience: 'operator',
    group: 'releases',
    chart: '`config.extra`',
  },
  {
    name: 'CONSOLE_REVIEW_REQUIRED_ENVS',
    type: 'list',
    default: '`prod`',
    description:
      "environments whose commits must be reviewed on the forge: a direct push, or a PR with no approval that counts, fails the release's review state",
    audience: 'operator',
    group: 'releases',
    chart: '`config.extra`',
  },
  {
    name: 'CONSOLE_REGISTRY_MIRRORS',
    type: 'string',
    default: 'unset (sandbox: its registry)',
    description:
      '`host=url,…`: registries image tags are resolved at (`HEAD /v2/…/manifests/<tag>`), so running digests can be checked against tags',
    audience: 'operator',
    group: 'releases',
    chart: '`config.extra`',
  },
  {
    name: 'CONSOLE_FORGE_TOKENS_FILE',
    type: 'path',
    default: 'unset (sandbox: its forge)',
    description:
      'JSON file of forge API tokens per repo host, `{"git.example.com": {"kind": "gitea", "token": "…", "apiUrl"?}}` (mode 0600 recommended): write-back pull requests and review states; no token is ever in the environment, logs or evidence',
    audience: 'operator',
    group: 'releases',
    chart: '`secrets.forgeTokens`',
  },
  // --- git
  {
    name: 'CONSOLE_GIT_ALLOW_HOSTS',
    type: 'list',
    default: 'unset',
    description:
      '`host`, `host:port`, `[v6]:port` or a CIDR, comma-separated: loopback or private Git servers, forges and artifact servers the console may reach (cloud metadata addresses stay refused)',
    audience: 'operator',
    group: 'git',
    chart: '`config.gitAllowHosts`',
  },
  {
    name: 'CONSOLE_GIT_ALLOW_SSH',
    type: 'switch',
    default: '`0`',
    description: '`1`: git may also use ssh (`ssh://…` and `user@host:path`) URLs, under the same host checks',
    audience: 'operator',
    group: 'git',
    chart: '`config.extra`',
  },
  // --- diff, renders and drift
  {
    name: 'CONSOLE_DIFF_PROOF',
    type: 'enum',
    default: '`managed-fields`',
    description:
      '`off`: the diff dry-runs every object, as `kubectl diff --server-side` does; by default an object whose apply provably changes nothing (its managedFields) is not sent',
    audience: 'operator',
    group: 'diff',
    chart: '`config.extra`',
  },
  {
    name: 'CONSOLE_FLUX_RENDER_SERVER',
    type: 'switch',
    default: 'on',
    description:
      "`off`: every Flux render starts `flux-render` once; by default up to four `flux-render --serve` processes render request after request (one-shot when all are busy), without re-parsing kustomize's schema each time",
    audience: 'operator',
    group: 'diff',
    chart: '`config.extra`',
  },
  {
    name: 'CONSOLE_FLUX_RENDER',
    type: 'path',
    default: '`.sandbox/bin/flux-render`, else `PATH`',
    description: 'the `flux-render` binary Flux apps are rendered with (the image sets `/usr/local/bin/flux-render`)',
    audience: 'developer',
    group: 'diff',
  },
  {
    name: 'CONSOLE_KUSTOMIZE',
    type: 'path',
    default: '`.sandbox/bin/kustomize`, else `PATH`',
    description: 'the `kustomize` binary (the image sets `/usr/local/bin/kustomize`)',
    audience: 'developer',
    group: 'diff',
  },
  {
    name: 'CONSOLE_HELM',
    type: 'path',
    default: '`.sandbox/bin/helm`, else `PATH`',
    description: 'the `helm` binary Helm charts are rendered with (the image sets `/usr/local/bin/helm`)',
    audience: 'developer',
    group: 'diff',
  },
  {
    name: 'CONSOLE_JQ_DEL',
    type: 'path',
    default: '`.sandbox/bin/jq-del`, else `PATH`',
    description:
      "the `jq-del` binary that applies Argo CD's `jqPathExpressions` ignores (without it they are not applied, and the diff says so; the image sets `/usr/local/bin/jq-del`)",
    audience: 'developer',
    group: 'diff',
  },
  // --- tests and benchmarks
  {
    name: 'CONSOLE_FREEZE_MIN_SECONDS',
    type: 'integer',
    default: 'unset',
    description:
      "for tests only: `POST /api/freezes` may give a freeze's length in `seconds` (1–60) instead of minutes, so a test waits 5 s for an expiry, not a minute; leave unset in production",
    audience: 'test',
    group: 'tests',
  },
  {
    name: 'CONSOLE_GIT_ALLOW_FILE_URLS',
    type: 'switch',
    default: 'unset',
    description:
      "tests only: `1` lets git use `file:` URLs (a local bare repository). Never set it in production: a repository URL written into a cluster object could then read this host's own files (`src/server/git/url-policy.ts`)",
    audience: 'test',
    group: 'tests',
  },
  {
    name: 'CONSOLE_DRIFT_DETECTION',
    type: 'switch',
    default: 'on',
    description: 'benchmarks only: `off` runs the same BFF without drift detection, to measure what detection costs',
    audience: 'test',
    group: 'tests',
  },
  {
    name: 'CONSOLE_TEST_FAULTS',
    type: 'string',
    default: 'unset',
    description:
      'chaos tests only: comma-separated points (`<intent type>:after-intent`, `:mid-act` or `:after-act`, e.g. `freeze.started:after-intent`) at which the process kills itself with SIGKILL (`src/server/evidence/fault-points.ts`); never set it in production',
    audience: 'test',
    group: 'tests',
  },
  {
    name: 'CONSOLE_TEST_FAULT_DIR',
    type: 'string',
    default: 'unset',
    description:
      'chaos tests only: a directory through which the chaos runner (`npm run chaos`, test/chaos/) holds an action at a fault point (`after-intent`, `mid-act`, `after-act`) while it injects a fault from outside (`src/server/evidence/fault-points.ts`); never set it in production',
    audience: 'test',
    group: 'tests',
  },
];
