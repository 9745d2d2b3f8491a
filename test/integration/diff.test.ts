// Issue #5: the BFF diff against the real sandbox: Secrets changed in Git show masked values only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DiffResponse } from '../../src/api/schemas.ts';
import { kubectl, mustState } from '../../sandbox/sandbox.ts';
import { waitFor } from '../../sandbox/procs.ts';
import {
  commitAndPush,
  getJson,
  requestReconcile,
  setSuspended,
  waitForKustomizationRevision,
  writeRepoFile,
} from '../../sandbox/scenario.ts';
import { authedFetch, startTestConsole } from '../support/console.ts';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const OLD = `tok-old-${Date.now().toString(36)}`;
const NEW = `tok-new-${Date.now().toString(36)}`;
const b64 = (s: string) => Buffer.from(s).toString('base64');
let con: Awaited<ReturnType<typeof startTestConsole>>;

const secretYaml = (v: string) =>
  `apiVersion: v1\nkind: Secret\nmetadata:\n  name: api-token\ntype: Opaque\nstringData:\n  token: ${v}\n`;

beforeAll(async () => {
  const sha = commitAndPush('Add dev API token', (w) => {
    writeRepoFile(w, 'overlays/dev/api-token.yaml', secretYaml(OLD));
    const k = join(w, 'overlays/dev/kustomization.yaml');
    const text = readFileSync(k, 'utf8');
    if (!text.includes('api-token.yaml'))
      writeFileSync(k, text.replace('resources:\n', 'resources:\n  - api-token.yaml\n'));
  });
  await waitForKustomizationRevision('nonprod', 'digital-human-dev', sha);
  setSuspended('nonprod', 'digital-human-dev', true);
  const next = commitAndPush('Rotate dev API token', (w) =>
    writeRepoFile(w, 'overlays/dev/api-token.yaml', secretYaml(NEW)),
  );
  requestReconcile('nonprod', 'gitrepository', 'digital-human');
  await waitFor(
    'source artifact at the rotation commit',
    async () => {
      requestReconcile('nonprod', 'gitrepository', 'digital-human');
      const g = getJson('nonprod', ['-n', 'flux-system', 'get', 'gitrepository', 'digital-human']);
      return String(((g.status as Record<string, unknown>).artifact as { revision?: string }).revision).endsWith(next);
    },
    { timeoutMs: 60_000, intervalMs: 1000 },
  );
  con = await startTestConsole();
  await waitFor('console ready', async () => (await fetch(`${con.url}/readyz`)).status === 200, { timeoutMs: 60_000 });
});

afterAll(async () => {
  await con?.close();
  setSuspended('nonprod', 'digital-human-dev', false);
  requestReconcile('nonprod', 'kustomization', 'digital-human-dev');
  void mustState;
});

describe('diff of a Secret changed in Git', () => {
  it('shows the change with masked values, and no plaintext or base64 in any response', async () => {
    const res = await authedFetch(`${con.url}/api/apps/nonprod/flux-system/kustomization/digital-human-dev/diff`);
    const text = await res.text();
    expect(res.status).toBe(200);
    const d = JSON.parse(text) as DiffResponse;
    const secret = d.objects.find((o) => o.ref.kind === 'Secret' && o.ref.name === 'api-token');
    expect(secret?.status).toBe('changed');
    const token = secret?.changes.find((c) => c.path === 'data.token');
    expect(token?.class).toBe('pending');
    expect(String(token?.predicted)).toMatch(/^<secret [0-9a-f]{12}>$/);
    expect(String(token?.live)).toMatch(/^<secret [0-9a-f]{12}>$/);
    expect(token?.predicted).not.toBe(token?.live);
    for (const needle of [OLD, NEW, b64(OLD), b64(NEW)]) expect(text).not.toContain(needle);
    // same value → same mask: the live side of the YAML uses the mask the table shows
    expect(secret?.liveYaml).toContain(String(token?.live));
    // and nothing else the console serves carries it either
    const other = await Promise.all(
      [
        '/api/apps',
        '/api/evidence?limit=1000',
        '/api/apps/nonprod/flux-system/kustomization/digital-human-dev',
        '/api/apps/nonprod/flux-system/kustomization/digital-human-dev/tree',
      ].map(async (p) => (await authedFetch(con.url + p)).text()),
    );
    for (const body of other) for (const needle of [OLD, NEW, b64(OLD), b64(NEW)]) expect(body).not.toContain(needle);
    // the live Secret really holds the old value (the test is not vacuous)
    const live = JSON.parse(kubectl('nonprod', ['-n', 'dev', 'get', 'secret', 'api-token', '-o', 'json'])) as {
      data: { token: string };
    };
    expect(live.data.token).toBe(b64(OLD));
  });

  it('records the render (renderer, revision, digest, render hash) as evidence', async () => {
    const ev = (await (
      await authedFetch(
        `${con.url}/api/evidence?type=app.rendered&app=${encodeURIComponent('nonprod/flux-system/kustomization/digital-human-dev')}`,
      )
    ).json()) as { events: Array<{ data: Record<string, string> }> };
    expect(ev.events[0]?.data).toMatchObject({
      renderer: expect.stringContaining('flux-render'),
      revision: expect.stringMatching(/^main@sha1:/),
      artifactDigest: expect.stringMatching(/^sha256:/),
      renderHash: expect.stringMatching(/^sha256:/),
    });
  });
});
