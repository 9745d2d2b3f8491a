// Issue 43's break-glass (decision 0026) in Chromium against the real sandbox, on the spec's own estate: a window
// in force holds the app (Flux suspended); a developer asks on the freezes page to deploy through it; without a
// second person nothing happens (the developer cannot approve, in the UI or the API: 403, still frozen); on-call,
// in their own browser, approves → the window's freeze of the app ends and Flux runs exactly as before; the evidence
// browser shows the request, the refusal's absence of effect and the approval, under the break-glass's id.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { waitFor } from '../sandbox/procs.ts';
import { getJson } from '../sandbox/scenario.ts';
import { as, signIn } from '../test/support/auth.ts';
import { storageStateFor } from '../test/support/bff-process.ts';
import { E2E_BASE, specEstate } from './support/estate.ts';

const estate = specEstate('e2e-breakglass', 'dev');
const NAME = `e2e-bg-${Date.now().toString(36)}`;
const iso = (ms: number) => new Date(ms).toISOString();

test('a developer’s break-glass is refused without a second person and done with one', async ({ browser }) => {
  test.setTimeout(180_000);
  const e = estate();
  const base = E2E_BASE();
  const ks = () => getJson(e.cluster, ['-n', 'flux-system', 'get', 'kustomization', e.kustomization()]);
  const suspended = () => (ks().spec as { suspend?: boolean }).suspend === true;
  const before = ks().spec;
  const [oncall, developer] = await Promise.all([signIn(base, 'oncall'), signIn(base, 'developer')]);
  // on-call's window, in force in 3 s for 3 minutes (planning it in the UI is freeze-windows.spec.ts's)
  const planned = await as(oncall, base, '/api/freeze-windows', {
    method: 'POST',
    body: {
      name: NAME,
      reason: 'e2e release stop',
      scope: { apps: [e.appId()] },
      start: iso(Date.now() + 3_000),
      end: iso(Date.now() + 183_000),
    },
  });
  expect(planned.status, planned.text).toBe(200);
  await waitFor('the app frozen by the window', async () => suspended(), { timeoutMs: 45_000, intervalMs: 500 });

  // the developer asks, in their browser
  const devState = join(process.env.E2E_DATA_DIR as string, `storage-developer-${NAME}.json`);
  writeFileSync(devState, JSON.stringify(storageStateFor(developer)));
  const dev = await (await browser.newContext({ baseURL: base, storageState: devState })).newPage();
  await dev.goto('/freezes');
  const form = dev.getByRole('form', { name: 'Ask for a break-glass' });
  await form.getByTestId('breakglass-target').selectOption(`${NAME} ${e.appId()}`);
  await form.getByTestId('breakglass-reason').fill('CVE hotfix');
  await form.getByTestId('breakglass-minutes').fill('5');
  await form.getByTestId('breakglass-ask').click();
  await expect(form.getByRole('status')).toContainText('a second person');
  const item = (page: typeof dev) => page.locator(`[data-testid="breakglass-item"][data-app="${e.appId()}"]`);
  await expect(item(dev)).toHaveAttribute('data-state', 'requested');
  const id = (await item(dev).getAttribute('data-id')) ?? '';
  // without a second person: the developer cannot approve (disabled, and the API refuses), still frozen
  await expect(item(dev).getByTestId('breakglass-approve')).toBeDisabled();
  const self = await as(developer, base, `/api/break-glass/${id}/approve`, { method: 'POST', body: {} });
  expect(self.status, self.text).toBe(403);
  expect(suspended()).toBe(true);

  // on-call, a second person, approves in their own browser: the window's freeze of the app ends
  const oc = await (
    await browser.newContext({ baseURL: base, storageState: process.env.E2E_STORAGE_ONCALL })
  ).newPage();
  await oc.goto('/freezes');
  await item(oc).getByTestId('breakglass-approve').click();
  await expect(item(oc)).toHaveAttribute('data-state', 'approved');
  await expect(item(oc).getByTestId('breakglass-state')).toContainText('by oncall, until');
  await waitFor('Flux running the app again', async () => !suspended(), { timeoutMs: 30_000, intervalMs: 500 });
  expect(ks().spec).toEqual(before);
  // the developer's page follows (polled)
  await expect(item(dev)).toHaveAttribute('data-state', 'approved', { timeout: 15_000 });

  // the evidence browser names the break-glass at each step
  await oc.goto(`/evidence?q=${id}`);
  const rows = oc.getByTestId('evidence-row');
  for (const type of ['breakglass.requested', 'breakglass.approved'])
    await expect(rows.filter({ has: oc.getByRole('cell', { name: type, exact: true }) })).toHaveCount(1);
});
