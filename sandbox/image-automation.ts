// Flux's image automation in the sandbox (issue 26, part 5): the real image-reflector-controller and
// image-automation-controller v1.2.3 (built from their Go modules by build.sh, CRDs beside the binaries), each as
// its own ServiceAccount in flux-system with the RBAC their projects ship (sandbox/identities.ts), no leader
// election, every listener on loopback. Their CRDs are installed on every cluster; the controllers run on the
// cluster that has dev only (nonprod), the environment whose overlay they update.
//
// At every `up` the sandbox admin applies, in flux-system (sandbox set-up, not Git: the registry's port changes at
// every start):
//   ImageRepository tts-gateway        scans 127.0.0.1:<registry port>/digital-human/tts-gateway (the registry
//                                      mirrors registry.example.com, the name Git keeps)
//   ImagePolicy tts-gateway            semver ^2.1: 2.1.0 at rest (2.1.0-build.2 is a prerelease, left out)
//   GitRepository digital-human-image-automation
//                                      the seed repo again, with the forge bot flux-image-automation's token
//                                      (Secret digital-human-image-automation-git; the dev Kustomization's own
//                                      GitRepository reads anonymously and cannot push)
//   ImageUpdateAutomation digital-human-dev
//                                      Setters on ./overlays/dev, pushed straight to main (dev needs no review;
//                                      the bot is on main's push whitelist, sandbox/forge.ts)
// The seed marks only dev's tts-gateway tag (`# {"$imagepolicy": "flux-system:tts-gateway:tag"}`, seed.ts), so at
// rest the policy's choice equals Git and the automation commits nothing.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { forgeCredentials, type ForgeState } from './forge.ts';
import { freePort, startProcess, waitFor, type ProcRecord } from './procs.ts';
import { moveTag, type RegistryState } from './registry.ts';
import { sandboxRegistry } from './scenario-forge.ts';
import { readRepoFile, readRepoFileAt } from './scenario.ts';
import { TTS_IMAGE_POLICY } from './seed.ts';
import { BIN_DIR, bin, kubectl, mustState, type ClusterState } from './state.ts';

export const IMAGE_AUTOMATION_PROCS = ['image-reflector-controller', 'image-automation-controller'] as const;

/** The names of the image automation objects (all in flux-system on the cluster that has dev). */
export const IMAGE_AUTOMATION = {
  namespace: TTS_IMAGE_POLICY.namespace,
  /** the environment whose overlay is updated; its cluster runs the controllers */
  env: 'dev',
  /** the registry repository scanned */
  image: 'digital-human/tts-gateway',
  repository: 'tts-gateway',
  policy: TTS_IMAGE_POLICY.name,
  semverRange: '^2.1',
  automation: 'digital-human-dev',
  /** the GitRepository the automation clones and pushes with (the bot's token), and its Secret */
  gitRepository: 'digital-human-image-automation',
  gitSecret: 'digital-human-image-automation-git',
  author: { name: 'Flux image automation', email: 'image-automation@flux.sandbox.invalid' },
} as const;

const log = (msg: string) => {
  if (process.env.SANDBOX_QUIET !== '1')
    process.stderr.write(`[sandbox ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
};

/** Whether a cluster with these environment namespaces runs the controllers (the one that has dev). */
export const runsImageAutomation = (namespaces: string[]): boolean => namespaces.includes(IMAGE_AUTOMATION.env);

/** A sandbox from before the image automation: the cluster that has dev lacks one of its controllers (restart it). */
export const imageAutomationMissing = (clusters: Array<Pick<ClusterState, 'namespaces' | 'procs'>>): boolean =>
  clusters.some(
    (c) => runsImageAutomation(c.namespaces) && !IMAGE_AUTOMATION_PROCS.every((n) => c.procs.some((p) => p.name === n)),
  );

/** The CRD files (ImageRepository, ImagePolicy, ImageUpdateAutomation) as `kubectl apply` arguments; none unbuilt. */
export function imageAutomationCrdArgs(binDir = BIN_DIR): string[] {
  return ['imagerefl-dist', 'imageauto-dist'].flatMap((d) => {
    const dir = join(binDir, d, 'manifests');
    if (!existsSync(dir)) return [];
    return readdirSync(dir)
      .filter((f) => f.endsWith('.yaml'))
      .sort()
      .flatMap((f) => ['-f', join(dir, f)]);
  });
}

const rule = (groups: string[], resources: string[], verbs: string[]) =>
  `  - apiGroups: [${groups.map((g) => JSON.stringify(g)).join(', ')}]\n    resources: [${resources.join(', ')}]\n    verbs: [${verbs.join(', ')}]\n`;
const ALL = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
const READ = ['get', 'list', 'watch'];
const STATUS = ['get', 'update', 'patch'];
const IMAGE = 'image.toolkit.fluxcd.io';

/**
 * The controllers' identities: a ServiceAccount each in flux-system, the ClusterRole each project ships
 * (config/rbac/role.yaml of v1.2.3, plus the finalizers subresources) and, in flux-system only, Secrets read and
 * its leader-election Role (leases, configmaps; unused while leader election is off, shipped all the same).
 */
export function imageAutomationRbac(): string {
  const sa = (name: string) => `apiVersion: v1
kind: ServiceAccount
metadata:
  name: ${name}
  namespace: flux-system
`;
  const bind = (kind: 'ClusterRoleBinding' | 'RoleBinding', name: string, role: string, subject: string) =>
    `apiVersion: rbac.authorization.k8s.io/v1
kind: ${kind}
metadata:
  name: ${name}
${kind === 'RoleBinding' ? '  namespace: flux-system\n' : ''}roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ${kind === 'RoleBinding' ? 'Role' : 'ClusterRole'}
  name: ${role}
subjects:
  - kind: ServiceAccount
    name: ${subject}
    namespace: flux-system
`;
  const clusterRole = (name: string, rules: string) => `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: ${name}
rules:
${rules}`;
  const reflector = clusterRole(
    'image-reflector-controller',
    rule([IMAGE], ['imagerepositories', 'imagepolicies'], ALL) +
      rule([IMAGE], ['imagerepositories/status', 'imagepolicies/status'], STATUS) +
      rule(
        [IMAGE],
        ['imagerepositories/finalizers', 'imagepolicies/finalizers'],
        ['create', 'update', 'patch', 'delete'],
      ) +
      // namespaces: an ImageRepository's accessFrom selects the namespaces whose policies may use it
      rule([''], ['namespaces'], READ) +
      rule([''], ['events'], ['create', 'patch']) +
      rule(['events.k8s.io'], ['events'], ['create', 'patch']),
  );
  const automation = clusterRole(
    'image-automation-controller',
    rule([IMAGE], ['imageupdateautomations'], ALL) +
      rule([IMAGE], ['imageupdateautomations/status'], STATUS) +
      rule([IMAGE], ['imageupdateautomations/finalizers'], ['create', 'update', 'patch', 'delete']) +
      rule([IMAGE], ['imagepolicies'], READ) +
      rule([IMAGE], ['imagepolicies/status'], ['get']) +
      rule(['source.toolkit.fluxcd.io'], ['gitrepositories'], READ) +
      rule([''], ['events'], ['create', 'patch']) +
      rule(['events.k8s.io'], ['events'], ['create', 'patch']),
  );
  const inFluxSystem = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: image-automation-flux-system
  namespace: flux-system
rules:
${rule([''], ['secrets', 'serviceaccounts'], READ)}${rule([''], ['configmaps'], ALL)}${rule([''], ['configmaps/status'], STATUS)}${rule(['coordination.k8s.io'], ['leases'], ALL)}`;
  return [
    sa('image-reflector-controller'),
    sa('image-automation-controller'),
    reflector,
    automation,
    inFluxSystem,
    bind(
      'ClusterRoleBinding',
      'image-reflector-controller',
      'image-reflector-controller',
      'image-reflector-controller',
    ),
    bind(
      'ClusterRoleBinding',
      'image-automation-controller',
      'image-automation-controller',
      'image-automation-controller',
    ),
    bind('RoleBinding', 'image-reflector-controller', 'image-automation-flux-system', 'image-reflector-controller'),
    bind('RoleBinding', 'image-automation-controller', 'image-automation-flux-system', 'image-automation-controller'),
  ].join('---\n');
}

/**
 * Starts both controllers (the cluster that has dev), each with its identity's kubeconfig (`ids`, from
 * sandbox/identities.ts). Their loopback ports go into the cluster's `ports`. The reflector keeps its tag database
 * (Badger) under the cluster's dir; the automation clones into its own temp dir there.
 */
export async function startImageAutomation(c: {
  dir: string;
  ports: Record<string, number>;
  logf: (n: string) => string;
  ids: Record<(typeof IMAGE_AUTOMATION_PROCS)[number], string>;
}): Promise<ProcRecord[]> {
  const p = c.ports;
  for (const k of ['imgReflMetrics', 'imgReflHealth', 'imgAutoMetrics', 'imgAutoHealth']) p[k] = await freePort();
  const common = (metrics = 0, health = 0) => [
    ...['--watch-all-namespaces=true', '--enable-leader-election=false', '--events-addr', ''],
    ...['--metrics-addr', `127.0.0.1:${metrics}`, '--health-addr', `127.0.0.1:${health}`],
    ...['--log-level', 'info', '--concurrent', '2'],
  ];
  const storage = join(c.dir, 'image-reflector-storage');
  const tmp = join(c.dir, 'image-automation-tmp');
  for (const d of [storage, tmp]) mkdirSync(d, { recursive: true });
  const env = (kubeconfig: string) => ({ KUBECONFIG: kubeconfig, RUNTIME_NAMESPACE: 'flux-system' });
  return [
    startProcess(
      'image-reflector-controller',
      bin('image-reflector-controller'),
      [
        ...common(p.imgReflMetrics, p.imgReflHealth),
        ...['--storage-path', storage, '--requeue-dependency', '5s'],
        // a few tags per repository: a small memory-mapped value log (the default is 256 MiB)
        ...['--storage-value-log-file-size', String(16 << 20)],
      ],
      c.logf('image-reflector-controller'),
      env(c.ids['image-reflector-controller']),
    ),
    startProcess(
      'image-automation-controller',
      bin('image-automation-controller'),
      common(p.imgAutoMetrics, p.imgAutoHealth),
      c.logf('image-automation-controller'),
      { ...env(c.ids['image-automation-controller']), TMPDIR: tmp },
    ),
  ];
}

/** The commit message: the changes named (v1.2.3's template data: .AutomationObject, .Changed, .Values). */
export const MESSAGE_TEMPLATE = `Image automation (dev):{{ range .Changed.Changes }} {{ .OldValue }} -> {{ .NewValue }}{{ end }}

{{ range .Changed.Changes }}{{ .Setter }}: {{ print .OldValue }} -> {{ println .NewValue }}{{ end }}
Automation: {{ .AutomationObject }}
`;

/** The objects applied at every `up` (JSON documents; the token only in the Secret, never in Git or a log). */
export function imageAutomationObjects(registryHost: string, gitUrl: string, bot: { username: string; token: string }) {
  const meta = (name: string) => ({ name, namespace: IMAGE_AUTOMATION.namespace });
  const docs = [
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: meta(IMAGE_AUTOMATION.gitSecret),
      type: 'Opaque',
      stringData: { username: bot.username, password: bot.token },
    },
    {
      apiVersion: 'source.toolkit.fluxcd.io/v1',
      kind: 'GitRepository',
      metadata: meta(IMAGE_AUTOMATION.gitRepository),
      // the automation reads only its URL, ref and Secret (it clones for itself): a slow fetch interval
      spec: {
        url: gitUrl,
        interval: '10m',
        timeout: '20s',
        ref: { branch: 'main' },
        secretRef: { name: IMAGE_AUTOMATION.gitSecret },
      },
    },
    {
      apiVersion: 'image.toolkit.fluxcd.io/v1',
      kind: 'ImageRepository',
      metadata: meta(IMAGE_AUTOMATION.repository),
      spec: { image: `${registryHost}/${IMAGE_AUTOMATION.image}`, insecure: true, interval: '1m', suspend: false },
    },
    {
      apiVersion: 'image.toolkit.fluxcd.io/v1',
      kind: 'ImagePolicy',
      metadata: meta(IMAGE_AUTOMATION.policy),
      spec: {
        imageRepositoryRef: { name: IMAGE_AUTOMATION.repository },
        policy: { semver: { range: IMAGE_AUTOMATION.semverRange } },
        // the digest of the chosen tag in status.latestRef (the release chain names it); refreshed every minute
        digestReflectionPolicy: 'Always',
        interval: '1m',
      },
    },
    {
      apiVersion: 'image.toolkit.fluxcd.io/v1',
      kind: 'ImageUpdateAutomation',
      metadata: meta(IMAGE_AUTOMATION.automation),
      spec: {
        interval: '1m',
        // every `up` resumes it (a test that suspended it and died must not leave it so)
        suspend: false,
        sourceRef: { kind: 'GitRepository', name: IMAGE_AUTOMATION.gitRepository },
        git: {
          checkout: { ref: { branch: 'main' } },
          commit: { author: IMAGE_AUTOMATION.author, messageTemplate: MESSAGE_TEMPLATE },
          push: { branch: 'main' },
        },
        update: { path: `./overlays/${IMAGE_AUTOMATION.env}`, strategy: 'Setters' },
      },
    },
  ];
  return docs.map((d) => JSON.stringify(d)).join('\n---\n');
}

/**
 * Applies the image automation objects on the cluster that has dev (sandbox set-up, as the admin), naming the
 * registry's current port. A failure is reported, not fatal: nothing else depends on it.
 */
export function applyImageAutomation(
  clusters: Array<Pick<ClusterState, 'name' | 'namespaces' | 'kubeconfig'>>,
  registry: Pick<RegistryState, 'host'> | undefined,
  forge: ForgeState | undefined,
): void {
  const c = clusters.find((x) => runsImageAutomation(x.namespaces));
  if (!c) return;
  try {
    if (!registry || !forge) throw new Error('no registry or no forge');
    const bot = forgeCredentials(forge).users.imageAutomation;
    if (!bot) throw new Error('the forge has no flux-image-automation user (a forge from before it: sandbox reset)');
    execFileSync(
      bin('kubectl'),
      [
        ...['--kubeconfig', c.kubeconfig, 'apply', '--server-side', '--field-manager=sandbox', '--force-conflicts'],
        ...['-f', '-'],
      ],
      {
        input: imageAutomationObjects(registry.host, forge.repo.cloneUrl, bot),
        stdio: ['pipe', 'pipe', 'pipe'],
        timeout: 60_000,
      },
    );
  } catch (e) {
    const err = e as { stderr?: Buffer; message: string };
    log(`WARNING: image automation objects: ${err.stderr?.toString().trim() || err.message}`);
  }
}

// ---- scenario helpers (the sandbox admin; tests and demos) ----

/** The sandbox cluster running the image automation (the one that has dev). */
export function imageAutomationCluster(): string {
  const c = mustState().clusters.find((x) => runsImageAutomation(x.namespaces));
  if (!c) throw new Error(`the sandbox has no cluster with ${IMAGE_AUTOMATION.env}`);
  return c.name;
}

/** Points `repo:tag` at the manifest `from` names (a tag, or a `sha256:` digest); returns the digest. */
export function pushImageTag(repo: string, tag: string, from: string): string {
  return moveTag(sandboxRegistry(), BIN_DIR, repo, tag, from);
}

/** Removes the tag `repo:tag` from the registry (its manifest stays, by digest). An absent tag is no error. */
export async function deleteImageTag(repo: string, tag: string): Promise<void> {
  const reg = sandboxRegistry();
  const r = await fetch(`${reg.url}/v2/${repo}/manifests/${encodeURIComponent(tag)}`, {
    method: 'DELETE',
    signal: AbortSignal.timeout(10_000),
  });
  if (r.status !== 202 && r.status !== 404)
    throw new Error(`registry DELETE ${repo}:${tag}: HTTP ${r.status} ${(await r.text()).slice(0, 200)}`);
}

/** Asks the repository scan, the policy and the automation to run now (not at their next 1-minute interval). */
export function requestImageAutomation(): void {
  const { namespace, repository, policy, automation } = IMAGE_AUTOMATION;
  kubectl(imageAutomationCluster(), [
    ...['-n', namespace, 'annotate', '--overwrite'],
    ...[`imagerepository/${repository}`, `imagepolicy/${policy}`, `imageupdateautomation/${automation}`],
    `reconcile.fluxcd.io/requestedAt=${new Date().toISOString()}`,
  ]);
}

/** Suspends (or resumes) the ImageUpdateAutomation: while suspended it neither commits nor pushes. */
export function setImageAutomationSuspended(suspended: boolean): void {
  const { namespace, automation } = IMAGE_AUTOMATION;
  kubectl(imageAutomationCluster(), [
    ...['-n', namespace, 'patch', `imageupdateautomation/${automation}`, '--type', 'merge'],
    ...['-p', JSON.stringify({ spec: { suspend: suspended } })],
  ]);
}

/** The commit the automation last reported pushing (its `status.lastPushCommit`). */
export function lastPushCommit(): string | undefined {
  const { namespace, automation } = IMAGE_AUTOMATION;
  const out = kubectl(imageAutomationCluster(), [
    '-n',
    namespace,
    'get',
    'imageupdateautomation',
    automation,
    '-o',
    'json',
  ]);
  return (JSON.parse(out) as { status?: { lastPushCommit?: string } }).status?.lastPushCommit;
}

const DEV_OVERLAY = `overlays/${IMAGE_AUTOMATION.env}/kustomization.yaml`;
const TTS_TAG = /digital-human\/tts-gateway\n\s+newTag: (\S+)/;
/** The tts-gateway tag dev's overlay names on main, or at a commit. */
export const devTtsTag = (sha?: string): string | undefined =>
  TTS_TAG.exec(sha ? readRepoFileAt(DEV_OVERLAY, sha) : readRepoFile(DEV_OVERLAY))?.[1];

/**
 * Waits for the automation to push `tag` (asking it to run every 5 s) and returns that commit: the one its
 * status names, once that commit has the tag (Git has the push a moment before the controller's status names it).
 */
export async function waitForAutomationPush(tag: string, timeoutMs = 180_000): Promise<string> {
  let sha = '';
  await waitFor(
    `the image automation pushed ${tag}`,
    async () => {
      requestImageAutomation();
      const last = lastPushCommit() ?? '';
      sha = last && devTtsTag(last) === tag ? last : '';
      return sha !== '';
    },
    { timeoutMs, intervalMs: 5000 },
  );
  return sha;
}

/** Deletes `tag` from the registry and waits for the automation to commit the policy's choice at rest, 2.1.0. */
export async function untagAndWaitForRestore(tag: string, timeoutMs = 170_000): Promise<void> {
  await deleteImageTag(IMAGE_AUTOMATION.image, tag);
  await waitFor(
    'the image automation put dev back on 2.1.0',
    async () => {
      requestImageAutomation();
      return devTtsTag() === '2.1.0';
    },
    { timeoutMs, intervalMs: 5000 },
  );
}
