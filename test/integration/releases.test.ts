// Issue 16 against the real sandbox: the release recorder records every release's states as they happen,
// with real values (commit from Git, artifact digest from Flux, render hash from the diff's renderer, applied
// revision, health, an HTTP verification against the sandbox's dev business endpoint and the Pods' image
// digests), and the newest release of a broken commit names its first failed state with Flux's BuildFailed.
// The file owns its estate (test/support/family-estate.ts): the seed's service in its own repository, as dev,
// staging and prod apps of its own; every commit, pull request and branch protection change is on its repository.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReleasesResponse } from '../../src/api/schemas.ts';
import { mustState } from '../../sandbox/sandbox.ts';
import { waitFor } from '../../sandbox/procs.ts';
import {
  approvePullRequest,
  closePullRequest,
  forgeApi,
  mergePullRequest,
  openForgePullRequest,
  readRepoFile,
  writeRepoFile,
} from '../../sandbox/scenario.ts';
import { as } from '../support/auth.ts';
import { RECORDER_ON, startTestConsole } from '../support/console.ts';
import { familyEstate, type FamilyEstate } from '../support/family-estate.ts';

const OVERLAY = 'overlays/dev/kustomization.yaml';
const STAGING_OVERLAY = 'overlays/staging/kustomization.yaml';
const IMAGE = 'registry.example.com/digital-human/render-worker';

/** the parts of the sandbox state this suite reads (written by startSandbox, not in SandboxState's type) */
const sandbox = () =>
  mustState() as unknown as {
    registry?: { url: string; images: Array<{ ref: string; digest: string }> };
    business?: { endpoints: Record<string, { url: string }> };
  };

let fam: FamilyEstate;
let APP: string;
let PROD_APP: string;
let con: Awaited<ReturnType<typeof startTestConsole>>;
let dir: string;
let original: string;

/** the estate's repository: read, committed to (as the forge admin, straight to main), its forge */
const read = (path: string) => readRepoFile(path, 'main', fam.estate.state);
const push = (message: string, edit: (w: string) => void) => fam.estate.push(message, edit);

const releases = async (app = APP, c = con): Promise<ReleasesResponse> => {
  const r = await as(c.admin, c.url, `/api/apps/${app}/releases`);
  if (r.status !== 200) throw new Error(`releases: ${r.status} ${r.text}`);
  return r.body as ReleasesResponse;
};
const state = (r: ReleasesResponse['releases'][number] | undefined, name: string) =>
  r?.states.find((s) => s.name === name);
type Release = ReleasesResponse['releases'][number];
/**
 * The release that brought `sha`: its own row, or — in a busy repository, where the controller's poll saw a later
 * commit first — the row of the later commit whose change names `sha` among the commits applied together.
 */
const releaseOf = (list: Release[], sha: string): Release | undefined =>
  list.find((x) => x.sha === sha) ??
  list.find((x) =>
    ((state(x, 'change')?.data?.between as { commits?: Array<{ sha: string }> } | undefined)?.commits ?? []).some(
      (c) => c.sha === sha,
    ),
  );

const MISSING_LINE = '  - missing-by-releases-test.yaml\n';
const TTS_ONE = '  - name: tts-gateway\n    count: 1\n';
const TTS_TWO = '  - name: tts-gateway\n    count: 2\n';

/** The line after the render worker's image entry (`newTag: …` or `digest: …`). */
function renderWorkerLine(overlay: string): string {
  const lines = overlay.split('\n');
  const i = lines.findIndex((l) => l.trim() === `- name: ${IMAGE}`);
  if (i < 0 || lines[i + 1] === undefined) throw new Error('no render worker image entry in the dev overlay');
  return lines[i + 1] as string;
}
function withRenderWorkerLine(overlay: string, line: string): string {
  const lines = overlay.split('\n');
  const i = lines.findIndex((l) => l.trim() === `- name: ${IMAGE}`);
  if (i < 0) throw new Error('no render worker image entry in the dev overlay');
  lines[i + 1] = line;
  return lines.join('\n');
}
/** The overlay with the render worker's image entry set to `tag`. */
const withRenderWorkerTag = (overlay: string, tag: string): string =>
  withRenderWorkerLine(overlay, renderWorkerLine(overlay).replace(/(newTag|digest): .*/, `newTag: ${tag}`));

beforeAll(async () => {
  const st = sandbox();
  const dev = st.business?.endpoints.dev;
  if (!dev) throw new Error('the sandbox serves no dev business endpoint');
  fam = await familyEstate('releases');
  APP = fam.appId('dev');
  PROD_APP = fam.appId('prod');
  dir = mkdtempSync(join(tmpdir(), 'releases-test-'));
  const verifications = join(dir, 'verifications.json');
  // the sandbox's dev business endpoint, only read (GET), as the check of the estate's dev app
  writeFileSync(verifications, JSON.stringify({ [APP]: { url: dev.url, expectStatus: 200, timeoutMs: 3000 } }));
  con = await startTestConsole({
    ...RECORDER_ON,
    CONSOLE_VERIFICATIONS_FILE: verifications,
    CONSOLE_REGISTRY_MIRRORS: `registry.example.com=${st.registry?.url ?? ''}`,
    CONSOLE_VERIFICATION_INTERVAL_S: '600',
  });
  original = read(OVERLAY);
}, 420_000);

afterAll(async () => {
  try {
    await con?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  } finally {
    await fam?.teardown();
  }
}, 240_000);

describe('release evidence (issue 16)', () => {
  it('a commit changing the dev render worker image: all nine states with real values, the promotion once staging runs the same digests — while others commit to the repository every 20 s', async () => {
    // a busy repository is the normal case (issue 39): unrelated commits (outside every app's path) all along
    const busy = fam.estate.busy();
    try {
      await imageReleaseAndPromotion(busy.commits);
    } finally {
      busy.stop();
    }
  }, 420_000);

  async function imageReleaseAndPromotion(unrelated: readonly string[]): Promise<void> {
    const tag = /newTag: 1\.4\.0\b/.test(original) ? '1.4.2' : '1.4.0';
    const digest = sandbox().registry?.images.find((i) => i.ref === `digital-human/render-worker:${tag}`)?.digest;
    const sha = push(`Render worker ${tag} in dev (releases test)`, (w) =>
      writeRepoFile(w, OVERLAY, withRenderWorkerTag(readFileSync(join(w, OVERLAY), 'utf8'), tag)),
    );
    // and another team's commit right after ours: Flux's next poll most likely sees both and applies only the
    // later one (then that release names ours among the commits applied together)
    const rightAfter = push('unrelated change right after (releases test)', (w) =>
      writeRepoFile(w, 'unrelated/right-after.txt', `${new Date().toISOString()}\n`),
    );
    await fam.waitApplied(sha, 'dev');
    let r: ReleasesResponse['releases'][number] | undefined;
    await waitFor(
      `release ${sha.slice(0, 8)} verified`,
      async () => {
        r = releaseOf((await releases()).releases, sha);
        return !!r && state(r, 'verification')?.status !== 'pending';
      },
      { timeoutMs: 180_000, intervalMs: 1000 },
    );
    const change = state(r, 'change');
    if (r?.sha === sha)
      expect(change).toMatchObject({
        status: 'ok',
        actor: 'Scenario Author',
        value: `Render worker ${tag} in dev (releases test)`,
      });
    else {
      // Flux applied a later (unrelated) commit first: that release names ours among the commits applied together
      expect([rightAfter, ...unrelated]).toContain(r?.sha);
      expect(change?.status).toBe('ok');
      expect(change?.value).toMatch(/ · with \d+ earlier commits? since [0-9a-f]{7}, applied together$/);
      expect((change?.data?.between as { commits: unknown[] }).commits).toContainEqual({
        sha,
        subject: `Render worker ${tag} in dev (releases test)`,
      });
    }
    console.log(
      `release of ${sha.slice(0, 8)}: row ${r?.sha.slice(0, 8)} (${unrelated.length} unrelated commits so far)`,
    );
    expect(change?.data).toMatchObject({ author: { email: 'author@sandbox.invalid' }, signature: { status: 'none' } });
    expect(change?.seq).toBeGreaterThan(0);

    const artifact = state(r, 'artifact');
    expect(artifact?.status).toBe('ok');
    expect(String(artifact?.data?.artifactDigest)).toMatch(/^sha256:[0-9a-f]{64}$/);
    const images = artifact?.data?.images as Array<{ image: string; mutable: boolean; resolved?: string }>;
    const rw = images.find((i) => i.image === `${IMAGE}:${tag}`);
    expect(rw).toMatchObject({ mutable: true, resolved: digest });

    const render = state(r, 'render');
    expect(render?.status).toBe('ok');
    expect(render?.data).toMatchObject({ renderer: expect.stringMatching(/flux-render/) });
    expect(String(render?.data?.renderHash)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(Number(render?.data?.objects)).toBeGreaterThan(3);

    const reconcile = state(r, 'reconcile');
    expect(reconcile).toMatchObject({ status: 'ok', actor: 'kustomize-controller' });
    expect(String(reconcile?.data?.appliedRevision)).toContain(r?.sha);
    expect(Number(reconcile?.data?.secondsAfterCommit)).toBeGreaterThanOrEqual(0);

    const health = state(r, 'health');
    expect(['Healthy', 'Degraded']).toContain(health?.data?.health);

    const verification = state(r, 'verification');
    expect(verification?.data?.http).toMatchObject({ status: 200, ok: true });
    expect(Number((verification?.data?.http as { latencyMs: number }).latencyMs)).toBeGreaterThanOrEqual(0);
    const live = verification?.data?.live as { pods: number; digests: Record<string, number>; unexpected: unknown[] };
    expect(live.pods).toBeGreaterThan(0);
    expect(Object.keys(live.digests)).toContain(digest);
    // the scenario pushes straight to main: a direct push, flagged (dev does not require review, prod does)
    const review = state(r, 'review');
    expect(review?.status).toBe('ok');
    expect(review?.data).toMatchObject({ directPush: true, reviewRequired: false });
    expect(review?.value).toMatch(/direct push/);

    // the API server accepted every rendered object in a server-side dry-run as the controller
    const validation = state(r, 'validation');
    expect(validation).toMatchObject({ status: 'ok' });
    expect(Number(validation?.data?.accepted)).toBe(Number(render?.data?.objects));
    expect(validation?.data?.rejected).toBe(0);

    // not promoted yet: staging runs another render worker
    expect(state(r, 'promotion')).toMatchObject({ status: 'pending', why: expect.stringMatching(/staging/) });
    const promote = push(`Promote render worker ${tag} to staging (releases test)`, (w) =>
      writeRepoFile(w, STAGING_OVERLAY, withRenderWorkerTag(readFileSync(join(w, STAGING_OVERLAY), 'utf8'), tag)),
    );
    await fam.waitApplied(promote, 'staging');
    const released = r?.sha ?? sha;
    await waitFor(
      `release ${released.slice(0, 8)} promoted to staging`,
      async () => {
        r = (await releases()).releases.find((x) => x.sha === released);
        return state(r, 'promotion')?.status === 'ok';
      },
      { timeoutMs: 120_000, intervalMs: 1000 },
    );
    const promotion = state(r, 'promotion');
    expect(promotion?.data).toMatchObject({ toEnv: 'staging' });
    // staging's commit that brought the digests: ours, or a later one Flux applied with it
    expect(fam.estate.atOrAfter(promote)).toContain(promotion?.data?.toSha);
    expect(promotion?.data?.digests as string[]).toContain(`${IMAGE}@${digest}`);
    expect(Number(promotion?.data?.secondsAfter)).toBeGreaterThan(0);
    expect(promotion?.value).toMatch(/reached staging/);
    // the staging commit left dev's render as it was: no change in dev, not a release of the dev app
    // (in a busy repository dev may see the staging commit only for a moment — a later one supersedes it before
    // its render — so: the first of it and the commits after it that dev rendered)
    const fromPromote = fam.estate.atOrAfter(promote);
    let devSide: ReleasesResponse['releases'][number] | undefined;
    await waitFor(
      `dev's render of ${promote.slice(0, 8)} or a later commit recorded`,
      async () => {
        const list = (await releases()).releases;
        devSide = fromPromote.map((c) => releaseOf(list, c)).find((x) => !!x && state(x, 'render')?.status === 'ok');
        return !!devSide;
      },
      { timeoutMs: 90_000, intervalMs: 1000 },
    );
    const seen = (await releases()).releases.map((x) => ({
      sha: x.sha.slice(0, 8),
      unchangedFrom: x.unchangedFrom?.slice(0, 8),
      render: state(x, 'render')?.value,
      reconcile: state(x, 'reconcile')?.status,
    }));
    expect(devSide?.unchangedFrom, JSON.stringify({ released, promote, devSide: devSide?.sha, seen })).toBe(released);
    expect(state(devSide, 'render')?.data).toMatchObject({ effect: 'unchanged', sameAs: released });
    expect(state(devSide, 'render')?.value).toMatch(/no change here/);
    // every unrelated commit dev saw after the release is "no change here" too: none is a release of the app
    const later = fam.estate.atOrAfter(released).slice(1);
    const after = (await releases()).releases.filter((x) => unrelated.includes(x.sha) && later.includes(x.sha));
    for (const x of after)
      if (state(x, 'render')?.status === 'ok') expect(x.unchangedFrom, x.sha.slice(0, 8)).toBe(released);
  }

  it('a change merged through a reviewed pull request: the review state names the PR, its approver and who merged it', async () => {
    expect(read(OVERLAY)).toContain(TTS_ONE);
    const branch = `releases-test-${Date.now().toString(36)}`;
    const pr = await openForgePullRequest({
      branch,
      title: 'Two TTS gateways in dev (releases test)',
      edit: (w) => writeRepoFile(w, OVERLAY, readFileSync(join(w, OVERLAY), 'utf8').replace(TTS_ONE, TTS_TWO)),
      forge: fam.estate.forge,
    });
    await approvePullRequest(pr.number, 'reviewer', fam.estate.forge);
    const merged = await mergePullRequest(pr.number, 'developer', fam.estate.forge);
    if (!merged.ok) throw new Error(`merge: ${merged.status} ${merged.message}`);
    await fam.waitApplied(merged.mergeCommit, 'dev');
    let r: ReleasesResponse['releases'][number] | undefined;
    await waitFor(
      `release ${merged.mergeCommit.slice(0, 8)} reviewed`,
      async () => {
        r = (await releases()).releases.find((x) => x.sha === merged.mergeCommit);
        return !!r && state(r, 'review')?.status !== 'pending';
      },
      { timeoutMs: 120_000, intervalMs: 1000 },
    );
    const review = state(r, 'review');
    expect(review).toMatchObject({ status: 'ok', actor: 'developer', value: `PR #${pr.number} approved by reviewer` });
    expect(review?.data).toMatchObject({
      source: 'forge',
      reviewed: true,
      branch: 'main',
      pullRequest: {
        number: pr.number,
        author: 'developer',
        mergedBy: 'developer',
        baseBranch: 'main',
        headBranch: branch,
        headCommit: pr.headSha,
      },
      approvers: ['reviewer'],
      approvals: [{ login: 'reviewer', commit: pr.headSha }],
      notCounted: [],
    });
    expect(String(review?.data?.mergeTime)).toMatch(/^\d{4}-/);
  }, 300_000);

  it('a commit naming a missing file: the newest release stops at the render / reconcile with Flux BuildFailed', async () => {
    const current = read(OVERLAY);
    // after `resources:`, before whatever comes first
    const broken = current.replace(/^resources:\n/m, `resources:\n${MISSING_LINE}`);
    expect(broken).not.toBe(current);
    const sha = push('Reference a missing file in dev (releases test)', (w) => writeRepoFile(w, OVERLAY, broken));
    let res: ReleasesResponse | undefined;
    await waitFor(
      `release ${sha.slice(0, 8)} failed`,
      async () => {
        fam.fetch(); // the estate's sources fetch when asked (their interval is long)
        res = await releases();
        const r = res.releases[0];
        // wait for the build's own answer (Flux retries a failed build every retryInterval)
        return (
          r?.sha === sha &&
          state(r, 'reconcile')?.status === 'failed' &&
          state(r, 'render')?.status !== 'pending' &&
          /BuildFailed/.test(res.notLive?.why ?? '')
        );
      },
      { timeoutMs: 180_000, intervalMs: 1000 },
    );
    const r = res?.releases[0];
    expect(state(r, 'change')?.status).toBe('ok');
    expect(state(r, 'render')).toMatchObject({
      status: 'failed',
      why: expect.stringContaining('missing-by-releases-test.yaml'),
    });
    expect(state(r, 'reconcile')?.why).toMatch(/BuildFailed/);
    expect(r?.blocked?.state).toBe('render');
    expect(res?.notLive?.why).toMatch(/BuildFailed/);
    expect(state(r, 'health')?.status).toBe('pending');
  }, 300_000);
});

/** The review state of release `sha` of `app` once recorded (not pending). */
async function reviewOf(app: string, sha: string, c = con, timeoutMs = 180_000) {
  let r: ReleasesResponse['releases'][number] | undefined;
  let seen = '';
  try {
    await waitFor(
      `review of ${sha.slice(0, 8)} on ${app}`,
      async () => {
        // the estate's sources fetch when asked (their interval is long; dev's render is broken by now: Flux fetches
        // and fails the build, the release is recorded all the same)
        fam.fetch();
        const all = (await releases(app, c)).releases;
        seen = all
          .map((x) => `${x.sha.slice(0, 8)}: ${state(x, 'change')?.status}/${state(x, 'review')?.status}`)
          .join(', ');
        r = all.find((x) => x.sha === sha);
        return !!r && state(r, 'review')?.status !== 'pending';
      },
      { timeoutMs, intervalMs: 1000 },
    );
  } catch (e) {
    throw new Error(`${(e as Error).message}; releases seen (change/review): ${seen || 'none'}`);
  }
  return state(r, 'review');
}

const repoApi = () => `/repos/${fam.estate.forge.repo.owner}/${fam.estate.forge.repo.name}`;
const NO_FORGE = 'no forge configured: a commit message cannot prove a review';

describe('review that is real (issue 21)', () => {
  it('a direct push whose message says Reviewed-by: unknown without a forge, failed in prod with one', async () => {
    // a console with no forge configured (and the suite's console, which has the sandbox's Gitea)
    const bare = await startTestConsole({ ...RECORDER_ON, CONSOLE_FORGE_TOKENS_FILE: '' });
    try {
      const sha = push(
        'Direct push claiming a review (releases test)\n\nReviewed-by: Reviewer <reviewer@sandbox.invalid>',
        () => undefined,
      );
      for (const app of [APP, PROD_APP]) {
        const review = await reviewOf(app, sha, bare);
        expect(review).toMatchObject({ status: 'unknown', why: expect.stringContaining(NO_FORGE) });
        expect(review?.data).toMatchObject({ source: 'commit', reviewed: false, approvers: [] });
        if (review?.data?.trailers !== undefined && String(review.why) === NO_FORGE)
          expect(review.data.trailers).toEqual(['Reviewer']); // the commit was read: its claim is kept, as a claim
      }
      const prod = await reviewOf(PROD_APP, sha);
      expect(prod).toMatchObject({ status: 'failed', why: expect.stringMatching(/^direct push: no pull request on /) });
      expect(prod?.why).toMatch(/names Reviewer as reviewer\(s\), which a commit message cannot prove/);
      expect(prod?.why).toMatch(/prod requires review$/);
      expect(prod?.data).toMatchObject({
        source: 'forge',
        directPush: true,
        reviewed: false,
        reviewRequired: true,
        approvers: [],
        trailers: ['Reviewer'],
        notCounted: [{ login: 'Reviewer', why: expect.stringMatching(/trailer/) }],
      });
      // dev does not require review: flagged, not reviewed
      const dev = await reviewOf(APP, sha);
      expect(dev).toMatchObject({ status: 'ok', value: expect.stringMatching(/direct push/) });
      expect(dev?.data).toMatchObject({ directPush: true, reviewed: false, reviewRequired: false });
    } finally {
      await bare.close();
    }
  }, 300_000);

  it('a pull request approved before a later push, then merged: not reviewed (failed in prod)', async () => {
    // Gitea's default: a push does not dismiss earlier approvals, so the forge itself lets this merge through
    const protection = `${repoApi()}/branch_protections/main`;
    const forge = fam.estate.forge;
    const before = await forgeApi('admin', 'GET', protection, undefined, forge);
    if (before.status !== 200) throw new Error(`branch protection: HTTP ${before.status}`);
    const dismissed = before.json.dismiss_stale_approvals === true;
    const setDismiss = async (on: boolean) => {
      const r = await forgeApi('admin', 'PATCH', protection, { dismiss_stale_approvals: on }, forge);
      if (r.status !== 200) throw new Error(`branch protection: HTTP ${r.status}`);
    };
    await setDismiss(false);
    let unmerged: number | undefined;
    try {
      const branch = `releases-stale-${Date.now().toString(36)}`;
      const file = `releases-test/${branch}.txt`;
      const pr = await openForgePullRequest({
        branch,
        title: 'Approved, then changed (releases test)',
        edit: (w) => writeRepoFile(w, file, 'approved content\n'),
        forge,
      });
      unmerged = pr.number;
      await approvePullRequest(pr.number, 'reviewer', forge);
      // the later push: the developer changes the branch after the approval
      const blob = await forgeApi('developer', 'GET', `${repoApi()}/contents/${file}?ref=${branch}`, undefined, forge);
      const later = await forgeApi(
        'developer',
        'PUT',
        `${repoApi()}/contents/${file}`,
        {
          branch,
          sha: blob.json.sha,
          message: 'Changed after the approval (releases test)',
          content: Buffer.from('content nobody approved\n').toString('base64'),
        },
        forge,
      );
      if (later.status !== 200) throw new Error(`later push: HTTP ${later.status}`);
      const laterSha = String((later.json.commit as { sha?: string } | undefined)?.sha ?? '');
      expect(laterSha).toMatch(/^[0-9a-f]{40}$/);
      // the forge moves the pull request's head (asynchronously), then merges what it has
      await waitFor(
        `PR #${pr.number} head at the later push`,
        async () => {
          const ref = await forgeApi(
            'developer',
            'GET',
            `${repoApi()}/git/refs/pull/${pr.number}/head`,
            undefined,
            forge,
          );
          const refs = (Array.isArray(ref.json) ? ref.json : [ref.json]) as Array<{ object?: { sha?: string } }>;
          return refs[0]?.object?.sha === laterSha;
        },
        { timeoutMs: 60_000, intervalMs: 500 },
      );
      let merged: Awaited<ReturnType<typeof mergePullRequest>> | undefined;
      await waitFor(
        `PR #${pr.number} merged`,
        async () => {
          merged = await mergePullRequest(pr.number, 'developer', forge);
          return merged.ok || merged.status !== 405; // 405: Gitea is still checking mergeability
        },
        { timeoutMs: 60_000, intervalMs: 1000 },
      );
      if (!merged?.ok) throw new Error(`merge: ${merged?.status} ${merged?.message}`);
      unmerged = undefined;
      const mergeCommit = merged.mergeCommit;

      const notCounted = [
        {
          login: 'reviewer',
          commit: pr.headSha,
          why: expect.stringMatching(
            new RegExp(`^approved ${pr.headSha.slice(0, 8)}, not the merged head ${laterSha.slice(0, 8)}`),
          ),
        },
      ];
      const dev = await reviewOf(APP, mergeCommit);
      expect(dev).toMatchObject({ status: 'ok', value: `PR #${pr.number} (no approval)` });
      expect(dev?.data).toMatchObject({
        reviewed: false,
        reviewRequired: false,
        approvers: [],
        notCounted,
        pullRequest: { number: pr.number, author: 'developer', headCommit: laterSha },
      });
      const prod = await reviewOf(PROD_APP, mergeCommit);
      expect(prod).toMatchObject({
        status: 'failed',
        why: expect.stringMatching(
          new RegExp(`^pull request #${pr.number} has no approval that counts: reviewer \\(approved`),
        ),
      });
      expect(prod?.data).toMatchObject({ reviewed: false, reviewRequired: true, approvers: [], notCounted });
    } finally {
      await setDismiss(dismissed);
      if (unmerged !== undefined) await closePullRequest(unmerged, forge);
    }
  }, 300_000);
});
