// The layout never scrolls sideways, whatever the data: a freeze with the longest unbroken reason (500 characters)
// and extension reason and a 2,000-character incident URL; a prune preview of a ConfigMap with a 253-character name
// written by a 128-character field manager, rejected with a 2,000-character comment; and the evidence of all of it.
// Then every page at 1,440, 1,024 and 390 px (e2e/support/layout.ts), light and dark, has document scrollWidth <=
// clientWidth: a table wider than a phone scrolls in its own box, never the page. And the header's count:
// a reviewer sees "Prune previews (N + 1)" once a developer requests a preview in their environment.
// Everything is put back afterwards: the freeze ended (Git wins), the preview rejected, the ConfigMap deleted.
import { expect, test, type Browser, type Page } from '@playwright/test';
import { kubectl } from '../sandbox/state.ts';
import { FREEZE_MAX_REASON } from '../src/domain/freeze.ts';
import { as, signIn, type Signed } from '../test/support/auth.ts';
import { storageStateFor } from '../test/support/bff-process.ts';
import { expectNoSideScroll } from './support/layout.ts';

test.use({ baseURL: process.env.E2E_BASE_URL, storageState: process.env.E2E_STORAGE });

const CLUSTER = 'nonprod';
const ENV = 'dev';
const KS = 'digital-human-dev';
const APP = `${CLUSTER}/flux-system/kustomization/${KS}`;
const RUN = Date.now().toString(36);
/** characters without a break opportunity: 2,000, or as many as the field takes */
const unbroken = (tag: string, length = 2000) => `e2e-layout-${tag}-${RUN}-`.padEnd(length, 'x');
// a freeze's reason is capped (domain/freeze.ts): the longest one
const REASON = unbroken('freeze-reason', FREEZE_MAX_REASON);
const EXTEND_REASON = unbroken('extend-reason', FREEZE_MAX_REASON);
const COMMENT = unbroken('reject-comment');
const NOTE = unbroken('configmap-note');
const INCIDENT = `https://status.example.com/incidents/${RUN}/`.padEnd(2000, 'a');
/** the longest a ConfigMap name and a field manager may be */
const CM = `e2e-layout-${RUN}-`.padEnd(253, 'n');
const MANAGER = `e2e-layout-manager-${RUN}-`.padEnd(128, 'm');

let base = '';
let freezeId = '';
let previewId = '';
let reviewerBaseline = 0;

const awaitingCount = async (s: Signed) => {
  const r = await as(s, base, '/api/prune-previews?awaiting=me');
  expect(r.status, r.text).toBe(200);
  return (r.body as { previews: unknown[] }).previews.length;
};

/** The app's tree lists the ConfigMap (the console indexed it): a preview will plan it. */
async function waitForCandidate(admin: Signed): Promise<void> {
  await expect
    .poll(async () => (await as(admin, base, `/api/apps/${APP}/tree`)).text.includes(CM), {
      timeout: 60_000,
      intervals: [500],
    })
    .toBe(true);
}

async function endFreeze(): Promise<void> {
  if (!freezeId) return;
  const oncall = await signIn(base, 'oncall');
  const f = await as(oncall, base, `/api/freezes/${freezeId}`);
  if ((f.body as { freeze?: { active?: boolean } }).freeze?.active) {
    const e = await as(oncall, base, `/api/freezes/${freezeId}/end`, { method: 'POST', body: { decisions: [] } });
    if (e.status !== 200) console.warn(`could not end freeze ${freezeId}: ${e.status} ${e.text}`);
  }
}

test.beforeAll(async () => {
  test.setTimeout(300_000);
  base = process.env.E2E_BASE_URL as string;
  // a ConfigMap Flux does not have in its inventory but that carries its labels: a prune candidate of the dev app
  kubectl(
    CLUSTER,
    ['-n', ENV, 'create', '-f', '-', `--field-manager=${MANAGER}`],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: CM,
        labels: { 'kustomize.toolkit.fluxcd.io/name': KS, 'kustomize.toolkit.fluxcd.io/namespace': 'flux-system' },
      },
      data: { note: NOTE },
    }),
  );
  const reviewer = await signIn(base, 'dev-reviewer');
  reviewerBaseline = await awaitingCount(reviewer);
  await waitForCandidate(await signIn(base, 'admin'));
});

test.afterAll(async () => {
  test.setTimeout(120_000);
  await endFreeze();
  if (previewId) {
    const reviewer = await signIn(base, 'dev-reviewer');
    const p = await as(reviewer, base, `/api/prune-previews/${previewId}`);
    if ((p.body as { preview?: { status?: string } }).preview?.status === 'pending')
      await as(reviewer, base, `/api/prune-previews/${previewId}/reject`, {
        method: 'POST',
        body: { comment: 'e2e layout: clean-up' },
      });
  }
  kubectl(CLUSTER, ['-n', ENV, 'delete', 'configmap', CM, '--ignore-not-found', '--wait=false']);
});

async function pageAs(browser: Browser, user: string): Promise<Page> {
  const state = storageStateFor(await signIn(base, user));
  const cookies = state.cookies.map((c) => ({ ...c, sameSite: 'Strict' as const }));
  const ctx = await browser.newContext({ baseURL: base, storageState: { ...state, cookies } });
  return ctx.newPage();
}

test('a reviewer sees the preview a developer requested counted in the header, live', async ({ browser }) => {
  const reviewer = await pageAs(browser, 'dev-reviewer');
  await reviewer.goto('/');
  await expect(reviewer.getByTestId('stream-status')).toHaveText('updates: live');
  const nav = reviewer.getByRole('navigation', { name: 'Main' });
  await expect(nav.getByRole('link', { name: `Prune previews (${reviewerBaseline})`, exact: true })).toBeVisible();

  const developer = await pageAs(browser, 'developer');
  await developer.goto(`/apps/${APP}`);
  await developer.getByTestId('preview-prune').click();
  await expect(developer).toHaveURL(/\/prune-previews\/[0-9a-f-]{36}$/);
  previewId = /\/prune-previews\/([0-9a-f-]{36})$/.exec(developer.url())?.[1] ?? '';
  await expect(developer.getByTestId('prune-status')).toHaveText('pending');
  // a developer approves nothing: no count, and no Evidence or Environments (evidence.read) in their header
  const devNav = developer.getByRole('navigation', { name: 'Main' });
  await expect(devNav.getByRole('link', { name: 'Prune previews', exact: true })).toBeVisible();
  await expect(devNav.getByRole('link', { name: /^Freezes \(\d+ active\)$/ })).toBeVisible();
  await expect(devNav.getByRole('link', { name: 'Evidence' })).toHaveCount(0);

  // live: the stream's prune change refreshes the reviewer's count without a reload
  await expect(nav.getByRole('link', { name: `Prune previews (${reviewerBaseline + 1})`, exact: true })).toBeVisible({
    timeout: 14_000,
  });
  // the place a reviewer works: the environments they may open
  await nav.getByText('Environments', { exact: true }).click();
  await expect(nav.getByRole('link', { name: ENV, exact: true })).toHaveAttribute('href', `/envs/${ENV}`);
  await reviewer.context().close();
  await developer.context().close();
});

test('no page scrolls sideways at 1,440, 1,024 or 390 px, light or dark, with 2,000-character unbroken values', async ({
  page,
  browser,
}) => {
  test.setTimeout(600_000);
  if (!previewId) {
    // this test alone (-g): the developer requests the preview over the API
    const p = await as(await signIn(base, 'developer'), base, `/api/apps/${APP}/prune-previews`, { method: 'POST' });
    expect(p.status, p.text).toBe(200);
    previewId = (p.body as { preview: { id: string } }).preview.id;
  }
  // the data: a freeze with long reasons and incident link; the preview rejected with a long comment
  const oncall = await signIn(base, 'oncall');
  const f = await as(oncall, base, '/api/freezes', {
    method: 'POST',
    body: { cluster: CLUSTER, env: ENV, app: APP, reason: REASON, incident: INCIDENT, minutes: 10 },
  });
  expect(f.status, f.text).toBe(200);
  freezeId = (f.body as { freeze: { id: string } }).freeze.id;
  const x = await as(oncall, base, `/api/freezes/${freezeId}/extend`, {
    method: 'POST',
    body: { minutes: 20, reason: EXTEND_REASON },
  });
  expect(x.status, x.text).toBe(200);
  const reviewer = await signIn(base, 'dev-reviewer');
  const r = await as(reviewer, base, `/api/prune-previews/${previewId}/reject`, {
    method: 'POST',
    body: { comment: COMMENT },
  });
  expect(r.status, r.text).toBe(200);

  const main = page.locator('main');
  const visible = (text: string | RegExp) => async () => {
    await expect(main.getByText(text).first()).toBeVisible();
  };
  await page.goto('/');
  await expectNoSideScroll(page, 'overview', visible(KS));

  await page.goto(`/apps/${APP}`);
  await expect(page.getByTestId('freeze-banner')).toBeVisible();
  await expectNoSideScroll(page, 'app page', async () => {
    await expect(page.getByTestId('freeze-banner-text')).toContainText(REASON.slice(0, 40));
    await expect(page.getByTestId('app-evidence').getByTestId('evidence-event').first()).toBeVisible();
  });

  await page.goto('/prune-previews');
  await expectNoSideScroll(page, 'prune previews', visible(/Prune previews/));
  await page.goto(`/prune-previews/${previewId}`);
  await expectNoSideScroll(page, 'prune preview', async () => {
    await expect(page.getByTestId('prune-decisions')).toContainText(COMMENT.slice(0, 40));
  });

  await page.goto('/freezes');
  await expectNoSideScroll(page, 'freezes', visible(REASON.slice(0, 40)));
  await page.goto(`/freezes/${freezeId}`);
  await expectNoSideScroll(page, 'freeze', async () => {
    await expect(page.getByTestId('freeze-reason-text')).toContainText(REASON.slice(0, 40));
    await expect(page.getByTestId('freeze-extensions')).toContainText(EXTEND_REASON.slice(0, 40));
  });

  await page.goto(`/envs/${ENV}`);
  await expectNoSideScroll(page, 'environment', visible(new RegExp(ENV)));

  await page.goto('/evidence');
  await expectNoSideScroll(page, 'evidence', async () => {
    await expect(page.getByTestId('evidence-row').first()).toBeVisible();
  });
  // the detail view of the freeze's record: its data in full
  await page.goto(`/evidence?q=${freezeId}`);
  await page.getByTestId('evidence-row').last().getByRole('button').click();
  await expectNoSideScroll(page, 'evidence detail', async () => {
    await expect(page.getByTestId('evidence-detail')).toContainText(REASON.slice(0, 40));
  });

  // the freeze ended (Git wins): the ended freeze's page and the app's evidence of the end
  await endFreeze();
  await page.goto(`/freezes/${freezeId}`);
  await expectNoSideScroll(page, 'ended freeze', async () => {
    await expect(page.getByTestId('freeze-status')).toHaveAttribute('data-status', 'ended');
  });

  const signedOut = await browser.newContext({ baseURL: base, storageState: { cookies: [], origins: [] } });
  const signin = await signedOut.newPage();
  await signin.goto(`/signin?next=${encodeURIComponent(`/freezes/${freezeId}?${INCIDENT.slice(8, 1500)}`)}`);
  await expectNoSideScroll(signin, 'sign-in', async () => {
    await expect(signin.getByLabel('User name')).toBeVisible();
  });
  await signedOut.close();
});
