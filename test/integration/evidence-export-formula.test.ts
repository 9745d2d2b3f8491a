// A CSV export opened in a spreadsheet, against the sandbox (on the file's own staging estate): a drift by a field
// manager named like a spreadsheet formula is exported as text (the actor cell quoted), and the file still verifies
// offline with the CLI. The rest of the evidence export and its offline verification, which needs no cluster, is
// test/contract/evidence-export.test.ts.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { CsvParser } from '../../src/server/evidence/export-csv.ts';
import { kubectl } from '../../sandbox/sandbox.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { as, download } from '../support/auth.ts';
import { RECORDER_ON, startTestConsole } from '../support/console.ts';
import { fluxReconciled } from '../support/flux.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../support/own-estate.ts';
import { serverBundle } from '../support/server-bundle.ts';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
// the bundled CLI the image ships (test/support/server-bundle.ts)
const bundle = await serverBundle();
const work = mkdtempSync(join(tmpdir(), 'evidence-export-formula-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/**
 * The evidence CLI as its own process, awaited (not spawnSync: the console under test runs in this process, and a
 * blocked event loop let its keep-alive timers close sockets the client was about to reuse: ECONNRESET).
 */
const cli = (...args: string[]) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    execFile(
      process.execPath,
      bundle.cliArgs('evidence', ...args),
      // (a CLI run is seconds; on a loaded 2-core machine, with other files running beside this one, far more)
      { cwd: REPO, encoding: 'utf8', timeout: 180_000 },
      (err, stdout, stderr) => {
        const code = (err as { code?: unknown } | null)?.code;
        if (err && typeof code !== 'number') reject(err);
        else resolve({ status: err ? (code as number) : 0, stdout, stderr });
      },
    );
  });

describe('a CSV export opened in a spreadsheet (against the sandbox)', () => {
  const file = (n: string) => join(work, n);
  const MANAGER = '=HYPERLINK("x")';
  // the drifted object is the file's own: a staging estate (the seed's staging files), deleted afterwards
  let estate: Estate | undefined;
  let sandboxConsole: Awaited<ReturnType<typeof startTestConsole>> | undefined;
  beforeAll(async () => {
    estate = await ownEstate({ name: 'evidence-export', env: 'staging', files: digitalHumanTemplate('staging') });
  }, 300_000);
  afterAll(async () => {
    try {
      await sandboxConsole?.close();
    } finally {
      await estate?.teardown();
    }
  }, 180_000);

  it('a drift by a field manager named =HYPERLINK("x") is exported as text, and the file still verifies', async () => {
    const own = estate as Estate;
    sandboxConsole = await startTestConsole(RECORDER_ON);
    const c = sandboxConsole;
    await fluxReconciled(own.cluster, own.kustomization());
    // the console has listed every cluster (its drift tracker sees the patch as a change, not as its first look)
    await waitFor('the console ready', async () => (await fetch(`${c.url}/readyz`)).status === 200, {
      timeoutMs: 60_000,
    });
    const t0 = new Date().toISOString();
    // anyone who may edit the object chooses the manager name the console records as the drift's actor
    kubectl(own.cluster, [
      ...['-n', own.namespace, 'patch', 'configmap', 'render-worker-config', '--type', 'merge'],
      ...['--field-manager', MANAGER, '-p', JSON.stringify({ data: { 'max-sessions': '99' } })],
    ]);
    // the estate's app only (other files' apps drift in staging meanwhile)
    const query = `type=drift.detected&cluster=${own.cluster}&env=${own.env}&app=${encodeURIComponent(own.appId())}&from=${encodeURIComponent(t0)}`;
    await waitFor(
      'the drift by =HYPERLINK("x") in the evidence',
      async () =>
        ((await as(c.admin, c.url, `/api/evidence?${query}`)).body.events as EvidenceEvent[]).some(
          (e) => e.actor === MANAGER,
        ),
      { timeoutMs: 90_000 },
    );
    const csv = await download(c.admin, c.url, `/api/evidence/export?format=csv&${query}`);
    expect(csv.status).toBe(200);
    const rows = csv.text.split('\r\n');
    const row = rows.find((r) => r.includes('HYPERLINK'));
    // the actor cell starts with a quote: a spreadsheet shows it as text, it does not run it
    expect(row?.split(',')[3]).toBe(`"'=HYPERLINK(""x"")"`);
    const cells = new CsvParser().push(csv.text).flatMap((r) => r.cells.map((x) => x.value));
    expect(cells.filter((x) => /^[=+\-@\t\r]/.test(x))).toEqual([]);
    // …and the verifier takes the quote off again: the event's hash still matches
    writeFileSync(file('hyperlink.csv'), csv.text);
    const v = await cli('verify', file('hyperlink.csv'), '--filtered', '--allow-unsigned');
    expect(v.stdout).toMatch(/^OK: \d+ events .*each matches its hash; a filtered export/);
    expect(v.status).toBe(0);
  });
});
