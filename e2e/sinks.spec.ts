// Issue 28, event sinks, in Chromium: a BFF of its own with one sink (a receiver this spec starts on 127.0.0.1,
// failing at first, so the records the release recorder makes land in the dead-letter list). An admin opens
// "Event sinks" from the header, sees the sink down with its dead letters, the receiver is fixed, and the admin
// retries one: the row goes, the receiver holds that record with a valid signature. A developer sees no link and
// the page answers with the reason. The page passes axe.
import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SIGNATURE_HEADER, verifySignature } from '../src/server/sinks/signature.ts';
import { signIn } from '../test/support/auth.ts';
import { spawnBff, storageStateFor } from '../test/support/bff-process.ts';

const SECRET = `e2e-sinks-${Date.now()}-0123456789abcdef`;
let status = 500;
const got: Array<{ seq: number; signed: boolean }> = [];
let receiver: Server | undefined;
let bff: Awaited<ReturnType<typeof spawnBff>> | undefined;

test.beforeAll(async () => {
  test.setTimeout(180_000);
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (status === 200)
        got.push({
          seq: (JSON.parse(body) as { customData: { evidence: { seq: number } } }).customData.evidence.seq,
          signed: verifySignature(SECRET, body, String(req.headers[SIGNATURE_HEADER]), Date.now() / 1000),
        });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => receiver?.listen(0, '127.0.0.1', () => r()));
  const dir = mkdtempSync(join(tmpdir(), 'e2e-sinks-'));
  const secretFile = join(dir, 'hmac');
  writeFileSync(secretFile, SECRET);
  chmodSync(secretFile, 0o600);
  const sinksFile = join(dir, 'sinks.json');
  const port = (receiver.address() as { port: number }).port;
  writeFileSync(
    sinksFile,
    JSON.stringify({
      sinks: [
        {
          name: 'audit',
          url: `http://127.0.0.1:${port}/cdevents`,
          secretFile,
          deadLetterAfterSeconds: 1,
          from: 'start',
        },
      ],
    }),
  );
  bff = await spawnBff('console-e2e-sinks', {
    env: { CONSOLE_EVENT_SINKS_FILE: sinksFile, CONSOLE_VERIFICATION_INTERVAL_S: '600' },
  });
});

test.afterAll(async () => {
  await bff?.stop();
  await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
});

test.use({ storageState: { cookies: [], origins: [] } });

test('an admin sees a sink down with its dead letters and retries one once the receiver is fixed', async ({
  browser,
}) => {
  test.setTimeout(240_000);
  if (!bff) throw new Error('no BFF');
  const context = await browser.newContext({ storageState: bff.storageState, baseURL: bff.base });
  const page = await context.newPage();
  await page.goto('/');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Event sinks' }).click();
  await expect(page.getByRole('heading', { name: 'Event sinks', level: 1 })).toBeVisible();
  const sink = page.locator('[data-testid="sink"][data-name="audit"]');
  await expect(sink.getByTestId('sink-state')).toHaveText('down', { timeout: 120_000 });
  const rows = sink.getByTestId('dead-letter');
  await expect(rows.first()).toBeVisible();
  await expect(rows.first()).toContainText('HTTP 500');
  const axe = await new AxeBuilder({ page }).analyze();
  expect(axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);

  // while the receiver still fails, a retry says why and the row stays
  const seq = Number(await rows.first().getAttribute('data-seq'));
  await sink.getByRole('button', { name: `Retry #${seq}`, exact: true }).click();
  await expect(sink.getByTestId('sink-retry-error')).toContainText(`the sink did not take record ${seq}: HTTP 500`);
  await expect(sink.locator(`[data-testid="dead-letter"][data-seq="${seq}"]`)).toBeVisible();

  // fixed: the retry delivers, the row goes, the receiver holds that record, signed
  status = 200;
  await sink.getByRole('button', { name: `Retry #${seq}`, exact: true }).click();
  await expect(sink.locator(`[data-testid="dead-letter"][data-seq="${seq}"]`)).toHaveCount(0);
  expect(got.filter((g) => g.seq === seq)).toEqual([{ seq, signed: true }]);
  await context.close();

  // a developer: no link, and the page says why
  const devState = join(mkdtempSync(join(tmpdir(), 'e2e-sinks-dev-')), 'storage.json');
  writeFileSync(devState, JSON.stringify(storageStateFor(await signIn(bff.base, 'developer'))));
  const dev = await browser.newContext({ storageState: devState, baseURL: bff.base });
  const devPage = await dev.newPage();
  await devPage.goto('/');
  await expect(devPage.getByRole('navigation', { name: 'Main' })).toBeVisible();
  await expect(devPage.getByRole('link', { name: 'Event sinks' })).toHaveCount(0);
  await devPage.goto('/sinks');
  await expect(devPage.getByRole('alert')).toContainText('admin role');
  await dev.close();
});
