// Argo CD in a sandbox cluster: its real controllers, built from the argo-cd module (sandbox/build.sh), on
// 127.0.0.1 beside Flux:
//
//   redis-server (Debian's; Argo CD's cache)  ←  argocd-repo-server (renders Git: kustomize/helm from .sandbox/bin)
//   argocd-application-controller   (as ServiceAccount argocd/argocd-application-controller, Argo CD's shipped
//                                     cluster RBAC; it reaches the destination cluster through a cluster Secret
//                                     holding the same identity's token)
//   argocd-applicationset-controller (as ServiceAccount argocd/argocd-applicationset-controller, its shipped Role)
//
// argocd-server is not run: the console is the UI. The in-cluster address (kubernetes.default.svc) needs a Pod's
// environment, so the cluster is registered by its apiserver URL, which the seeded Applications name.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { connect } from 'node:net';
import { startProcess, waitFor, type ProcRecord } from './procs.ts';
import { BIN_DIR, bin } from './state.ts';

/** Argo CD's components, as the sandbox runs them (what `status` and the reuse check look for). */
export const ARGOCD_PROCS = [
  'argocd-redis',
  'argocd-repo-server',
  'argocd-application-controller',
  'argocd-applicationset-controller',
] as const;

/** How often the application controller compares every app with Git (Argo CD's default is 120 s). */
export const ARGOCD_RESYNC_S = 15;

/** The version built (its VERSION file beside the binary), or undefined when Argo CD is not built. */
export function argocdVersion(binDir = BIN_DIR): string | undefined {
  const f = join(binDir, 'argocd-dist', 'VERSION');
  return existsSync(f) ? readFileSync(f, 'utf8').trim() : undefined;
}

/** The token a controller identity's kubeconfig carries (sandbox/identities.ts writes it). */
function tokenOf(kubeconfig: string): string {
  const m = /^\s*token:\s*(\S+)\s*$/m.exec(readFileSync(kubeconfig, 'utf8'));
  if (!m?.[1]) throw new Error(`no token in ${kubeconfig}`);
  return m[1];
}

/**
 * Argo CD's settings and the cluster it deploys to, as objects in `argocd`: argocd-cm (annotation tracking, said
 * explicitly: the console reads it to know what Argo CD adds to each object it applies), argocd-rbac-cm,
 * argocd-secret (a random server.secretkey) and the cluster Secret (the apiserver URL, the application
 * controller's own token and the cluster CA).
 */
export function argocdConfigObjects(c: {
  name: string;
  apiserver: string;
  caCert: string;
  controllerKubeconfig: string;
}): string {
  const partOf = `  labels:\n    app.kubernetes.io/part-of: argocd\n`;
  const config = JSON.stringify({
    bearerToken: tokenOf(c.controllerKubeconfig),
    tlsClientConfig: { insecure: false, caData: readFileSync(c.caCert).toString('base64') },
  });
  return [
    `apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
${partOf}data:
  application.resourceTrackingMethod: annotation
  timeout.reconciliation: ${ARGOCD_RESYNC_S}s
  timeout.reconciliation.jitter: 0s
`,
    `apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-rbac-cm
  namespace: argocd
${partOf}data:
  policy.default: role:readonly
`,
    `apiVersion: v1
kind: Secret
metadata:
  name: argocd-secret
  namespace: argocd
${partOf}type: Opaque
stringData:
  server.secretkey: ${randomBytes(32).toString('hex')}
`,
    `apiVersion: v1
kind: Secret
metadata:
  name: cluster-${c.name}
  namespace: argocd
  labels:
    app.kubernetes.io/part-of: argocd
    argocd.argoproj.io/secret-type: cluster
type: Opaque
stringData:
  name: ${c.name}
  server: ${c.apiserver}
  config: '${config}'
`,
  ].join('---\n');
}

export interface ArgoCdPorts {
  redis: number;
  repoServer: number;
  repoMetrics: number;
  controllerMetrics: number;
  appsetMetrics: number;
  appsetProbe: number;
  appsetWebhook: number;
}

/**
 * Starts Redis, the repo-server, the application controller and the ApplicationSet controller of one cluster.
 * `ids`: the kubeconfig of each controller identity. Waits until the repo-server answers and Redis is up.
 */
export async function startArgoCd(c: {
  name: string;
  dir: string;
  ports: ArgoCdPorts;
  ids: { 'argocd-application-controller': string; 'argocd-applicationset-controller': string };
  logf: (n: string) => string;
}): Promise<ProcRecord[]> {
  const redisBin = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((p) => existsSync(p));
  if (!redisBin) throw new Error('Argo CD needs redis-server (Debian: apt-get install -y redis-server)');
  const dist = resolve(dirname(bin('argocd')), readlinkSync(join(BIN_DIR, 'argocd-dist')));
  const home = join(c.dir, 'argocd-home');
  const tmp = join(c.dir, 'argocd-tmp');
  for (const d of [home, tmp]) mkdirSync(d, { recursive: true });
  const redis = `127.0.0.1:${c.ports.redis}`;
  const common = (component: string): Record<string, string> => ({
    ARGOCD_BINARY_NAME: component,
    HOME: home,
    TMPDIR: tmp,
    // the repo-server runs git (through Argo CD's wrapper scripts), kustomize and helm from PATH
    PATH: [join(dist, 'hack'), BIN_DIR, process.env.PATH ?? '/usr/bin:/bin'].join(':'),
    ARGOCD_GPG_ENABLED: 'false',
  });
  const procs: ProcRecord[] = [];
  const redisProc = startProcess(
    'argocd-redis',
    redisBin,
    [
      ...['--bind', '127.0.0.1', '--port', String(c.ports.redis), '--save', '', '--appendonly', 'no'],
      ...['--protected-mode', 'yes', '--dir', tmp, '--loglevel', 'warning'],
    ],
    c.logf('argocd-redis'),
  );
  procs.push(redisProc);
  const repo = startProcess(
    'argocd-repo-server',
    bin('argocd-repo-server'),
    [
      ...['--address', '127.0.0.1', '--port', String(c.ports.repoServer)],
      ...['--metrics-address', '127.0.0.1', '--metrics-port', String(c.ports.repoMetrics)],
      // plaintext on loopback; the client-CA default (a Pod's mounted path) must be cleared with it
      ...['--disable-tls', '--client-ca-path=', '--redis', redis, '--loglevel', 'warn', '--parallelismlimit', '2'],
      // what a branch resolves to is cached 3 min by default (a forge webhook would refresh it): 10 s here, so a
      // commit reaches Argo CD's comparison within its 15 s resync, like Flux's intervals
      ...['--revision-cache-expiration', '10s'],
    ],
    c.logf('argocd-repo-server'),
    common('argocd-repo-server'),
  );
  procs.push(repo);
  const kc = (sa: keyof typeof c.ids) => ['--kubeconfig', c.ids[sa], '--namespace', 'argocd'];
  procs.push(
    startProcess(
      'argocd-application-controller',
      bin('argocd-application-controller'),
      [
        ...kc('argocd-application-controller'),
        ...['--repo-server', `127.0.0.1:${c.ports.repoServer}`, '--repo-server-plaintext', '--redis', redis],
        ...['--metrics-port', String(c.ports.controllerMetrics), '--loglevel', 'warn'],
        ...['--status-processors', '4', '--operation-processors', '4'],
        ...['--app-resync', String(ARGOCD_RESYNC_S), '--app-resync-jitter', '0', '--self-heal-timeout-seconds', '2'],
      ],
      c.logf('argocd-application-controller'),
      { ...common('argocd-application-controller'), KUBECONFIG: c.ids['argocd-application-controller'] },
    ),
    startProcess(
      'argocd-applicationset-controller',
      bin('argocd-applicationset-controller'),
      [
        ...kc('argocd-applicationset-controller'),
        ...['--argocd-repo-server', `127.0.0.1:${c.ports.repoServer}`, '--repo-server-plaintext'],
        ...['--metrics-addr', `127.0.0.1:${c.ports.appsetMetrics}`, '--probe-addr', `127.0.0.1:${c.ports.appsetProbe}`],
        ...['--webhook-addr', `127.0.0.1:${c.ports.appsetWebhook}`, '--enable-leader-election=false'],
        ...['--loglevel', 'warn'],
      ],
      c.logf('argocd-applicationset-controller'),
      // parts of it read the kubeconfig through controller-runtime, which knows only KUBECONFIG
      { ...common('argocd-applicationset-controller'), KUBECONFIG: c.ids['argocd-applicationset-controller'] },
    ),
  );
  await waitFor(
    `${c.name} argocd-repo-server`,
    async () => (await fetch(`http://127.0.0.1:${c.ports.repoMetrics}/metrics`)).ok,
    { proc: repo, timeoutMs: 60_000 },
  );
  await waitFor(`${c.name} argocd redis`, () => redisPing(c.ports.redis), { proc: redisProc, timeoutMs: 30_000 });
  return procs;
}

/** Redis answers PING (its protocol, on a plain socket). */
function redisPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(2000, () => done(false));
    sock.on('error', () => done(false));
    sock.on('connect', () => sock.write('PING\r\n'));
    sock.on('data', (d: Buffer) => done(d.toString().startsWith('+PONG')));
  });
}
