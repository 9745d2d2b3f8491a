// SOPS on the real kustomize-controller (issue 26, part 2), on the file's own estate: its infra app's Secret is
// encrypted in Git for the sandbox's age key (as the seed's: sandbox/sops.ts) and decrypted by kustomize-controller
// (spec.decryption with the key Secret flux-system/sops-age), never by the console. The diff says how Git holds it
// (recipient, MAC), compares keys and metadata only, and a key added live by someone with kubectl shows as drift; a
// Secret committed in plaintext is flagged in the diff and as evidence that names the file and the key, never the
// value. (The seed's decrypted value is a needle of the Secret-leak scan, security.test.ts.) The estate is deleted
// afterwards.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DiffResponse } from '../../src/api/schemas.ts';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { writeRepoFile } from '../../sandbox/scenario.ts';
import { generatedSeedFiles, infraFiles } from '../../sandbox/seed.ts';
import { SOPS_KEY_SECRET, sopsEncrypt, sopsSeedPath } from '../../sandbox/sops.ts';
import { BIN_DIR, kubectl, RUN_DIR } from '../../sandbox/state.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { RECORDER_ON, startTestConsole } from '../support/console.ts';
import { ownEstate, type Estate } from '../support/own-estate.ts';

const SOPS_FILE = sopsSeedPath('dev'); // infra/dev/db-credentials.sops.yaml, as in the seed
/** the sandbox's age recipient (its public key): what the seed's Secrets are encrypted for */
const recipient = () => /# public key: (age1\w+)/.exec(readFileSync(join(RUN_DIR, 'sops', 'age.agekey'), 'utf8'))?.[1];

let estate: Estate;
let INFRA: string;
let con: Awaited<ReturnType<typeof startTestConsole>>;
let developer: Signed;

/**
 * The seed's dev db-credentials Secret for the estate's namespace, encrypted as sandbox/sops.ts encrypts the
 * seed's (data only, MAC over the file). Its namespace is the estate's in Git: the MAC covers it, so the
 * Kustomization's targetNamespace must not change it.
 */
function encryptedDbCredentials(namespace: string): string {
  const key = recipient();
  if (!key) throw new Error('no age public key in the sandbox run directory');
  return sopsEncrypt(
    BIN_DIR,
    key,
    `apiVersion: v1
kind: Secret
metadata:
  name: db-credentials
  namespace: ${namespace}
  labels:
    app.kubernetes.io/part-of: infra
type: Opaque
stringData:
  DB_USER: render_dev
  DB_PASSWORD: ${randomBytes(18).toString('base64url')}
`,
  );
}

async function diff(): Promise<DiffResponse> {
  const r = await as(developer, con.url, `/api/apps/${INFRA}/diff`);
  expect(r.status).toBe(200);
  return r.body as DiffResponse;
}
const secretOf = (d: DiffResponse, name: string) =>
  d.objects.find((o) => o.ref.kind === 'Secret' && o.ref.name === name);

beforeAll(async () => {
  // the seed's dev platform objects first (the estate's namespace is named only once it exists), then the
  // encrypted Secret for that namespace; the infra decrypts with the sandbox's key Secret, as the seed's does
  estate = await ownEstate({
    name: 'sops',
    env: 'dev',
    files: {
      'infra/dev/platform.yaml': infraFiles()['infra/dev/platform.yaml'] as string,
      // the seed's SOPS rules (the sandbox's recipient), as the repository a person encrypts in holds them
      ...Object.fromEntries(Object.entries(generatedSeedFiles()).filter(([f]) => f === '.sops.yaml')),
    },
    apps: [
      {
        name: 'infra',
        path: 'infra/dev',
        spec: { decryption: { provider: 'sops', secretRef: { name: SOPS_KEY_SECRET } } },
      },
    ],
  });
  INFRA = estate.appId('infra');
  const sha = estate.push('infra: the database credentials, encrypted (sops test)', (w) =>
    writeRepoFile(w, SOPS_FILE, encryptedDbCredentials(estate.namespace)),
  );
  await estate.waitApplied(sha, 'infra');
  // the console connects to the estate's cluster only: its release recorder, which renders every app it sees at
  // start, has no other cluster's apps to work through before this estate's
  // (plaintext Secrets in Git are flagged by the release recorder)
  con = await startTestConsole({ ...RECORDER_ON, CONSOLE_CONTEXTS: estate.cluster });
  developer = await signIn(con.url, 'developer');
}, 300_000);
afterAll(async () => {
  try {
    await con?.close();
  } finally {
    await estate?.teardown();
  }
});

describe('SOPS-encrypted Secrets', () => {
  it('kustomize-controller decrypts; the console says how Git holds it and compares keys, never values', async () => {
    const live = JSON.parse(
      kubectl(estate.cluster, ['-n', estate.namespace, 'get', 'secret', 'db-credentials', '-o', 'json']),
    ) as {
      data: Record<string, string>;
    };
    // decrypted for real (the value in Git is ENC[AES256_GCM,…])
    expect(Buffer.from(live.data.DB_USER ?? '', 'base64').toString()).toBe('render_dev');
    const d = await diff();
    const s = secretOf(d, 'db-credentials');
    expect(s?.mode).toBe('server-dry-run');
    expect(s?.status).toBe('unchanged');
    expect(s?.secret).toMatchObject({
      file: 'infra/dev/db-credentials.sops.yaml',
      sops: { age: [recipient()], mac: true },
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
    kubectl(estate.cluster, [
      '-n',
      estate.namespace,
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
      kubectl(estate.cluster, [
        '-n',
        estate.namespace,
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
    const ns = estate.namespace;
    const sha = estate.push('infra: a token in plaintext (sops test)', (w) =>
      writeRepoFile(
        w,
        FILE,
        `apiVersion: v1\nkind: Secret\nmetadata:\n  name: plain-token\n  namespace: ${ns}\ntype: Opaque\nstringData:\n  API_TOKEN: ${VALUE}\n`,
      ),
    );
    await estate.waitApplied(sha, 'infra');
    let d: DiffResponse | undefined;
    await waitFor('the plaintext Secret in the render', async () => {
      d = await diff();
      return !!d.render?.secretsInGit?.some((x) => x.name === 'plain-token');
    });
    expect(d?.render?.secretsInGit?.find((x) => x.name === 'plain-token')).toEqual({
      name: 'plain-token',
      namespace: ns,
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
        events = (r.body as { events: EvidenceEvent[] }).events.filter((e) => e.data.secret === `${ns}/plain-token`);
        return events.length > 0;
      },
      { timeoutMs: 180_000, intervalMs: 1000 },
    );
    expect(events[0]?.data).toMatchObject({ file: FILE, secret: `${ns}/plain-token`, keys: ['API_TOKEN'] });
    expect(JSON.stringify(events)).not.toContain(VALUE);
  }, 420_000);
});
