// Issue 28, notifications, in Chromium: a BFF of its own with a Slack-compatible notifications sink (a receiver
// this spec starts on 127.0.0.1). dev's reviewer opens Notifications from the user menu, sees the kinds that are
// theirs and where they are sent, and opts out of prune previews; the choice holds after a reload. A developer's
// next preview then reaches the other reviewer only. The page passes axe. The preview is of the spec's own estate
// (test/support/own-estate.ts: the seed's dev service in a governed namespace of its own, mapped to dev): the probe
// is a hand-made ConfigMap there carrying its Kustomization's tracking labels; it goes with the estate.
import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubectl } from '../sandbox/sandbox.ts';
import { as, signIn } from '../test/support/auth.ts';
import { spawnBff, storageStateFor } from '../test/support/bff-process.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../test/support/own-estate.ts';
import { consoleShows } from './support/estate.ts';

let estate: Estate | undefined;
const PROBE = `notify-e2e-${Date.now().toString(36)}`;
const SECRET = `e2e-notify-${Date.now()}-0123456789abcdef`;
const got: Array<Record<string, unknown>> = [];
let receiver: Server | undefined;
let bff: Awaited<ReturnType<typeof spawnBff>> | undefined;

test.beforeAll(async () => {
  test.setTimeout(420_000);
  estate = await ownEstate({ name: 'e2e-notify', env: 'dev', files: digitalHumanTemplate('dev'), governed: true });
  const { cluster, namespace } = estate;
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      got.push(JSON.parse(body) as Record<string, unknown>);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver?.listen(0, '127.0.0.1', () => r()));
  const dir = mkdtempSync(join(tmpdir(), 'e2e-notify-'));
  const secretFile = join(dir, 'hmac');
  writeFileSync(secretFile, SECRET);
  chmodSync(secretFile, 0o600);
  const sinksFile = join(dir, 'sinks.json');
  const port = (receiver.address() as { port: number }).port;
  writeFileSync(
    sinksFile,
    JSON.stringify({
      sinks: [{ name: 'chat', url: `http://127.0.0.1:${port}/hook`, secretFile, format: 'slack' }],
    }),
  );
  // the estate's cluster only: the other cluster's informers are no part of this spec
  bff = await spawnBff('console-e2e-notify', {
    env: { CONSOLE_EVENT_SINKS_FILE: sinksFile, CONSOLE_RELEASE_RECORDER: 'off', CONSOLE_CONTEXTS: cluster },
    publicUrl: true,
  });
  kubectl(cluster, ['-n', namespace, 'create', 'configmap', PROBE, '--from-literal=probe=notifications']);
  kubectl(cluster, [
    ...['-n', namespace, 'label', 'configmap', PROBE],
    `kustomize.toolkit.fluxcd.io/name=${estate.kustomization()}`,
    'kustomize.toolkit.fluxcd.io/namespace=flux-system',
  ]);
  await consoleShows(estate.appId(), { env: 'dev', sha: estate.seedCommit, base: bff.base, session: bff.admin });
});

test.afterAll(async () => {
  test.setTimeout(180_000);
  try {
    await bff?.stop();
    await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
  } finally {
    await estate?.teardown();
  }
});

test.use({ storageState: { cookies: [], origins: [] } });

test("a reviewer opts out of prune previews in their settings, and the next preview's message leaves them out", async ({
  browser,
}) => {
  test.setTimeout(240_000);
  if (!bff) throw new Error('no BFF');
  const state = join(mkdtempSync(join(tmpdir(), 'e2e-notify-rev-')), 'storage.json');
  writeFileSync(state, JSON.stringify(storageStateFor(await signIn(bff.base, 'dev-reviewer'))));
  const context = await browser.newContext({ storageState: state, baseURL: bff.base });
  const page = await context.newPage();
  await page.goto('/');
  await page.getByTestId('user-menu').getByRole('link', { name: 'Notifications' }).click();
  await expect(page.getByRole('heading', { name: 'Notifications', level: 1 })).toBeVisible();
  await expect(page.getByTestId('notification-sinks')).toHaveText('Sent through chat (Slack).');
  const prune = page.getByRole('checkbox', { name: 'A prune preview waits for my approval' });
  await expect(prune).toBeChecked();
  await expect(page.locator('[data-kind="prune.review-needed"]')).toContainText('that is you');
  await expect(page.locator('[data-kind="freeze.ending-soon"]')).toContainText('not your role now');
  const axe = await new AxeBuilder({ page }).analyze();
  expect(axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);

  await prune.uncheck();
  await expect(prune).not.toBeChecked();
  await expect(prune).toBeEnabled(); // saved
  await page.reload();
  await expect(page.getByRole('checkbox', { name: 'A prune preview waits for my approval' })).not.toBeChecked();

  // a developer's preview of the estate's dev app: the message names the other reviewer only
  const APP = (estate as Estate).appId();
  const developer = await signIn(bff.base, 'developer');
  let id = '';
  await expect
    .poll(
      async () => {
        const r = await as(developer, bff?.base ?? '', `/api/apps/${APP}/prune-previews`, { method: 'POST' });
        const p = (r.body as { preview?: { id: string; status: string; candidates: Array<{ ref: { name: string } }> } })
          .preview;
        id = p?.id ?? '';
        return p?.status === 'pending' && p.candidates.some((c) => c.ref.name === PROBE);
      },
      { timeout: 90_000, intervals: [2000] },
    )
    .toBe(true);
  const about = () => got.find((m) => JSON.stringify(m).includes(`${bff?.base}/prune-previews/${id}`));
  await expect.poll(() => about() !== undefined, { timeout: 30_000 }).toBe(true);
  const message = JSON.stringify(about());
  expect(message).toContain('For @reviewer ·');
  expect(message).not.toContain('dev-reviewer');

  // back on, for whoever uses this account next
  await page.getByRole('checkbox', { name: 'A prune preview waits for my approval' }).check();
  await expect(page.getByRole('checkbox', { name: 'A prune preview waits for my approval' })).toBeChecked();
  await context.close();
});
