// BFF configuration, validated at start-up: environment variables and flags.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { parseEnvMapping } from '../domain/environments.ts';
import { redactUrlCredentials } from '../domain/url-credentials.ts';
import { listSetting, parseAllowHosts } from './git/url-policy.ts';

/** CONSOLE_FREEZE_MIN_SECONDS (ConfigSchema.freezeMinSeconds): 1 to 60 seconds */
const FreezeMinSeconds = z.coerce.number().int().min(1).max(60);

const ConfigSchema = z.object({
  kubeconfig: z.string().optional(),
  contexts: z.array(z.string().min(1)).optional(),
  host: z
    .string()
    .default('127.0.0.1')
    .refine((h) => h.length > 0, 'listen address must not be empty'),
  port: z.coerce.number().int().min(0).max(65535).default(8080),
  dataDir: z.string().default('.data'),
  databaseUrl: z.string().url().optional(),
  envLabel: z.string().min(1).default('env'),
  envOrder: z.array(z.string()).default(['dev', 'staging', 'prod']),
  /**
   * CONSOLE_ENVIRONMENTS: cluster/namespace → environment rules (domain/environments.ts). Set, they decide every
   * app's environment (the label only when unset); an app none covers is in the environment `unknown`.
   */
  environments: z
    .string()
    .transform((v, ctx) => {
      try {
        return parseEnvMapping(v);
      } catch (e) {
        ctx.addIssue({ code: 'custom', message: e instanceof Error ? e.message : String(e) });
        return z.NEVER;
      }
    })
    .optional(),
  /** the release recorder (releases/recorder.ts): CONSOLE_RELEASE_RECORDER, CONSOLE_VERIFICATIONS_FILE, … */
  releases: z
    .object({
      enabled: z.boolean().default(true),
      verificationsFile: z.string().optional(),
      registryMirrors: z.string().optional(),
      verifyIntervalS: z.coerce.number().int().min(10).max(86_400).default(300),
      /** environments whose commits must reach their branch reviewed (a direct push fails the review state) */
      reviewRequiredEnvs: z.array(z.string().min(1)).default(['prod']),
      /** `<namespace>/<name>` of a coordination.k8s.io Lease: with several replicas, only its holder records */
      lease: z
        .string()
        .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'expected <namespace>/<name>')
        .optional(),
      leaseCluster: z.string().min(1).optional(),
      /** manifests unused this many days expire (each app's newest stays); 0: keep all (the default) */
      manifestRetentionDays: z.coerce.number().int().min(0).max(36_500).default(0),
    })
    .default({ enabled: true, verifyIntervalS: 300, reviewRequiredEnvs: ['prod'], manifestRetentionDays: 0 }),
  staticDir: z.string().optional(),
  sandbox: z.boolean().default(false),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** local accounts and group grants; default <dataDir>/auth.json */
  authFile: z.string().optional(),
  /** the URL people open (behind a proxy); its origin is what Origin headers must say */
  publicUrl: z.url({ protocol: /^https?$/ }).optional(),
  /**
   * CONSOLE_PASSWORD_SCRYPT_LOG2N: local passwords' scrypt cost, log2 of N (r=8, p=1): 17 by default (OWASP's scrypt
   * minimum, ~0.8 s of one core and 128 MiB per hash here), 14 at least (the tests' consoles: every console start
   * and sign-in of the suite would otherwise add minutes of CPU). A hash made at another cost still verifies, and a
   * sign-in re-hashes it at this one.
   */
  passwordScryptLog2N: z.coerce.number().int().min(14).max(17).default(17),
  sessionIdleMinutes: z.coerce.number().positive().default(30),
  sessionMaxHours: z.coerce.number().positive().default(12),
  clusterAccess: z.enum(['service', 'impersonate']).default('service'),
  /** behind a reverse proxy: its address(es), so client addresses (rate limits, logs) come from X-Forwarded-For */
  trustProxy: z.array(z.string().min(1)).optional(),
  /** /metrics needs `Authorization: Bearer <token>`; unset, only loopback clients may scrape */
  metricsToken: z.string().min(1).optional(),
  /** JSON file of forge tokens per repo host (src/server/forge/forge-directory.ts) */
  forgeTokensFile: z.string().min(1).optional(),
  /** JSON file of event sinks: the evidence as signed CDEvents (src/server/sinks/config.ts) */
  eventSinksFile: z.string().min(1).optional(),
  /** the Git URL policy (src/server/git/url-policy.ts): CONSOLE_GIT_ALLOW_HOSTS, CONSOLE_GIT_ALLOW_SSH */
  git: z
    .object({
      allowHosts: z
        .array(z.string().min(1))
        .default([])
        .superRefine((entries, ctx) => {
          try {
            parseAllowHosts(entries);
          } catch (e) {
            ctx.addIssue({ code: 'custom', message: e instanceof Error ? e.message : String(e) });
          }
        }),
      allowSsh: z
        .enum(['0', '1', 'true', 'false'], { error: 'CONSOLE_GIT_ALLOW_SSH must be 1 or 0' })
        .transform((v) => v === '1' || v === 'true')
        .default(false),
    })
    .default({ allowHosts: [], allowSsh: false }),
  /**
   * CONSOLE_FLAGGER_GATE_HOSTS: the Flagger load tester hosts (`host` or `host:port`, comma-separated) whose gates
   * the console opens for a governed promote or rollback (apps/flagger-gate.ts); unset, none. Sandbox mode adds
   * the sandbox's load tester stand-ins.
   */
  flaggerGateHosts: z
    .array(z.string().min(1))
    .default([])
    .superRefine((entries, ctx) => {
      try {
        parseAllowHosts(entries, 'CONSOLE_FLAGGER_GATE_HOSTS', { hostsOnly: true });
      } catch (e) {
        ctx.addIssue({ code: 'custom', message: e instanceof Error ? e.message : String(e) });
      }
    }),
  /** a prune journal idle this long belongs to a dead replica: another replica reports it (default 120 s) */
  /** the Secret-mask key as a file (every replica the same); default <dataDir>/mask.key */
  maskKeyFile: z.string().min(1).optional(),
  pruneStaleSeconds: z.coerce.number().int().min(2).max(3600).default(120),
  intentStaleSeconds: z.coerce.number().int().min(2).max(3600).default(120),
  /**
   * CONSOLE_FREEZE_MIN_SECONDS, for tests: POST /api/freezes may give the freeze's length as `seconds` (instead of
   * `minutes`), down to this many, so a test sees a freeze expire in seconds instead of a minute. Unset (the
   * default), a request naming `seconds` is refused and a freeze lasts whole minutes, as always. The freeze
   * routes read it from the process environment (freezeMinSeconds below), as CONSOLE_FREEZE_CLAIM_SECONDS.
   */
  freezeMinSeconds: FreezeMinSeconds.optional(),
  /**
   * CONSOLE_DIFF_PROOF: `managed-fields` (default) skips the dry-run of an object whose apply provably changes
   * nothing (domain/apply-noop.ts); `off` dry-runs every object, as kubectl diff does
   */
  diffProof: z.enum(['managed-fields', 'off']).default('managed-fields'),
  /** environments where only on-call and admin control canaries (CONSOLE_ROLLOUT_ONCALL_ENVS, comma-separated) */
  rolloutOncallEnvs: z.array(z.string().min(1)).default(['prod']),
  oidc: z
    .object({
      issuer: z.url({ protocol: /^https?$/ }),
      clientId: z.string().min(1),
      clientSecret: z.string().min(1).optional(),
      redirectUrl: z.url({ protocol: /^https?$/ }).optional(),
      scopes: z.string().default('openid profile email groups'),
      groupsClaim: z.string().default('groups'),
      // sub: stable and unique per issuer (preferred_username is neither, per the OIDC spec)
      usernameClaim: z.string().default('sub'),
      // OIDC identities never share a name with local accounts or Kubernetes' own (as kube-apiserver's --oidc-*-prefix)
      usernamePrefix: z.string().default('oidc:'),
      groupsPrefix: z.string().default('oidc:'),
    })
    .optional(),
});
export type Config = z.infer<typeof ConfigSchema>;

export class ConfigError extends Error {}

/**
 * CONSOLE_FREEZE_MIN_SECONDS as the freeze routes read it (ConfigSchema.freezeMinSeconds): undefined when unset
 * (freezes in whole minutes only); a value out of range is a ConfigError, as at start-up.
 */
export function freezeMinSeconds(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const v = env.CONSOLE_FREEZE_MIN_SECONDS?.trim();
  if (!v) return undefined;
  const r = FreezeMinSeconds.safeParse(v);
  if (!r.success)
    throw new ConfigError(
      `invalid configuration: freezeMinSeconds: ${r.error.issues.map((i) => i.message).join('; ')}`,
    );
  return r.data;
}

function readSecretFile(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    throw new ConfigError(`cannot read CONSOLE_OIDC_CLIENT_SECRET_FILE ${path}`);
  }
}

function list(v: string | undefined): string[] | undefined {
  const l = v
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return l && l.length ? l : undefined;
}

/** Reads env + argv. `--sandbox` or no kubeconfig at all → the embedded sandbox. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, argv: string[] = process.argv.slice(2)): Config {
  const flag = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    if (i >= 0) return argv[i + 1];
    const eq = argv.find((a) => a.startsWith(`--${name}=`));
    return eq?.slice(name.length + 3);
  };
  const raw = {
    kubeconfig: flag('kubeconfig') ?? env.KUBECONFIG?.split(':')[0] ?? undefined,
    contexts: list(flag('contexts') ?? env.CONSOLE_CONTEXTS),
    host: flag('host') ?? env.CONSOLE_HOST ?? undefined,
    port: flag('port') ?? env.CONSOLE_PORT ?? env.PORT ?? undefined,
    dataDir: flag('data-dir') ?? env.CONSOLE_DATA_DIR ?? undefined,
    databaseUrl: env.DATABASE_URL || undefined,
    envLabel: env.CONSOLE_ENV_LABEL || undefined,
    envOrder: list(env.CONSOLE_ENV_ORDER),
    environments: env.CONSOLE_ENVIRONMENTS?.trim() || undefined,
    staticDir: env.CONSOLE_STATIC_DIR || undefined,
    sandbox: argv.includes('--sandbox') || env.CONSOLE_SANDBOX === '1',
    logLevel: env.LOG_LEVEL || undefined,
    authFile: env.CONSOLE_AUTH_FILE || undefined,
    publicUrl: env.CONSOLE_PUBLIC_URL || undefined,
    passwordScryptLog2N: env.CONSOLE_PASSWORD_SCRYPT_LOG2N?.trim() || undefined,
    sessionIdleMinutes: env.CONSOLE_SESSION_IDLE_MINUTES || undefined,
    sessionMaxHours: env.CONSOLE_SESSION_MAX_HOURS || undefined,
    clusterAccess: env.CONSOLE_CLUSTER_ACCESS || undefined,
    trustProxy: list(env.CONSOLE_TRUST_PROXY),
    metricsToken: env.CONSOLE_METRICS_TOKEN?.trim() || undefined,
    forgeTokensFile: env.CONSOLE_FORGE_TOKENS_FILE?.trim() || undefined,
    eventSinksFile: env.CONSOLE_EVENT_SINKS_FILE?.trim() || undefined,
    git: Object.fromEntries(
      Object.entries({
        allowHosts: listSetting(env.CONSOLE_GIT_ALLOW_HOSTS),
        allowSsh: env.CONSOLE_GIT_ALLOW_SSH?.trim() || undefined,
      }).filter(([, v]) => v !== undefined),
    ),
    flaggerGateHosts: listSetting(env.CONSOLE_FLAGGER_GATE_HOSTS),
    pruneStaleSeconds: env.CONSOLE_PRUNE_STALE_SECONDS || undefined,
    intentStaleSeconds: env.CONSOLE_INTENT_STALE_SECONDS || undefined,
    freezeMinSeconds: env.CONSOLE_FREEZE_MIN_SECONDS?.trim() || undefined,
    diffProof: env.CONSOLE_DIFF_PROOF?.trim() || undefined,
    rolloutOncallEnvs: env.CONSOLE_ROLLOUT_ONCALL_ENVS
      ? env.CONSOLE_ROLLOUT_ONCALL_ENVS.split(',')
          .map((x) => x.trim())
          .filter(Boolean)
      : undefined,
    maskKeyFile: env.CONSOLE_MASK_KEY_FILE?.trim() || undefined,
    releases: Object.fromEntries(
      Object.entries({
        enabled: env.CONSOLE_RELEASE_RECORDER !== 'off',
        verificationsFile: env.CONSOLE_VERIFICATIONS_FILE,
        registryMirrors: env.CONSOLE_REGISTRY_MIRRORS,
        verifyIntervalS: env.CONSOLE_VERIFICATION_INTERVAL_S,
        reviewRequiredEnvs: list(env.CONSOLE_REVIEW_REQUIRED_ENVS),
        lease: env.CONSOLE_RECORDER_LEASE?.trim() || undefined,
        leaseCluster: env.CONSOLE_RECORDER_LEASE_CLUSTER?.trim() || undefined,
        manifestRetentionDays: env.CONSOLE_MANIFEST_RETENTION_DAYS?.trim() || undefined,
      }).filter(([, v]) => v !== undefined && v !== ''),
    ),
    oidc: env.CONSOLE_OIDC_ISSUER
      ? Object.fromEntries(
          Object.entries({
            issuer: env.CONSOLE_OIDC_ISSUER,
            clientId: env.CONSOLE_OIDC_CLIENT_ID,
            clientSecret: env.CONSOLE_OIDC_CLIENT_SECRET_FILE
              ? readSecretFile(env.CONSOLE_OIDC_CLIENT_SECRET_FILE)
              : env.CONSOLE_OIDC_CLIENT_SECRET,
            redirectUrl: env.CONSOLE_OIDC_REDIRECT_URL,
            scopes: env.CONSOLE_OIDC_SCOPES,
            groupsClaim: env.CONSOLE_OIDC_GROUPS_CLAIM,
            usernameClaim: env.CONSOLE_OIDC_USERNAME_CLAIM,
            usernamePrefix: env.CONSOLE_OIDC_USERNAME_PREFIX,
            groupsPrefix: env.CONSOLE_OIDC_GROUPS_PREFIX,
          }).filter(([, v]) => v),
        )
      : undefined,
  };
  // secrets never appear in configuration errors
  const parsed = ConfigSchema.safeParse(Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined)));
  if (!parsed.success) {
    const issues = parsed.error.issues
      .map(
        (i) =>
          `${i.path.join('.') || 'config'}: ${i.path.includes('clientSecret') || i.path.includes('metricsToken') ? 'invalid' : i.message}`,
      )
      .join('; ');
    throw new ConfigError(redactUrlCredentials(`invalid configuration: ${issues}`, '***'));
  }
  const cfg = parsed.data;
  if (!cfg.sandbox && !cfg.kubeconfig) {
    const home = join(homedir(), '.kube', 'config');
    if (existsSync(home)) cfg.kubeconfig = home;
    else cfg.sandbox = true;
  }
  if (cfg.kubeconfig && !cfg.sandbox && !existsSync(cfg.kubeconfig)) {
    throw new ConfigError(`cannot read kubeconfig ${cfg.kubeconfig}: file does not exist`);
  }
  // an install (the chart and the kustomize base set CONSOLE_INSTALL=1) with no environment mapping: every
  // permission would follow the apps' env labels, which whoever may label an app writes (issue 40). Refused unless
  // the operator says so; sandbox mode keeps its own mapping; a developer's run (a kubeconfig, the tests) is not an
  // install, and the labels still decide there by default.
  if (
    env.CONSOLE_INSTALL?.trim() === '1' &&
    !cfg.sandbox &&
    !cfg.environments &&
    env.CONSOLE_ENVIRONMENTS_FROM_LABELS?.trim() !== '1'
  )
    throw new ConfigError(
      'CONSOLE_ENVIRONMENTS is not set: which environment each cluster/namespace is decides every permission ' +
        "(e.g. nonprod/dev=dev,prod/*=prod; the chart: config.environments). To let each app's " +
        `${cfg.envLabel} label decide instead (whoever may label an app then picks its environment), set ` +
        'CONSOLE_ENVIRONMENTS_FROM_LABELS=1 (the chart: config.environmentsFromLabels=true)',
    );
  cfg.dataDir = resolve(cfg.dataDir);
  return cfg;
}
