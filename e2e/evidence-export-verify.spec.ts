// Issue 22 in Chromium against the sandbox: an auditor signs in, exports the whole evidence log from the
// evidence browser (JSONL and CSV), and the offline verify command the docs give says OK for each
// downloaded file — and BROKEN once its newest event is cut; the release manifests exported beside it (issue 28)
// check against the export's render hashes.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { TEST_PASSWORD } from '../test/support/auth.ts';

// this spec signs in by itself: no stored session
test.use({ baseURL: process.env.E2E_BASE_URL, storageState: { cookies: [], origins: [] } });

async function signInAs(page: Page, user: string) {
  await page.getByLabel('User name').fill(user);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

/** The documented command (docs/reference/cli.md): `npm run cli -- evidence verify <file> --public-key <key>`. */
const verify = (...args: string[]) =>
  spawnSync('npm', ['run', 'cli', '--', 'evidence', 'verify', ...args], { encoding: 'utf8', timeout: 120_000 });

test('an auditor exports the evidence in the browser; the documented verify command says OK for the downloaded files', async ({
  page,
}) => {
  const dir = mkdtempSync(join(tmpdir(), 'evidence-export-e2e-'));
  try {
    await page.goto('/evidence');
    await expect(page).toHaveURL(/\/signin\?next=/);
    await signInAs(page, 'auditor');
    await expect(page).toHaveURL(/\/evidence$/);
    await expect(page.getByTestId('evidence-table')).toBeVisible();
    // the public key, taken once and kept apart from the console (docs/guide/auditor.md: GET /api/evidence/public-key)
    const pub = join(dir, 'checkpoint.pub');
    const key = await page.request.get('/api/evidence/public-key');
    expect(key.status()).toBe(200);
    writeFileSync(pub, await key.text());

    let jsonl = '';
    for (const [link, ext] of [
      ['Export JSONL', 'jsonl'],
      ['Export CSV', 'csv'],
    ] as const) {
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('link', { name: link }).click(),
      ]);
      // the auditor's grants cover everything and no filter is set: a full export, named so
      expect(download.suggestedFilename()).toMatch(new RegExp(`^evidence-\\d[^/]*\\.${ext}$`));
      const file = join(dir, download.suggestedFilename());
      await download.saveAs(file);
      if (ext === 'jsonl') jsonl = file;
      const ok = verify(file, '--public-key', pub);
      expect(ok.stderr).not.toMatch(/error/i);
      expect(ok.stdout).toMatch(
        /^OK: \d+ events, one intact chain from event 1; head [0-9a-f]{64}\ntrailer: a full export of the chain up to event \d+, made [^;]+; signature valid \(key sha256:[0-9a-f]{64}\)$/m,
      );
      expect(ok.status).toBe(0);

      // the same file with its newest event cut (the trailer kept): BROKEN, exit 1
      const sep = ext === 'csv' ? '\r\n' : '\n';
      const lines = readFileSync(file, 'utf8').trimEnd().split(sep);
      const cut = join(dir, `cut.${ext}`);
      writeFileSync(cut, `${[...lines.slice(0, -2), lines.at(-1)].join(sep)}${sep}`);
      const broken = verify(cut, '--public-key', pub);
      expect(broken.stdout).toMatch(/^BROKEN at event \d+: event \d+ is missing at the end/m);
      expect(broken.status).toBe(1);
    }

    // the manifests of the releases the export records, checked offline against it
    const [bundle] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Export manifests' }).click(),
    ]);
    expect(bundle.suggestedFilename()).toMatch(/^evidence-manifests-[^/]*\.jsonl$/);
    const bundleFile = join(dir, bundle.suggestedFilename());
    await bundle.saveAs(bundleFile);
    const both = verify(jsonl, '--public-key', pub, '--manifests', bundleFile);
    expect(both.stdout).toMatch(/^manifests OK: \d+ checked against their render hashes; all [1-9]\d* the export's/m);
    expect(both.status).toBe(0);
    // one manifest's bytes changed: BROKEN, named
    const entries = readFileSync(bundleFile, 'utf8').trimEnd().split('\n');
    const first = JSON.parse(entries[1] ?? '{}') as { renderHash: string; canonical: string };
    entries[1] = JSON.stringify({ ...first, canonical: first.canonical.replace('"kind":', '"kind": ') });
    writeFileSync(bundleFile, `${entries.join('\n')}\n`);
    const edited = verify(jsonl, '--public-key', pub, '--manifests', bundleFile);
    expect(edited.stdout).toContain(`edited: the manifest of ${first.renderHash} does not hash to it`);
    expect(edited.status).toBe(1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
