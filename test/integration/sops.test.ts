// SOPS on the real kustomize-controller (issue 26, part 2): infra-dev's Secret is encrypted in Git for the
// sandbox's age key (sandbox/sops.ts) and decrypted by kustomize-controller, never by the console. The diff
// says how Git holds it (recipient, MAC), compares keys and metadata only, and a key added live by someone with
// kubectl shows as drift; a Secret committed in plaintext is flagged in the diff and as evidence that names the
// file and the key, never the value. (The decrypted value is a needle of the Secret-leak scan, security.test.ts.)
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DiffResponse } from '../../src/api/schemas.ts';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { waitFor } from '../../sandbox/procs.ts';
import {
  commitAndPushRetrying,
  waitForKustomizationRevision,
  waitForRevisionPrunedByAdmin,
  writeRepoFile,
} from '../../sandbox/scenario.ts';
import { kubectl, RUN_DIR } from '../../sandbox/state.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { RECORDER_ON, startTestConsole } from '../support/console.ts';

const INFRA = 'nonprod/flux-system/kustomization/infra-dev';
let con: Awaited<ReturnType<typeof startTestConsole>>;
let developer: Signed;

async function diff(): Promise<DiffResponse> {
  const r = await as(developer, con.url, `/api/apps/${INFRA}/diff`);
  expect(r.status).toBe(200);
  return r.body as DiffResponse;
}
const secretOf = (d: DiffResponse, name: string) =>
  d.objects.find((o) => o.ref.kind === 'Secret' && o.ref.name === name);

beforeAll(async () => {
  con = await startTestConsole(RECORDER_ON); // plaintext Secrets in Git are flagged by the release recorder
  developer = await signIn(con.url, 'developer');
}, 120_000);
afterAll(async () => {
  await con?.close();
});

describe('SOPS-encrypted Secrets', () => {
  it('kustomize-controller decrypts; the console says how Git holds it and compares keys, never values', async () => {
    const live = JSON.parse(kubectl('nonprod', ['-n', 'dev', 'get', 'secret', 'db-credentials', '-o', 'json'])) as {
      data: Record<string, string>;
    };
    // decrypted for real (the value in Git is ENC[AES256_GCM,…])
    expect(Buffer.from(live.data.DB_USER ?? '', 'base64').toString()).toBe('render_dev');
    const recipient = /# public key: (age1\w+)/.exec(readFileSync(join(RUN_DIR, 'sops', 'age.agekey'), 'utf8'))?.[1];
    const d = await diff();
    const s = secretOf(d, 'db-credentials');
    expect(s?.mode).toBe('server-dry-run');
    expect(s?.status).toBe('unchanged');
    expect(s?.secret).toMatchObject({
      file: 'infra/dev/db-credentials.sops.yaml',
      sops: { age: [recipient], mac: true },
      keys: [
        { key: 'DB_PASSWORD', git: 'encrypted', live: 'present' },
        { key: 'DB_USER', git: 'encrypted', live: 'present' },
      ],
    });
    expect(s?.note).toMatch(/^encrypted in Git \(SOPS 3\.13\.3, age recipient age1.*MAC present\)/);
    expect(s?.changes.filter((c) => c.path.startsWith('data.') && c.class !== 'defaulted')).toEqual([]);
    // the desired side is Git's ciphertext (masked), the live side masked: no decrypted value
    const value = Buffer.from(live.data.DB_PASSWORD ?? '', 'base64').toString();
    expect(JSON.stringify(d)).not.toContain(value);
    expect(JSON.stringify(d)).not.toContain(live.data.DB_PASSWORD);
    expect(d.render?.secretsInGit?.filter((x) => x.keys.some((k) => k.git === 'plaintext'))).toEqual([]);
  });

  it('a key added live with kubectl is drift; Git’s encrypted keys are unchanged', async () => {
    kubectl('nonprod', [
      '-n',
      'dev',
      'patch',
      'secret',
      'db-credentials',
      '--type',
      'merge',
      '-p',
      JSON.stringify({ data: { EXTRA: Buffer.from('added by hand').toString('base64') } }),
    ]);
    try {
      let last: DiffResponse | undefined;
      await waitFor('the extra key in the diff', async () => {
        last = await diff();
        return !!secretOf(last, 'db-credentials')?.changes.some((c) => c.path === 'data.EXTRA');
      });
      const s = secretOf(last as DiffResponse, 'db-credentials');
      expect(s?.status).toBe('changed');
      expect(s?.changes.find((c) => c.path === 'data.EXTRA')).toMatchObject({ class: 'drift' });
      expect(JSON.stringify(s)).not.toContain('added by hand');
    } finally {
      kubectl('nonprod', [
        '-n',
        'dev',
        'patch',
        'secret',
        'db-credentials',
        '--type',
        'merge',
        '-p',
        // a merge patch with null removes the key and is a no-op when it is already gone
        // (a Flux reconcile in between may have dropped it; a JSON-patch remove then fails)
        JSON.stringify({ data: { EXTRA: null } }),
      ]);
    }
  });

  it('a Secret committed in plaintext is flagged in the diff and as evidence: file and key, never the value', async () => {
    const VALUE = `plain-${randomBytes(16).toString('hex')}`;
    const FILE = 'infra/dev/plain-token.yaml';
    const sha = commitAndPushRetrying('infra: a token in plaintext (sops test)', (w) =>
      writeRepoFile(
        w,
        FILE,
        `apiVersion: v1\nkind: Secret\nmetadata:\n  name: plain-token\n  namespace: dev\ntype: Opaque\nstringData:\n  API_TOKEN: ${VALUE}\n`,
      ),
    );
    try {
      await waitForKustomizationRevision('nonprod', 'infra-dev', sha);
      let d: DiffResponse | undefined;
      await waitFor('the plaintext Secret in the render', async () => {
        d = await diff();
        return !!d.render?.secretsInGit?.some((x) => x.name === 'plain-token');
      });
      expect(d?.render?.secretsInGit?.find((x) => x.name === 'plain-token')).toEqual({
        name: 'plain-token',
        namespace: 'dev',
        file: FILE,
        keys: [{ key: 'API_TOKEN', git: 'plaintext' }],
        sops: null,
      });
      expect(secretOf(d as DiffResponse, 'plain-token')?.secret?.keys).toEqual([
        { key: 'API_TOKEN', git: 'plaintext', live: 'present' },
      ]);
      expect(JSON.stringify(d)).not.toContain(VALUE);
      // the release recorder's evidence: once for the release that brought it
      let events: EvidenceEvent[] = [];
      await waitFor(
        'secret.plaintext-in-git recorded',
        async () => {
          const r = await as(
            con.admin,
            con.url,
            `/api/evidence?type=secret.plaintext-in-git&app=${encodeURIComponent(INFRA)}&limit=100`,
          );
          events = (r.body as { events: EvidenceEvent[] }).events.filter((e) => e.data.secret === 'dev/plain-token');
          return events.length > 0;
        },
        { timeoutMs: 60_000, intervalMs: 1000 },
      );
      expect(events[0]?.data).toMatchObject({ file: FILE, secret: 'dev/plain-token', keys: ['API_TOKEN'] });
      expect(JSON.stringify(events)).not.toContain(VALUE);
    } finally {
      const clean = commitAndPushRetrying('infra: the plaintext token removed (sops test)', (w) =>
        rmSync(join(w, FILE), { force: true }),
      );
      // dev is governed by the console's prune admission policy: the clean-up deletes it as the sandbox admin
      await waitForRevisionPrunedByAdmin('nonprod', 'infra-dev', clean, 'dev', ['secret/plain-token']);
    }
  }, 240_000);
});
