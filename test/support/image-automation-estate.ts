// Flux image automation on a test file's own estate (./own-estate.ts), made like the seed's (sandbox/image-automation.ts)
// but writing to the estate's repository: the seed's dev service (base/ and overlays/dev/) whose tts-gateway
// tag is marked for the estate's own ImagePolicy and runs the estate's own image, a repository of the sandbox
// registry named for this estate (its tags 2.0.0, 2.1.0, 2.1.0-build.2 pushed at set-up, built like the seed's:
// the seed's repositories and tags are only read), and in flux-system, named `<estate id>-…`: a GitRepository on
// the estate's repository with the seed's image-automation bot Secret (only referenced: the bot may push to every
// test repository, sandbox/forge-repos.ts), an ImageRepository scanning the estate's image, an ImagePolicy
// (semver ^2.1, like the seed's) and an ImageUpdateAutomation (Setters on ./overlays/dev, pushed to main).
// Teardown deletes the image objects first (nothing pushes while the estate goes), then the estate and the tags.
//
//   const ia = await imageAutomationEstate('image-automation');
//   pushImageTag(ia.image, '2.1.1', '2.1.0-build.2');
//   const sha = await ia.waitForPush('2.1.1');
//   …
//   await ia.teardown();
import { randomBytes } from 'node:crypto';
import { deleteImageTag, IMAGE_AUTOMATION, MESSAGE_TEMPLATE } from '../../sandbox/image-automation.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { pushNewImage, readRepoFileAt, sandboxRegistry } from '../../sandbox/scenario.ts';
import { SEED_IMAGE_HOST, TTS_IMAGE_POLICY } from '../../sandbox/seed.ts';
import { kubectl } from '../../sandbox/state.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from './own-estate.ts';

const OVERLAY = 'overlays/dev/kustomization.yaml';
/** the tags the estate's image has at set-up (the seed's tts-gateway tags) */
export const ESTATE_TAGS = ['2.0.0', '2.1.0', '2.1.0-build.2'] as const;
const LABEL = 'gitops-console.dev/test-estate';

export interface ImageAutomationEstate {
  estate: Estate;
  /** the estate's image: its repository in the sandbox registry (`t-<name>-<random>/tts-gateway`) */
  image: string;
  /** the objects' namespace (flux-system) and names */
  namespace: string;
  automation: string;
  policy: string;
  repository: string;
  /** the tts-gateway tag the estate's dev overlay names on main, or at a commit */
  ttsTag(sha?: string): string | undefined;
  /** asks the scan, the policy and the automation to run now */
  request(): void;
  /** the commit the automation last reported pushing */
  lastPushCommit(): string | undefined;
  /** until the automation reported pushing a commit that has `tag` (asking it to run every 5 s); that commit */
  waitForPush(tag: string, timeoutMs?: number): Promise<string>;
  teardown(): Promise<void>;
}

export async function imageAutomationEstate(name: string): Promise<ImageAutomationEstate> {
  const reg = sandboxRegistry();
  const image = `t-${name.toLowerCase().replace(/[^a-z0-9-]/g, '-')}-${randomBytes(3).toString('hex')}/tts-gateway`;
  // every tag of the estate's image, the test's own pushes too (Distribution has no repository delete: the empty
  // repository stays in the catalog, with no tags)
  const deleteTags = async () => {
    const r = await fetch(`${reg.url}/v2/${image}/tags/list`, { signal: AbortSignal.timeout(10_000) }).catch(
      () => undefined,
    );
    const tags = r?.ok ? (((await r.json()) as { tags?: string[] | null }).tags ?? []) : [...ESTATE_TAGS];
    for (const tag of tags) await deleteImageTag(image, tag).catch(() => undefined);
  };
  try {
    for (const tag of ESTATE_TAGS) pushNewImage(image, tag);
  } catch (e) {
    await deleteTags();
    throw e;
  }
  const template = digitalHumanTemplate('dev');
  const overlay = template[OVERLAY] ?? '';
  const seedEntry = `  - name: ${SEED_IMAGE_HOST}/digital-human/tts-gateway\n    newTag: 2.1.0 # {"$imagepolicy": "${TTS_IMAGE_POLICY.namespace}:${TTS_IMAGE_POLICY.name}:tag"}\n`;
  if (!overlay.includes(seedEntry)) throw new Error(`${OVERLAY} of the seed has no marked tts-gateway tag`);
  let estate: Estate;
  try {
    estate = await ownEstate({
      name,
      env: 'dev',
      files: template,
      namedFiles: ({ id }) => ({
        [OVERLAY]: overlay.replace(
          seedEntry,
          `  - name: ${SEED_IMAGE_HOST}/digital-human/tts-gateway\n    newName: ${SEED_IMAGE_HOST}/${image}\n    newTag: 2.1.0 # {"$imagepolicy": "${IMAGE_AUTOMATION.namespace}:${id}-tts-gateway:tag"}\n`,
        ),
      }),
    });
  } catch (e) {
    await deleteTags();
    throw e;
  }
  const { id, cluster } = estate;
  const namespace = IMAGE_AUTOMATION.namespace;
  const names = {
    gitRepository: `${id}-image-automation`,
    repository: `${id}-tts-gateway`,
    policy: `${id}-tts-gateway`,
    automation: `${id}-dev`,
  };
  const meta = (n: string) => ({ name: n, namespace, labels: { [LABEL]: id } });
  const docs = [
    {
      apiVersion: 'source.toolkit.fluxcd.io/v1',
      kind: 'GitRepository',
      metadata: meta(names.gitRepository),
      spec: {
        url: estate.forge.repo.cloneUrl,
        interval: '10m',
        timeout: '20s',
        ref: { branch: 'main' },
        secretRef: { name: IMAGE_AUTOMATION.gitSecret },
      },
    },
    {
      apiVersion: 'image.toolkit.fluxcd.io/v1',
      kind: 'ImageRepository',
      metadata: meta(names.repository),
      spec: { image: `${reg.host}/${image}`, insecure: true, interval: '1m' },
    },
    {
      apiVersion: 'image.toolkit.fluxcd.io/v1',
      kind: 'ImagePolicy',
      metadata: meta(names.policy),
      spec: {
        imageRepositoryRef: { name: names.repository },
        policy: { semver: { range: IMAGE_AUTOMATION.semverRange } },
        digestReflectionPolicy: 'Always',
        interval: '1m',
      },
    },
    {
      apiVersion: 'image.toolkit.fluxcd.io/v1',
      kind: 'ImageUpdateAutomation',
      metadata: meta(names.automation),
      spec: {
        interval: '1m',
        sourceRef: { kind: 'GitRepository', name: names.gitRepository },
        // its own policy only (without a selector an automation applies every policy of its namespace)
        policySelector: { matchLabels: { [LABEL]: id } },
        git: {
          checkout: { ref: { branch: 'main' } },
          commit: { author: IMAGE_AUTOMATION.author, messageTemplate: MESSAGE_TEMPLATE },
          push: { branch: 'main' },
        },
        update: { path: './overlays/dev', strategy: 'Setters' },
      },
    },
  ];
  const objects = [
    `imageupdateautomation/${names.automation}`,
    `imagepolicy/${names.policy}`,
    `imagerepository/${names.repository}`,
    `gitrepository/${names.gitRepository}`,
  ];
  const teardown = async () => {
    try {
      kubectl(cluster, ['-n', namespace, 'delete', ...objects, '--ignore-not-found', '--wait=false']);
    } finally {
      try {
        await estate.teardown();
      } finally {
        await deleteTags();
      }
    }
  };
  try {
    kubectl(
      cluster,
      ['apply', '--server-side', '--field-manager=test-estate', '-f', '-'],
      docs.map((d) => JSON.stringify(d)).join('\n---\n'),
    );
  } catch (e) {
    await teardown();
    throw e;
  }
  const TAG = /newTag: (\S+) # \{"\$imagepolicy"/;
  const lastPushCommit = () =>
    (
      JSON.parse(
        kubectl(cluster, ['-n', namespace, 'get', 'imageupdateautomation', names.automation, '-o', 'json']),
      ) as {
        status?: { lastPushCommit?: string };
      }
    ).status?.lastPushCommit;
  const ttsTag = (sha?: string) => TAG.exec(readRepoFileAt(OVERLAY, sha ?? 'main', estate.state))?.[1];
  const request = () =>
    kubectl(cluster, [
      ...['-n', namespace, 'annotate', '--overwrite'],
      ...objects.slice(0, 3),
      `reconcile.fluxcd.io/requestedAt=${new Date().toISOString()}`,
    ]);
  return {
    estate,
    image,
    namespace,
    automation: names.automation,
    policy: names.policy,
    repository: names.repository,
    ttsTag,
    request,
    lastPushCommit,
    async waitForPush(tag, timeoutMs = 180_000) {
      let sha = '';
      await waitFor(
        `the estate's image automation pushed ${tag}`,
        async () => {
          request();
          const last = lastPushCommit() ?? '';
          sha = last && ttsTag(last) === tag ? last : '';
          return sha !== '';
        },
        { timeoutMs, intervalMs: 5000 },
      );
      return sha;
    },
    teardown,
  };
}
