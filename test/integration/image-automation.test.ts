// Issue 26 part 5, Flux image automation against the real controllers in the sandbox: a dev app's page lists the
// automation, its policy's choice and the registry's tags; a tag pushed to the registry makes the real
// image-automation-controller commit to Git, and the release chain names that commit as the automation's (its
// controller reported pushing it); a person who writes the automation's author line on their own commit is
// recorded as a claim, not as the automation. The console runs as its own least-privilege identity.
// The file owns its estate (test/support/image-automation-estate.ts): its dev app, its own image in the registry
// and its own ImageRepository, ImagePolicy and ImageUpdateAutomation writing to its repository; the seed's image
// automation, its repository and its tags are only read (staging's page).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppResponse, ReleasesResponse } from '../../src/api/schemas.ts';
import { IMAGE_AUTOMATION, pushImageTag } from '../../sandbox/image-automation.ts';
import { forgeAuthEnv } from '../../sandbox/forge.ts';
import { forgeUser } from '../../sandbox/scenario-forge.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { RECORDER_ON, startTestConsole } from '../support/console.ts';
import { imageAutomationEstate, type ImageAutomationEstate } from '../support/image-automation-estate.ts';

const STAGING = 'nonprod/flux-system/kustomization/digital-human-staging';
const OVERLAY = 'overlays/dev/kustomization.yaml';
const NEW_TAG = '2.1.1';
const IMPOSTOR_LINE = '# image automation impostor (test)\n';

let ia: ImageAutomationEstate;
let DEV: string;
let AUTOMATION: string;
let con: Awaited<ReturnType<typeof startTestConsole>>;
let developer: Signed;
let auditor: Signed;

const appOf = async (id: string) => (await as(developer, con.url, `/api/apps/${id}`)).body as unknown as AppResponse;
// the release chain is read by those who review and audit it (a developer may not)
const releases = async () =>
  (await as(auditor, con.url, `/api/apps/${DEV}/releases`)).body as unknown as ReleasesResponse;
const change = (res: ReleasesResponse | undefined, sha: string) =>
  res?.releases.find((r) => r.sha === sha)?.states.find((s) => s.name === 'change');
/** A commit pushed by the sandbox admin with the automation's author line (what anyone who can push can do). */
function pushAsTheBotAuthor(edit: (text: string) => string, message: string): string {
  const work = mkdtempSync(join(tmpdir(), 'impostor-'));
  const env = { ...process.env, GIT_TERMINAL_PROMPT: '0', ...forgeAuthEnv(forgeUser('admin')) };
  const git = (args: string[]) => execFileSync('git', args, { cwd: work, env, encoding: 'utf8' });
  try {
    git(['clone', '-q', ia.estate.state.git.url, '.']);
    const f = join(work, OVERLAY);
    writeFileSync(f, edit(readFileSync(f, 'utf8')));
    const who = `${IMAGE_AUTOMATION.author.name} <${IMAGE_AUTOMATION.author.email}>`;
    git([
      '-c',
      `user.name=${IMAGE_AUTOMATION.author.name}`,
      '-c',
      `user.email=${IMAGE_AUTOMATION.author.email}`,
      'commit',
      '-qam',
      message,
      `--author=${who}`,
    ]);
    git(['push', '-q', 'origin', 'HEAD:main']);
    return git(['rev-parse', 'HEAD']).trim();
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

beforeAll(async () => {
  ia = await imageAutomationEstate('image-automation');
  DEV = ia.estate.appId();
  AUTOMATION = `${ia.namespace}/${ia.automation}`;
  // the estate's cluster only (the controllers run there; staging is on it too)
  con = await startTestConsole({ ...RECORDER_ON, CONSOLE_CONTEXTS: ia.estate.cluster });
  developer = await signIn(con.url, 'developer');
  auditor = await signIn(con.url, 'auditor');
}, 300_000);

afterAll(async () => {
  try {
    await con?.close();
  } finally {
    await ia?.teardown();
  }
}, 240_000);

describe('Flux image automation (real controllers)', () => {
  it('dev’s page lists the automation, where it pushes, its policy’s choice and the registry’s tags; staging has none', async () => {
    let dev: AppResponse | undefined;
    await waitFor(
      'dev’s image automation read',
      async () => {
        dev = await appOf(DEV);
        if ((dev.imageAutomation?.policies[0]?.chosen?.tag ?? '') !== '') return true;
        ia.request(); // a new ImageRepository scans at once; asked again, not at its 1-minute interval
        return false;
      },
      { timeoutMs: 120_000, intervalMs: 2000 },
    );
    const ias = dev?.imageAutomation;
    expect(ias?.status).toBe('ok');
    expect(ias?.automations.map((a) => `${a.namespace}/${a.name}`)).toEqual([AUTOMATION]);
    expect(ias?.automations[0]).toMatchObject({
      pushBranch: 'main',
      updatePath: 'overlays/dev',
      author: IMAGE_AUTOMATION.author,
      suspended: false,
      ready: { status: 'True' },
    });
    expect(ias?.policies[0]).toMatchObject({
      name: ia.policy,
      rule: `semver ${IMAGE_AUTOMATION.semverRange}`,
      chosen: { tag: '2.1.0' },
    });
    expect(ias?.repositories[0]?.latestTags).toEqual(expect.arrayContaining(['2.0.0', '2.1.0', '2.1.0-build.2']));
    const staging = await appOf(STAGING);
    expect(staging.imageAutomation).toMatchObject({ status: 'ok', automations: [] });
  }, 180_000);

  it('a new tag in the registry: the controller commits it, and the release chain names the commit as its push', async () => {
    const digest = pushImageTag(ia.image, NEW_TAG, '2.1.0-build.2');
    const sha = await ia.waitForPush(NEW_TAG);
    await ia.estate.waitApplied(sha); // the estate's Flux fetches when asked (its interval is long)
    let res: ReleasesResponse | undefined;
    await waitFor(
      `the change state of ${sha.slice(0, 8)}`,
      async () => {
        res = await releases();
        // recorded at once (a claim, when the console reads Git before the controller's status names its push),
        // then confirmed
        return change(res, sha)?.actor === `image automation ${AUTOMATION}`;
      },
      { timeoutMs: 180_000, intervalMs: 2000 },
    );
    const c = change(res, sha);
    expect(c?.actor).toBe(`image automation ${AUTOMATION}`);
    expect(c?.value).toContain(
      `image automation ${AUTOMATION}: policy ${ia.policy} (semver ${IMAGE_AUTOMATION.semverRange}) chose ${NEW_TAG} (was 2.1.0)`,
    );
    expect(c?.value).toContain(`/${ia.image}`);
    expect(c?.value).toContain(digest);
    expect(c?.data?.automation).toMatchObject({ confirmed: true, automation: AUTOMATION, pushBranch: 'main' });
    // dev does not require review: a direct push is not reviewed, and the review state says so
    const review = res?.releases.find((r) => r.sha === sha)?.states.find((s) => s.name === 'review');
    if (review?.status !== 'pending')
      expect(review?.value ?? review?.why ?? '').toMatch(/direct push|no pull request/i);
    // the app page shows the policy's new choice and the push
    const page = await appOf(DEV);
    expect(page.imageAutomation?.automations[0]?.lastPushCommit).toBe(sha);
  }, 420_000);

  it('someone who writes the automation’s author line on their own commit is recorded as a claim, not as the automation', async () => {
    const sha = pushAsTheBotAuthor(
      (t) => t.replace('configMapGenerator:\n', `${IMPOSTOR_LINE}configMapGenerator:\n`),
      'Image automation (dev): looks like the bot',
    );
    await ia.estate.waitApplied(sha);
    let res: ReleasesResponse | undefined;
    await waitFor(
      `the change state of ${sha.slice(0, 8)}`,
      async () => {
        res = await releases();
        return change(res, sha)?.status === 'ok';
      },
      { timeoutMs: 240_000, intervalMs: 3000 },
    );
    const c = change(res, sha);
    expect(c?.actor).toBe(IMAGE_AUTOMATION.author.name);
    expect(c?.actor).not.toMatch(/^image automation /);
    expect(c?.value).toContain(
      `the author claims image automation ${AUTOMATION}, which has not reported pushing ${sha.slice(0, 8)}`,
    );
    expect(c?.data?.automation).toMatchObject({ confirmed: false });
  }, 360_000);
});
