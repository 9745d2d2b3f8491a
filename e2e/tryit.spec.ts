// The guided "Try it" page in Chromium. The e2e BFF runs on a kubeconfig (no /api/tryit there), so this spec
// starts a second BFF in sandbox mode (CONSOLE_SANDBOX=1), which reuses the running sandbox. As admin it runs the
// cards and follows each card's link to the story: the drift episode in the dev app's evidence, a pending
// prune preview of the removed ConfigMap, a red verification on prod's newest release, the stale banner of an
// offline prod; then "Reset to the seed" puts Git, the endpoints and the clusters back.
import { expect, test, type Page } from '@playwright/test';
import { kubectl } from '../sandbox/sandbox.ts';
import { getJson, readRepoFile, repoHead } from '../sandbox/scenario.ts';
import { seedFiles } from '../sandbox/seed.ts';
import { as } from '../test/support/auth.ts';
import { spawnBff } from '../test/support/bff-process.ts';
import { expectNoSideScroll } from './support/layout.ts';

let bff: Awaited<ReturnType<typeof spawnBff>> | undefined;

test.beforeAll(async () => {
  test.setTimeout(240_000);
  bff = await spawnBff('console-tryit', {
    env: { CONSOLE_SANDBOX: '1', CONSOLE_VERIFICATION_INTERVAL_S: '600' },
  });
});

test.afterAll(async () => {
  await bff?.stop();
});

test.describe.configure({ mode: 'serial' });

const card = (page: Page, id: string) => page.locator(`[data-testid="tryit-card"][data-scenario="${id}"]`);

type Event = { seq: number; type: string; actor: string; data: Record<string, unknown> };

/** The console's records of one Try-it job (its id is the card's data-job), oldest first. */
async function recordsOf(job: string): Promise<Event[]> {
  if (!bff) throw new Error('no sandbox-mode BFF');
  const r = await as(bff.admin, bff.base, `/api/evidence?q=${job}&limit=20`);
  expect(r.status).toBe(200);
  return (r.body.events as Event[]).sort((a, b) => a.seq - b.seq);
}

/** Presses the card's button and waits for its job to end; returns the card. */
async function runCard(page: Page, id: string, timeout = 300_000) {
  await page.goto(`${bff?.base}/try`);
  const c = card(page, id);
  await expect(c.getByTestId('tryit-run')).toBeEnabled({ timeout: 120_000 });
  // the card's previous run (the second round): the new run must replace it, never be mistaken for it
  const before = (await c.getByTestId('tryit-job').count())
    ? await c.getByTestId('tryit-job').getAttribute('data-job')
    : null;
  await c.getByTestId('tryit-run').click();
  if (before) await expect(c.getByTestId('tryit-job')).not.toHaveAttribute('data-job', before);
  await expect(c.getByTestId('tryit-job')).toHaveAttribute('data-state', /running|done/);
  await expect(c.getByTestId('tryit-job')).toHaveAttribute('data-state', 'done', { timeout });
  await expect(c.getByTestId('tryit-look')).toBeVisible();
  return c;
}

test.use({ storageState: { cookies: [], origins: [] } });

/**
 * One round: every card in a row, from a sandbox at rest (the seed), ending with "Reset to the seed" and the
 * sandbox at rest again. The spec runs it twice: a card that only works once, or a reset that leaves something
 * behind, fails the second round.
 */
/** Where a round's time goes, printed at its end (the spec is the suite's longest: each part is a place to look). */
function laps(name: string) {
  const t0 = Date.now();
  let last = t0;
  const parts: string[] = [];
  return {
    mark(what: string) {
      const now = Date.now();
      parts.push(`${what} ${((now - last) / 1000).toFixed(1)} s`);
      last = now;
    },
    print() {
      console.log(`${name}: ${parts.join(', ')}; total ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    },
  };
}

async function round(page: Page, n: 1 | 2) {
  const lap = laps(`tryit round ${n}`);
  // 0. From the seed (at rest), push a new image: the dev commit's release has every state done, and its promotion
  //    reached staging (the row of the dev commit, from the card's second step: the promotion commit is dev's
  //    newest row too, one that changes nothing there). The second round pushes the same tag again (the same digest:
  //    sandbox/go/imagepush is deterministic), which dev and staging ran before the first reset
  let c = await runCard(page, 'push-image', 600_000);
  const devSha = (await c.getByTestId('tryit-step').nth(1).textContent())?.match(/— ([0-9a-f]{7})/)?.[1] ?? '';
  expect(devSha).toMatch(/^[0-9a-f]{7}$/);
  await c.getByRole('link', { name: /dev app/ }).click();
  const pushed = page.locator(`[data-testid="release"][data-sha^="${devSha}"]`);
  for (const s of ['change', 'artifact', 'render', 'validation', 'reconcile', 'health', 'verification'])
    await expect(pushed.locator(`[data-testid="release-state"][data-state="${s}"]`), s).toHaveAttribute(
      'data-status',
      'ok',
      { timeout: 240_000 },
    );
  await expect(pushed.locator('[data-testid="release-state"][data-state="promotion"]')).toContainText(
    /reached staging/,
    { timeout: 240_000 },
  );

  lap.mark('push-image');
  // 1. Scale a Deployment by hand → the dev app's evidence holds the drift episode, opened by kubectl and reverted
  c = await runCard(page, 'scale-by-hand');
  await expect(c.getByTestId('tryit-step')).toHaveCount(3);
  const scaleJob = (await c.getByTestId('tryit-job').getAttribute('data-job')) ?? '';
  await c.getByRole('link', { name: /dev app/ }).click();
  await expect(page).toHaveURL(/\/apps\/nonprod\/flux-system\/kustomization\/digital-human-dev\?tq=tts-gateway$/);
  const evidence = page.getByTestId('app-evidence');
  await expect(evidence.locator('[data-testid="evidence-event"][data-type="drift.detected"]').first()).toContainText(
    'kubectl',
  );
  await expect(evidence.locator('[data-testid="evidence-event"][data-type="drift.reverted"]').first()).toBeVisible();
  // the run itself is evidence: the intent (actor sandbox-scenario, the person in the data), then its outcome
  const [intent, outcome] = await recordsOf(scaleJob);
  expect(intent).toMatchObject({
    type: 'sandbox.scenario',
    actor: 'sandbox-scenario',
    data: { by: 'admin', scenario: 'scale-by-hand', job: scaleJob },
  });
  expect(outcome).toMatchObject({
    type: 'action.completed',
    actor: 'sandbox-scenario',
    data: { action: 'sandbox.scenario', intentSeq: intent?.seq, by: 'admin' },
  });

  lap.mark('scale-by-hand');
  // 2. Remove a ConfigMap from Git → on the prod app "Preview prune" lists it, pending a reviewer; the card says
  //    what it leaves (dev and staging held by the prune policy), and every screen says "held", not "failed"
  c = await runCard(page, 'remove-configmap');
  await expect(c.getByTestId('tryit-leaves')).toContainText('held by the prune policy');
  await c.getByRole('link', { name: /prod app/ }).click();
  await expect(page).toHaveURL(/\/apps\/prod\/flux-system\/kustomization\/digital-human-prod$/);
  await page.getByTestId('preview-prune').click();
  await expect(page).toHaveURL(/\/prune-previews\/[0-9a-f-]{36}$/);
  const previewUrl = page.url();
  await expect(page.locator('[data-testid="prune-candidate"][data-name="render-worker-config"]')).toBeVisible();
  await expect(page.getByTestId('prune-status')).toHaveText('pending');
  await page.goto('/prune-previews');
  await expect(page.getByTestId('prune-queue')).toContainText('prod/flux-system/kustomization/digital-human-prod');
  // dev: Flux's prune of the ConfigMap is denied by the policy → "held: prune needs approval" on its card, the
  // line on its page (with "Preview prune" offered, none pending there), never "Progressing — waiting for …"
  const DEV = 'nonprod/flux-system/kustomization/digital-human-dev';
  await page.goto('/');
  const devCard = page.locator(`[data-testid="app-card"][data-app-id="${DEV}"]`);
  await expect(devCard.getByTestId('prune-hold-badge')).toHaveText('held: prune needs approval', {
    timeout: 180_000,
  });
  await expect(devCard.getByTestId('health-reason')).toContainText(
    'held by the prune policy: deleting ConfigMap/render-worker-config needs an approved prune preview',
  );
  await page.goto(`/apps/${DEV}`);
  await expect(page.getByTestId('prune-hold')).toContainText(
    'held by the prune policy: deleting ConfigMap/render-worker-config needs an approved prune preview',
  );
  await expect(page.getByTestId('prune-hold-none')).toContainText('Preview prune');
  // the card that needs dev to move refuses in words, with how to finish or undo the hold (nothing runs)
  await page.goto('/try');
  await card(page, 'push-image').getByTestId('tryit-run').click();
  await expect(card(page, 'push-image').getByTestId('tryit-refused')).toContainText(
    /(dev|staging) is held by the prune policy: deleting ConfigMap\/render-worker-config .* “Reset to the seed”/,
  );

  lap.mark('remove-configmap');
  // 3. Break prod's endpoint → prod's newest release (the card's commit) has a red verification: HTTP 503
  c = await runCard(page, 'break-prod-endpoint');
  const sha = (await c.getByTestId('tryit-step').nth(1).textContent())?.match(/— ([0-9a-f]{7})/)?.[1] ?? '';
  expect(sha).toMatch(/^[0-9a-f]{7}$/);
  await c.getByRole('link', { name: /prod app/ }).click();
  const release = page.locator(`[data-testid="release"][data-sha^="${sha}"]`);
  const verification = release.locator('[data-testid="release-state"][data-state="verification"]');
  await expect(verification).toHaveAttribute('data-status', 'failed', { timeout: 300_000 });
  await expect(verification).toContainText('503');

  lap.mark('break-prod');
  // 4. Incident: on-call freezes prod (here the admin, in the UI); the card edits render-worker by hand; the
  //    freeze's page lists that live change for write-back, and ending the freeze opens the pull request
  await page.goto('/apps/prod/flux-system/kustomization/digital-human-prod');
  await page.getByTestId('freeze').click();
  const dialog = page.getByRole('dialog', { name: 'Freeze digital-human-prod' });
  await dialog.getByLabel(/^Reason/).fill(`Try it: render latency incident ${Date.now().toString(36)}`);
  await dialog.getByRole('button', { name: 'Freeze app' }).click();
  await expect(dialog).toBeHidden();
  c = await runCard(page, 'freeze-incident');
  await c.getByRole('link', { name: /the freeze/ }).click();
  await expect(page).toHaveURL(/\/freezes\/frz-[0-9a-f]+$/);
  const change = page.getByTestId('freeze-change').filter({ hasText: 'spec.replicas' });
  await expect(change.getByTestId('freeze-change-values')).toContainText('→ 12', { timeout: 60_000 });
  await expect(change.getByTestId('freeze-change-manager')).toHaveText('kubectl-edit');
  await expect(change.getByLabel('Write back to Git')).toBeChecked();
  await page.getByTestId('unfreeze').click();
  await page.getByRole('alertdialog', { name: 'Unfreeze?' }).getByTestId('unfreeze-confirm').click();
  const written = page.getByTestId('write-back').filter({ hasText: 'digital-human-prod' });
  // the end's outcome, either way: the write-back, or the console's refusal (its message is the failure's)
  const refused = page.getByRole('alert').filter({ hasText: /^Not unfrozen:/ });
  await expect(written.getByTestId('write-back-branch').or(refused).first()).toBeVisible({ timeout: 120_000 });
  await expect(refused, 'the unfreeze was refused').toHaveCount(0);
  await expect(written.getByTestId('write-back-branch')).toHaveText(/^freeze\/frz-[0-9a-f]+$/);
  await expect(page.getByTestId('freeze-status')).toHaveAttribute('data-status', 'ended', { timeout: 60_000 });

  lap.mark('freeze-incident');
  // 5. Take a cluster offline → the overview's stale banner names prod
  c = await runCard(page, 'cluster-offline', 60_000);
  await c.getByRole('link', { name: 'All apps' }).click();
  await expect(page.getByTestId('stale-banner')).toContainText('Cluster prod is unreachable', { timeout: 90_000 });

  // the freeze card without a freeze says what to do first
  await page.goto('/try');
  await card(page, 'freeze-incident').getByTestId('tryit-run').click();
  await expect(card(page, 'freeze-incident').getByTestId('tryit-refused')).toContainText(
    'freeze digital-human-prod first',
  );

  lap.mark('cluster-offline');
  // 6. Reset: its steps run one after another; then Git is the seed, prod is back, the endpoint answers
  const reset = page.getByTestId('tryit-reset');
  const resetBefore = (await reset.getByTestId('tryit-job').count())
    ? await reset.getByTestId('tryit-job').getAttribute('data-job')
    : null;
  await reset.getByTestId('tryit-reset-button').click();
  if (resetBefore) await expect(reset.getByTestId('tryit-job')).not.toHaveAttribute('data-job', resetBefore);
  await expect(reset.getByTestId('tryit-step')).toHaveCount(6);
  await expect(reset.getByTestId('tryit-job')).toHaveAttribute('data-state', 'done', { timeout: 420_000 });
  await expect(reset.locator('[data-testid="tryit-step"][data-state="done"]')).toHaveCount(6);
  // no preview of the old state keeps waiting: prod's preview of the removed ConfigMap is void
  await expect(reset.getByTestId('tryit-step').nth(5)).toContainText(/[1-9]\d* voided/);
  // Git is the seed again, prod's apiserver answers, Flux applied the reset commit everywhere, and the reset is
  // evidence (intent first, then its outcome)
  const head = repoHead();
  await expect(reset.locator('[data-testid="tryit-step"]').nth(3)).toContainText(head.slice(0, 7));
  for (const [path, content] of Object.entries(seedFiles()))
    if (
      path.startsWith('overlays/') ||
      path.startsWith('base/kustomization') ||
      path === 'base/render-worker-config.yaml'
    )
      expect(readRepoFile(path), path).toBe(content);
  expect(kubectl('prod', ['get', '--raw', '/readyz']).trim()).toBe('ok');
  for (const [cluster, env] of [
    ['nonprod', 'dev'],
    ['nonprod', 'staging'],
    ['prod', 'prod'],
  ] as const) {
    const k = getJson(cluster, ['-n', 'flux-system', 'get', 'kustomization', `digital-human-${env}`]);
    expect(String((k.status as { lastAppliedRevision?: string }).lastAppliedRevision), env).toContain(head);
  }
  lap.mark('reset');
  const resetJob = (await reset.getByTestId('tryit-job').getAttribute('data-job')) ?? '';
  const [resetIntent, resetOutcome] = await recordsOf(resetJob);
  expect(resetIntent).toMatchObject({ type: 'sandbox.reset', actor: 'sandbox-scenario', data: { by: 'admin' } });
  expect(resetOutcome).toMatchObject({ type: 'action.completed', data: { action: 'sandbox.reset' } });
  await page.goto(previewUrl);
  await expect(page.getByTestId('prune-status')).toHaveText('void');
  // at rest: nothing stale, nothing held by the prune policy
  await page.goto('/');
  await expect(page.getByTestId('stale-banner')).toHaveCount(0, { timeout: 90_000 });
  await expect(page.getByTestId('prune-hold-badge')).toHaveCount(0, { timeout: 120_000 });
  lap.mark('at rest');
  if (n === 1) {
    // /try with every card's steps, details (shas, digests) and the reset's: never sideways, at 1,440, 1,024 and 390 px
    await page.goto('/try');
    await expectNoSideScroll(
      page,
      'try it',
      async () => {
        await expect(page.getByTestId('tryit-reset').getByTestId('tryit-step')).toHaveCount(6);
      },
      { schemes: ['light'] },
    );
    await page.setViewportSize({ width: 1440, height: 900 });
  }
  await page.screenshot({ path: `test-results/tryit-after-reset-${n}.png`, fullPage: true });
  lap.mark(n === 1 ? 'layout' : 'screenshot');
  lap.print();
}

test('run the cards, follow each link to its story, then reset the sandbox to the seed', async ({ browser }) => {
  test.setTimeout(1_500_000);
  if (!bff) throw new Error('no sandbox-mode BFF');
  const context = await browser.newContext({ storageState: bff.storageState, baseURL: bff.base });
  const page = await context.newPage();

  // the page: a card per scenario, each with its story and button
  await page.goto('/try');
  await expect(page.getByRole('heading', { name: 'Try it', level: 1 })).toBeVisible();
  await expect(page.getByTestId('tryit-card')).toHaveCount(7);
  await expect(card(page, 'freeze-incident').getByTestId('tryit-needs')).toContainText('First freeze prod');

  await round(page, 1);
  await round(page, 2);
  await context.close();
});
