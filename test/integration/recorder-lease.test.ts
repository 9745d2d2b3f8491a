// Two BFF replicas with CONSOLE_RECORDER_LEASE against the real sandbox apiserver, both as the console's own
// least-privilege identity: only the Lease holder records releases; when it stops, the other takes the Lease
// over and records. (Each replica has its own SQLite store here, so "who records" is visible per store.)
import { afterAll, describe, expect, it } from 'vitest';
import type { ReleasesResponse } from '../../src/api/schemas.ts';
import { holdsFor, waitFor } from '../../sandbox/procs.ts';
import { getJson } from '../../sandbox/scenario.ts';
import { kubectl } from '../../sandbox/state.ts';
import { as } from '../support/auth.ts';
import { RECORDER_ON, startTestConsole } from '../support/console.ts';

const APP = 'nonprod/flux-system/kustomization/digital-human-dev';
const LEASE = 'gitops-console-recorder';
const env = {
  CONSOLE_RECORDER_LEASE: `default/${LEASE}`,
  CONSOLE_RECORDER_LEASE_CLUSTER: 'nonprod',
  CONSOLE_VERIFICATION_INTERVAL_S: '600',
};

type Console = Awaited<ReturnType<typeof startTestConsole>>;
const started: Console[] = [];
afterAll(async () => {
  for (const c of started) await c.close().catch(() => undefined);
  kubectl('nonprod', ['-n', 'default', 'delete', 'lease', LEASE, '--ignore-not-found']);
}, 60_000);

const releases = async (c: Console) => {
  const r = await as(c.admin, c.url, `/api/apps/${APP}/releases`);
  if (r.status !== 200) throw new Error(`releases: ${r.status} ${r.text}`);
  return (r.body as ReleasesResponse).releases;
};
const holder = () => {
  try {
    return String(
      (getJson('nonprod', ['-n', 'default', 'get', 'lease', LEASE]).spec as { holderIdentity?: string })
        .holderIdentity ?? '',
    );
  } catch {
    return '';
  }
};

describe('one release recorder among replicas (Lease)', () => {
  it('only the holder records; when it stops, the other takes over and records', async () => {
    kubectl('nonprod', ['-n', 'default', 'delete', 'lease', LEASE, '--ignore-not-found']);
    const a = await startTestConsole({ ...RECORDER_ON, ...env });
    started.push(a);
    await waitFor('replica A holds the Lease', async () => holder() !== '', { timeoutMs: 30_000, intervalMs: 500 });
    const first = holder();
    expect(first).toMatch(new RegExp(`-${process.pid}-`)); // this test process runs both replicas in-process
    await waitFor('replica A records the dev release', async () => (await releases(a)).length > 0, {
      timeoutMs: 120_000,
      intervalMs: 1000,
    });

    const b = await startTestConsole({ ...RECORDER_ON, ...env });
    started.push(b);
    // B's watch has listed the app (until then it answers 404 NotFound for it)
    await waitFor(
      'replica B knows the app',
      async () => (await as(b.admin, b.url, `/api/apps/${APP}/releases`)).status === 200,
      {
        timeoutMs: 60_000,
        intervalMs: 500,
      },
    );
    // several renew periods: B follows, records nothing, and the holder stays A
    await holdsFor(
      'A keeps the Lease and B records nothing',
      12_000,
      async () => holder() === first && (await releases(b)).length === 0,
      {
        intervalMs: 1000,
      },
    );
    expect(holder()).toBe(first);
    expect(await releases(b)).toEqual([]);

    // A stops (hands the Lease over): B leads and records
    await a.close();
    started.splice(started.indexOf(a), 1);
    await waitFor('replica B holds the Lease', async () => holder() !== '' && holder() !== first, {
      timeoutMs: 30_000,
      intervalMs: 500,
    });
    await waitFor('replica B records the dev release', async () => (await releases(b)).length > 0, {
      timeoutMs: 120_000,
      intervalMs: 1000,
    });
  }, 300_000);
});
