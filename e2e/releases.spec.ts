// Issue 16's acceptance in Chromium against the sandbox: a commit changing the dev render worker's image shows,
// in the dev release row, all nine states with real values (the promotion once a second commit brings the same
// digests to staging); a failing verification is red, leads the app header and counts in the environment's
// change failure rate; a developer rolls back to the good release through a pull request on the forge; a row
// edited in the store is found by "Verify chain"; an export verifies offline.
//
// Everything it changes is its own (so it runs beside the other parallel specs): the seed's digital-human family
// in its own repository (test/support/family-estate.ts: dev, staging and prod Kustomizations into namespaces of
// their own), its own dev business endpoint (test/support/business-standin.ts, a SIMULATION) as the dev app's
// verification, and its own console (spawned: its own evidence store, which step 5 edits by hand).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect, test, type Locator } from '@playwright/test';
import { closePullRequest, commitAndPush, forgeBranchHead, readRepoFile, writeRepoFile } from '../sandbox/scenario.ts';
import { mustState } from '../sandbox/state.ts';
import { businessStandin, type BusinessStandin } from '../test/support/business-standin.ts';
import { spawnBff } from '../test/support/bff-process.ts';
import { familyEstate, type FamilyEstate } from '../test/support/family-estate.ts';
import { consoleShows } from './support/estate.ts';

const DEV = 'overlays/dev/kustomization.yaml';
const STAGING = 'overlays/staging/kustomization.yaml';
const IMAGE = 'registry.example.com/digital-human/render-worker';

const imageLine = (overlay: string): string => {
  const lines = overlay.split('\n');
  const i = lines.findIndex((l) => l.trim() === `- name: ${IMAGE}`);
  const line = lines[i + 1];
  if (i < 0 || line === undefined) throw new Error('no render worker image entry');
  return line;
};
const withImageLine = (overlay: string, line: string): string => {
  const lines = overlay.split('\n');
  lines[lines.findIndex((l) => l.trim() === `- name: ${IMAGE}`) + 1] = line;
  return lines.join('\n');
};
const withTag = (overlay: string, tag: string) =>
  withImageLine(overlay, imageLine(overlay).replace(/(newTag|digest): .*/, `newTag: ${tag}`));

const state = (row: Locator, name: string) => row.locator(`[data-testid="release-state"][data-state="${name}"]`);

let fam: FamilyEstate | undefined;
let biz: BusinessStandin | undefined;
let bff: Awaited<ReturnType<typeof spawnBff>> | undefined;
let dir = '';

test.beforeAll(async () => {
  test.setTimeout(420_000);
  dir = mkdtempSync(join(tmpdir(), 'releases-e2e-'));
  [fam, biz] = await Promise.all([familyEstate('rel-e2e'), businessStandin({ env: 'dev', cluster: 'nonprod' })]);
  biz.readPodsIn(fam.namespace('dev'));
  // the dev app's verification: its own endpoint (the sandbox's shared ones are never made to fail here)
  const verifications = join(dir, 'verifications.json');
  writeFileSync(
    verifications,
    JSON.stringify({ [fam.appId('dev')]: { url: biz.url, expectStatus: 200, timeoutMs: 3000 } }),
  );
  const registry = (mustState() as unknown as { registry?: { url: string } }).registry?.url;
  bff = await spawnBff('console-releases', {
    env: {
      CONSOLE_VERIFICATIONS_FILE: verifications,
      CONSOLE_VERIFICATION_INTERVAL_S: '600',
      ...(registry ? { CONSOLE_REGISTRY_MIRRORS: `registry.example.com=${registry}` } : {}),
    },
  });
  await consoleShows(fam.appId('dev'), { base: bff.base, session: bff.admin, env: 'dev', sha: fam.estate.seedCommit });
});

test.afterAll(async () => {
  test.setTimeout(240_000);
  await Promise.allSettled([bff?.stop(), biz?.close()]);
  await fam?.teardown();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a dev image change: nine states with real values, promoted to staging; a failing verification is red and counts; a rollback pull request; Verify chain finds an edited row; the export verifies offline', async ({
  browser,
}) => {
  test.setTimeout(900_000);
  if (!fam || !biz || !bff) throw new Error('no estate, endpoint or console (beforeAll failed)');
  const f = fam;
  const APP = f.appId('dev');
  const push = (message: string, edit: (w: string) => void) => commitAndPush(message, edit, f.estate.state);
  const context = await browser.newContext({ storageState: bff.storageState, baseURL: bff.base });
  const page = await context.newPage();
  const devOriginal = readRepoFile(DEV, 'main', f.estate.state);
  const tag = /newTag: 1\.4\.0\b/.test(devOriginal) ? '1.4.2' : '1.4.0';

  // 1. the commit, and the dev release row with every state done, real values in each
  const sha = push(`Render worker ${tag} in dev (releases e2e)`, (w) =>
    writeRepoFile(w, DEV, withTag(readFileSync(join(w, DEV), 'utf8'), tag)),
  );
  // (the estate's GitRepository fetches every 10 minutes: waitApplied asks it to fetch now)
  await f.waitApplied(sha, 'dev');
  await page.goto(`/apps/${APP}`);
  const row = page.locator(`[data-testid="release"][data-sha="${sha}"]`);
  await expect(row).toBeVisible({ timeout: 180_000 });
  for (const s of ['change', 'review', 'artifact', 'render', 'validation', 'reconcile'])
    await expect(state(row, s), `${s} done`).toHaveAttribute('data-status', 'ok', { timeout: 240_000 });
  // the HPA has the sandbox's metrics API: healthy, so every one of the nine states has a real value
  await expect(state(row, 'health')).toHaveAttribute('data-status', 'ok', { timeout: 240_000 });
  await expect(state(row, 'verification')).toHaveAttribute('data-status', 'ok', { timeout: 240_000 });
  await expect(state(row, 'change')).toContainText(`Render worker ${tag} in dev (releases e2e)`);
  await expect(state(row, 'change')).toContainText('by Scenario Author');
  await expect(state(row, 'review')).toContainText('direct push');
  await expect(state(row, 'artifact')).toContainText(/sha256:[0-9a-f]{64}/);
  await expect(state(row, 'render')).toContainText(/[0-9a-f]{12} · \d+ objects/);
  await expect(state(row, 'validation')).toContainText(/\d+ accepted · 0 rejected/);
  await expect(state(row, 'reconcile')).toContainText(sha);
  await expect(state(row, 'health')).toContainText(/Healthy/);
  await expect(state(row, 'verification')).toContainText(/HTTP 200 in \d+ ms · \d+ pod\(s\)/);
  await expect(state(row, 'promotion')).toHaveAttribute('data-status', 'pending');
  await expect(state(row, 'promotion')).toContainText('staging does not run these digests');
  // each state links to its evidence record
  await expect(state(row, 'validation').getByRole('link', { name: /evidence #\d+/ })).toBeVisible();

  // 2. the same digests reach staging by a commit: the dev release shows its promotion
  const promote = push(`Promote render worker ${tag} to staging (releases e2e)`, (w) =>
    writeRepoFile(w, STAGING, withTag(readFileSync(join(w, STAGING), 'utf8'), tag)),
  );
  await f.waitApplied(promote, 'staging');
  await expect(state(row, 'promotion')).toHaveAttribute('data-status', 'ok', { timeout: 180_000 });
  await expect(state(row, 'promotion')).toContainText(/reached staging \d+ s later/);
  // the staging commit changed nothing in dev: its dev row says so, with no rollback of its own
  const promoteRow = page.locator(`[data-testid="release"][data-sha="${promote}"]`);
  await expect(promoteRow.getByTestId('no-change')).toContainText(`renders as ${sha.slice(0, 7)}`, {
    timeout: 120_000,
  });
  await expect(promoteRow.getByTestId('rollback')).toHaveCount(0);

  // 3. the business endpoint fails: the next release's verification is red, and leads the app header
  biz.set({ mode: 'fail' });
  const bad = push('Render worker back in dev (releases e2e)', (w) =>
    writeRepoFile(w, DEV, withImageLine(readFileSync(join(w, DEV), 'utf8'), imageLine(devOriginal))),
  );
  await f.waitApplied(bad, 'dev');
  const badRow = page.locator(`[data-testid="release"][data-sha="${bad}"]`);
  await expect(state(badRow, 'verification')).toHaveAttribute('data-status', 'failed', { timeout: 300_000 });
  await expect(state(badRow, 'verification')).toContainText('HTTP check: ');
  await expect(state(badRow, 'verification')).toContainText('503');
  // older commits that changed nothing here fold away under one line
  await expect(page.getByTestId('no-change-fold')).toContainText('1 commit that changed nothing here');
  // the header leads with the newest release's first incomplete state
  await expect(page.getByTestId('header-not-live')).toContainText(
    new RegExp(`${bad.slice(0, 7)} stops at verification`),
  );
  biz.set({ mode: 'ok' });

  // 4. a developer's way back: roll back to the good release — a pull request on the forge, never a push to main
  //    (the estate's repository goes with its teardown, the pull request with it)
  const mainBefore = await forgeBranchHead('main', f.estate.forge);
  await row.getByRole('button', { name: `Roll back to ${sha.slice(0, 7)}` }).click();
  const dialog = page.getByTestId('rollback-dialog');
  await expect(dialog).toBeVisible();
  await dialog.getByLabel(/Why/).fill('the failing verification: back to the verified release');
  await dialog.getByRole('button', { name: 'Open the pull request' }).click();
  const result = dialog.getByTestId('rollback-result');
  await expect(result).toContainText(/Pull request #\d+ opened on main/);
  await expect(result).toContainText('restore overlays/dev/kustomization.yaml');
  // the staging promotion since is outside dev's directory: named, not reverted
  await expect(result).toContainText('Not reverted (outside overlays/dev): overlays/staging/kustomization.yaml');
  const rollbackPr = Number(/#(\d+)/.exec((await result.textContent()) ?? '')?.[1]);
  expect(rollbackPr).toBeGreaterThan(0);
  expect(await forgeBranchHead('main', f.estate.forge)).toBe(mainBefore);
  await closePullRequest(rollbackPr, f.estate.forge);
  await page.keyboard.press('Escape');

  // … and counts in dev's change failure rate
  await page.goto('/envs/dev');
  const cfr = page.getByText(/(\d+) of (\d+) deployments failed within/);
  await expect(cfr).toBeVisible();
  const [, failed = '0'] = /(\d+) of \d+ deployments failed/.exec((await cfr.textContent()) ?? '') ?? [];
  expect(Number(failed)).toBeGreaterThanOrEqual(1);

  // 5. an edited row in this console's store: "Verify chain" names it; put back, the chain is intact again
  const db = new Database(join(bff.dataDir, 'evidence.sqlite'));
  try {
    db.pragma('busy_timeout = 5000');
    const rec = db
      .prepare(`SELECT seq, data FROM evidence WHERE type = 'release.change' AND data LIKE ? ORDER BY seq LIMIT 1`)
      .get(`%${sha}%`) as { seq: number; data: string };
    expect(rec).toBeTruthy();
    const edited = rec.data.replace('releases e2e', 'releases e2e, edited');
    expect(edited).not.toBe(rec.data);
    // as someone with write access to the database would: past the append-only trigger (put back after)
    const trigger = db
      .prepare(`SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'evidence_no_update'`)
      .get() as { sql: string };
    db.exec('DROP TRIGGER evidence_no_update');
    db.prepare('UPDATE evidence SET data = ? WHERE seq = ?').run(edited, rec.seq);
    await page.goto('/evidence');
    await page.getByRole('button', { name: 'Verify chain' }).click();
    await expect(page.getByTestId('verify-result')).toContainText(`Chain broken at event ${rec.seq}`);
    db.prepare('UPDATE evidence SET data = ? WHERE seq = ?').run(rec.data, rec.seq);
    db.exec(trigger.sql);
    await page.getByRole('button', { name: 'Verify chain' }).click();
    await expect(page.getByTestId('verify-result')).toContainText('Chain intact');
  } finally {
    db.close();
  }

  // 6. the full export, downloaded through the session, verifies offline with the CLI (no server, no database)
  const res = await page.request.get('/api/evidence/export?format=jsonl');
  expect(res.status()).toBe(200);
  const file = join(dir, 'evidence.jsonl');
  writeFileSync(file, await res.body());
  // with the console's public key: the CLI checks the trailer's signature (it refuses without one)
  const key = await page.request.get('/api/evidence/public-key');
  expect(key.status()).toBe(200);
  const pub = join(dir, 'checkpoint.pub');
  writeFileSync(pub, await key.text());
  const out = execFileSync(
    process.execPath,
    ['--import', 'tsx', 'src/server/cli/main.ts', 'evidence', 'verify', file, '--public-key', pub],
    { encoding: 'utf8' },
  );
  expect(out).toMatch(/^OK: \d+ events, one intact chain from event 1/);
  await context.close();
});
