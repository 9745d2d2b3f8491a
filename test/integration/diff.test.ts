// Issue #5: the BFF diff against the real sandbox: Secrets changed in Git show masked values only.
// The file owns its estate (test/support/own-estate.ts): the dev template with an API token Secret in its first
// commit; its Kustomization is suspended and the token rotated in Git, so the diff has a pending Secret change.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DiffResponse } from '../../src/api/schemas.ts';
import { kubectl } from '../../sandbox/state.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { getJson, requestReconcile, suspendSettled, writeRepoFile } from '../../sandbox/scenario.ts';
import { authedFetch, startTestConsole } from '../support/console.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../support/own-estate.ts';

const OLD = `tok-old-${Date.now().toString(36)}`;
const NEW = `tok-new-${Date.now().toString(36)}`;
const b64 = (s: string) => Buffer.from(s).toString('base64');
let con: Awaited<ReturnType<typeof startTestConsole>>;
let estate: Estate;
let APP: string;

const TOKEN_FILE = 'overlays/dev/api-token.yaml';
const secretYaml = (v: string) =>
  `apiVersion: v1\nkind: Secret\nmetadata:\n  name: api-token\ntype: Opaque\nstringData:\n  token: ${v}\n`;

/** the dev template with the token Secret (OLD) in the overlay */
function withToken(): Record<string, string> {
  const files = digitalHumanTemplate('dev');
  const k = 'overlays/dev/kustomization.yaml';
  files[k] = (files[k] ?? '').replace('resources:\n', 'resources:\n  - api-token.yaml\n');
  files[TOKEN_FILE] = secretYaml(OLD);
  return files;
}

beforeAll(async () => {
  estate = await ownEstate({ name: 'diff', env: 'dev', files: withToken() });
  APP = estate.appId();
  await suspendSettled(estate.cluster, estate.kustomization());
  const next = estate.push('Rotate dev API token', (w) => writeRepoFile(w, TOKEN_FILE, secretYaml(NEW)));
  await waitFor(
    'source artifact at the rotation commit',
    async () => {
      requestReconcile(estate.cluster, 'gitrepository', estate.source);
      const g = getJson(estate.cluster, ['-n', 'flux-system', 'get', 'gitrepository', estate.source]);
      const artifact = (g.status as Record<string, unknown> | undefined)?.artifact as { revision?: string } | undefined;
      return String(artifact?.revision).endsWith(next);
    },
    { timeoutMs: 60_000, intervalMs: 1000 },
  );
  // the estate's cluster only: the informers of the other cluster are no part of this file
  con = await startTestConsole({ CONSOLE_CONTEXTS: estate.cluster });
  await waitFor('console ready', async () => (await fetch(`${con.url}/readyz`)).status === 200, { timeoutMs: 60_000 });
});

afterAll(async () => {
  await con?.close();
  await estate?.teardown();
});

describe('diff of a Secret changed in Git', () => {
  it('shows the change with masked values, and no plaintext or base64 in any response', async () => {
    const res = await authedFetch(`${con.url}/api/apps/${APP}/diff`);
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
      ['/api/apps', '/api/evidence?limit=1000', `/api/apps/${APP}`, `/api/apps/${APP}/tree`].map(async (p) =>
        (await authedFetch(con.url + p)).text(),
      ),
    );
    for (const body of other) for (const needle of [OLD, NEW, b64(OLD), b64(NEW)]) expect(body).not.toContain(needle);
    // the live Secret really holds the old value (the test is not vacuous)
    const live = JSON.parse(
      kubectl(estate.cluster, ['-n', estate.namespace, 'get', 'secret', 'api-token', '-o', 'json']),
    ) as {
      data: { token: string };
    };
    expect(live.data.token).toBe(b64(OLD));
  });

  it('records the render (renderer, revision, digest, render hash) as evidence', async () => {
    const ev = (await (
      await authedFetch(`${con.url}/api/evidence?type=app.rendered&app=${encodeURIComponent(APP)}`)
    ).json()) as { events: Array<{ data: Record<string, string> }> };
    expect(ev.events[0]?.data).toMatchObject({
      renderer: expect.stringContaining('flux-render'),
      revision: expect.stringMatching(/^main@sha1:/),
      artifactDigest: expect.stringMatching(/^sha256:/),
      renderHash: expect.stringMatching(/^sha256:/),
    });
  });
});
