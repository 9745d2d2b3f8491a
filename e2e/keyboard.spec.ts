// Issue #13: the console with the keyboard only — open an app, move through the tree with the arrows,
// open the details drawer with Enter, close it with Escape, focus back on the row; Back returns focus.
import { expect, test, type Page } from '@playwright/test';

test.use({ baseURL: process.env.E2E_BASE_URL, storageState: process.env.E2E_STORAGE });

const DEV_ID = 'nonprod/flux-system/kustomization/digital-human-dev';

const focused = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement;
    return {
      role: el?.getAttribute('role') ?? el?.tagName.toLowerCase() ?? '',
      appId: el?.getAttribute('data-app-id') ?? '',
      nodeId: el?.getAttribute('data-node-id') ?? '',
      text: (el?.textContent ?? '').trim().slice(0, 60),
      inDrawer: !!el?.closest('[data-testid="node-drawer"]'),
    };
  });

/**
 * Presses Tab until the focused element passes the test (and fails after `max` presses); done at once when focus is
 * already there (Back/Forward restore it). `max` is high enough for a full cycle of a page whose release and evidence
 * lists have grown during a full run (each row has links).
 */
async function tabUntil(page: Page, ok: (f: Awaited<ReturnType<typeof focused>>) => boolean, max = 250) {
  if (ok(await focused(page))) return;
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    if (ok(await focused(page))) return;
  }
  throw new Error(`not reached with ${max} Tabs; focus is on ${JSON.stringify(await focused(page))}`);
}

test('keyboard only: skip link, open an app, arrows through the tree, drawer with Enter and Escape, Back', async ({
  page,
}) => {
  await page.goto('/');
  await expect(page.getByTestId('app-card').first()).toBeVisible();
  // the first Tab stop is the skip link; it takes focus to the main content
  await page.keyboard.press('Tab');
  expect((await focused(page)).text).toBe('Skip to main content');
  await page.keyboard.press('Enter');
  expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');

  await tabUntil(page, (f) => f.appId === DEV_ID);
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/\/apps\/nonprod\/flux-system\/kustomization\/digital-human-dev$/);
  await expect(page).toHaveTitle('digital-human-dev · dev · nonprod — GitOps console');
  await expect(page.getByTestId('tree-row').first()).toBeVisible();

  // the tree is one Tab stop
  await expect(page.locator('[data-testid="tree-row"][tabindex="0"]')).toHaveCount(1);
  await tabUntil(page, (f) => f.role === 'treeitem');
  const first = (await focused(page)).nodeId;
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  const row = await focused(page);
  expect(row.role).toBe('treeitem');
  expect(row.nodeId).not.toBe(first);
  await expect(page.locator(`[data-node-id="${row.nodeId}"]`)).toHaveAttribute('aria-selected', 'true');
  await expect(page.locator('[data-testid="tree-row"][tabindex="0"]')).toHaveCount(1);
  // Tab leaves the tree at once (one stop), Shift+Tab comes back to the same row
  await page.keyboard.press('Tab');
  expect((await focused(page)).role).not.toBe('treeitem');
  await page.keyboard.press('Shift+Tab');
  expect((await focused(page)).nodeId).toBe(row.nodeId);
  await expect.poll(() => new URL(page.url()).searchParams.get('sel')).toBe(row.nodeId);

  // Enter opens the drawer: a labelled modal dialog that takes focus and keeps Tab inside
  await page.keyboard.press('Enter');
  const drawer = page.getByRole('dialog');
  await expect(drawer).toBeVisible();
  await expect(drawer).toHaveAttribute('aria-modal', 'true');
  await expect(drawer).toHaveAccessibleName(/\S/);
  expect((await focused(page)).inDrawer).toBe(true);
  await expect(page).toHaveURL(/node=/);
  for (let i = 0; i < 8; i++) {
    await page.keyboard.press('Tab');
    expect((await focused(page)).inDrawer).toBe(true);
  }
  await page.keyboard.press('Shift+Tab');
  expect((await focused(page)).inDrawer).toBe(true);

  // Escape closes it and focus is back on the row that opened it
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('node-drawer')).toHaveCount(0);
  await expect.poll(async () => (await focused(page)).nodeId).toBe(row.nodeId);
  await expect(page).not.toHaveURL(/node=/);

  // Back: the overview again, focus on the card that was opened
  await page.goBack();
  await expect(page).toHaveURL(/\/$/);
  await expect.poll(async () => (await focused(page)).appId).toBe(DEV_ID);

  // a link with the drawer open shows the same thing
  await page.goForward();
  await expect(page.getByTestId('tree-row').first()).toBeVisible();
  // the selection came back from the URL: Tab lands on the same row
  await tabUntil(page, (f) => f.role === 'treeitem');
  expect((await focused(page)).nodeId).toBe(row.nodeId);
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/node=/);
  const link = page.url();
  await page.keyboard.press('Escape');
  await page.goto(link);
  await expect(page.getByRole('dialog')).toBeVisible();
  await page.keyboard.press('Escape');
  await expect.poll(async () => (await focused(page)).nodeId).toBe(row.nodeId);
});

test('keyboard only: graph nodes are Tab stops that say their health, Enter opens the drawer', async ({ page }) => {
  await page.goto(`/apps/${DEV_ID}?view=graph`);
  await expect(page.getByTestId('graph-box').first()).toBeVisible();
  await tabUntil(
    page,
    (f) => f.role === 'button' && f.text.length > 0 && !!f.text.match(/Healthy|Degraded|Progressing/),
  );
  const name = await page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? '');
  expect(name).toMatch(/Healthy|Degraded|Progressing|Missing|Suspended|Unknown/);
  await page.keyboard.press('Enter');
  await expect(page.getByRole('dialog')).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(page.getByRole('dialog')).toHaveCount(0);
  expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe(name);
});
