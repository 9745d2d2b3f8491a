// Issue 43 (planned freeze windows) in Chromium against the real sandbox, as on-call, on the spec's own estate:
// plan a window on the freezes page covering the estate's app only, starting in 25 s for 90 s → the page and the
// app's card say when it comes, then that it is in force; at its start the Kustomization is suspended (by the
// window: the card's badge names it); a commit pushed during the window is "held by window …" in the app's release
// chain, not pending, and the environment's calendar shows the occurrence and the freeze it made; at its end the
// freeze expires and the automation is back exactly as before; the evidence names the window at each step.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { waitFor } from '../sandbox/procs.ts';
import { getJson, requestReconcile, writeRepoFile } from '../sandbox/scenario.ts';
import { as, signIn } from '../test/support/auth.ts';
import type { EvidenceEvent } from '../src/domain/evidence.ts';
import { E2E_BASE, specEstate } from './support/estate.ts';

test.use({ baseURL: process.env.E2E_BASE_URL, storageState: process.env.E2E_STORAGE_ONCALL });

const estate = specEstate('e2e-windows', 'dev');
const NAME = `e2e-stop-${Date.now().toString(36)}`;

/** a time as the datetime-local input takes it: the browser's (and this process's) local time, to the second */
const local = (ms: number) => {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
};

test('on-call plans a window: the app is frozen at its start and restored exactly at its end', async ({ page }) => {
  test.setTimeout(240_000);
  const e = estate();
  const ks = () => getJson(e.cluster, ['-n', 'flux-system', 'get', 'kustomization', e.kustomization()]);
  const before = ks().spec;
  await page.goto('/freezes');
  const form = page.getByRole('form', { name: 'Plan a freeze window' });
  await form.getByTestId('window-env').selectOption(`${e.cluster}/dev`);
  await form.getByTestId('window-app').selectOption(e.appId());
  await form.getByTestId('window-name').fill(NAME);
  await form.getByTestId('window-reason').fill('e2e release stop');
  // whole seconds: the input keeps no milliseconds
  const start = Math.ceil((Date.now() + 25_000) / 1000) * 1000;
  const end = start + 90_000;
  await form.getByTestId('window-start').fill(local(start));
  await form.getByTestId('window-end').fill(local(end));
  await form.getByTestId('window-plan').click();
  await expect(form.getByRole('status')).toHaveText(`Planned: ${NAME}`);
  const item = page.locator(`[data-testid="window-item"][data-name="${NAME}"]`);
  await expect(item.getByTestId('window-state')).toHaveAttribute('data-state', 'next');
  // the app's card on the overview says when the window comes
  await page.goto(`/?q=${encodeURIComponent(e.kustomization())}`);
  const card = page.locator(`[data-testid="app-card"][data-app-id="${e.appId()}"]`);
  await expect(card.getByTestId('card-window')).toHaveAttribute('data-state', 'next');
  await expect(card.getByTestId('card-window')).toContainText(`(${NAME})`);
  // at its start: frozen by the window (the Kustomization suspended, and the page says it is in force)
  await waitFor('the app frozen by the window', async () => (ks().spec as { suspend?: boolean }).suspend === true, {
    timeoutMs: 45_000,
    intervalMs: 500,
  });
  expect(Date.now()).toBeGreaterThanOrEqual(start);
  // a commit pushed during the window: the release chain says it is held by the window, not pending
  // (one that changes the render: a commit that renders as the running release is no release of the app)
  const sha = e.push('A change during the release stop (freeze-windows e2e)', (w) =>
    writeRepoFile(
      w,
      'overlays/dev/kustomization.yaml',
      readFileSync(join(w, 'overlays/dev/kustomization.yaml'), 'utf8').replace('LOG_LEVEL=debug', 'LOG_LEVEL=info'),
    ),
  );
  requestReconcile(e.cluster, 'gitrepository', e.source);
  await page.reload();
  await expect(card.getByTestId('frozen')).toContainText(`(window ${NAME})`);
  await expect(card.getByTestId('card-window')).toHaveCount(0);
  await page.goto(`/apps/${e.appId()}`);
  const reconcile = page.locator(
    `[data-testid="release"][data-sha="${sha}"] [data-testid="release-state"][data-state="reconcile"]`,
  );
  await expect(reconcile).toHaveAttribute('data-status', 'held', { timeout: Math.max(5_000, end - Date.now()) });
  await expect(reconcile).toContainText(`held by window ${NAME} until`);
  expect(Date.now()).toBeLessThan(end);
  // the environment's calendar: today has the window's occurrence and the freeze it made (a busy day: all shown)
  await page.goto('/envs/dev');
  const today = page.locator('[data-testid="cal-day"][aria-current="date"]');
  const more = today.getByTestId('cal-more');
  if (await more.isVisible()) await more.click();
  await expect(
    today.locator('[data-testid="cal-entry"][data-type="window"]', { hasText: `Window ${NAME}` }),
  ).toHaveCount(1);
  await today
    .locator('[data-testid="cal-entry"][data-type="freeze"]', { hasText: `Frozen (window ${NAME})` })
    .getByRole('link')
    .click();
  await expect(page).toHaveURL(/\/freezes\/[^/]+$/);
  await expect(page.getByTestId('freeze-reason-text')).toHaveText(`${NAME}: e2e release stop`);
  await page.goto('/freezes');
  await expect(item.getByTestId('window-state')).toHaveAttribute('data-state', 'active');
  await expect(page.getByTestId('freezes-active')).toContainText(`${NAME}: e2e release stop`);
  // at its end: the freeze expires, the automation exactly as before
  await waitFor('the app restored', async () => (ks().spec as { suspend?: boolean }).suspend !== true, {
    // the rest of the window, then up to a minute for the expiry's restore
    timeoutMs: Math.max(0, end - Date.now()) + 60_000,
    intervalMs: 500,
  });
  expect(Date.now()).toBeGreaterThanOrEqual(end);
  expect(ks().spec).toEqual(before);
  // the evidence names the window at each step
  const oncall = await signIn(E2E_BASE(), 'oncall');
  const events = async (type: string) =>
    ((await as(oncall, E2E_BASE(), `/api/evidence?type=${type}&limit=1000`)).body as { events: EvidenceEvent[] })
      .events;
  expect((await events('window.created')).filter((x) => x.data.window === NAME)).toHaveLength(1);
  expect((await events('window.started')).filter((x) => x.data.window === NAME)).toHaveLength(1);
  const started = (await events('freeze.started')).filter((x) => x.data.window === NAME);
  expect(started.map((x) => [x.actor, x.app])).toEqual([[`console (window ${NAME})`, e.appId()]]);
  const expired = (await events('freeze.expired')).filter((x) => x.data.freezeId === started[0]?.data.freezeId);
  expect(expired).toHaveLength(1);
});
