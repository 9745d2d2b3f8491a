// Captures the msw fixtures from the real BFF against the real sandbox:
//   npx tsx scripts/capture-fixtures.ts
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, startSandbox } from '../sandbox/sandbox.ts';
import { waitFor } from '../sandbox/procs.ts';
import { startTestConsole } from '../test/support/console.ts';

await startSandbox({ reuse: true });
const con = await startTestConsole();
try {
  await waitFor(
    'apps',
    async () => ((await (await fetch(`${con.url}/api/apps`)).json()) as { total: number }).total >= 5,
    { timeoutMs: 60_000 },
  );
  const apps = (await (await fetch(`${con.url}/api/apps`)).json()) as {
    apps: Array<{ id: string; name: string }>;
    total: number;
    envs: string[];
  };
  const keep = apps.apps.filter((a) => !a.name.startsWith('bench-'));
  const clusters = ((await (await fetch(`${con.url}/api/clusters`)).json()) as { clusters: unknown[] }).clusters;
  const details: Record<string, unknown> = {};
  for (const a of keep) details[a.id] = await (await fetch(`${con.url}/api/apps/${a.id}`)).json();
  const out = {
    apps: keep,
    total: keep.length,
    envs: apps.envs,
    clusters,
    details,
    capturedAt: new Date().toISOString(),
  };
  writeFileSync(join(REPO_ROOT, 'mocks/fixtures/apps.json'), `${JSON.stringify(out, null, 2)}\n`);
  console.log(`captured ${keep.length} apps`);
} finally {
  await con.close();
}
process.exit(0);
