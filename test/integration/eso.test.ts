// External Secrets Operator on its real controller (issue 26, part 3), on the file's own estate: its infra app (the
// seed's dev infra files) holds an ExternalSecret that makes the Secret render-api-key from a SecretStore on ESO's
// `fake` provider. The tree shows ExternalSecret → Secret (named, never read) with the sync, the refresh and the
// store's readiness; a store that fails (a Git change to a provider whose credentials do not exist) makes the app
// Degraded with the reason; the Git value back makes it Healthy again. The estate is deleted afterwards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppResponse, TreeResponse } from '../../src/api/schemas.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { writeRepoFile } from '../../sandbox/scenario.ts';
import { ESO_FAKE_VALUE, externalSecretsFile, infraFiles } from '../../sandbox/seed.ts';
import { kubectl } from '../../sandbox/state.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { startTestConsole } from '../support/console.ts';
import { ownEstate, type Estate } from '../support/own-estate.ts';

const FILE = 'infra/dev/external-secrets.yaml';
/** a store whose provider cannot work: a Vault on a closed loopback port, with a token Secret that does not exist */
const FAILING_STORE = `    vault:
      server: http://127.0.0.1:9
      path: secret
      version: v2
      auth:
        tokenSecretRef:
          name: vault-token-that-does-not-exist
          key: token
`;

let estate: Estate;
let INFRA: string;
let con: Awaited<ReturnType<typeof startTestConsole>>;
let developer: Signed;

async function app(): Promise<AppResponse> {
  const r = await as(developer, con.url, `/api/apps/${INFRA}`);
  expect(r.status).toBe(200);
  return r.body as AppResponse;
}
async function tree(): Promise<TreeResponse> {
  const r = await as(developer, con.url, `/api/apps/${INFRA}/tree`);
  expect(r.status).toBe(200);
  return r.body as unknown as TreeResponse;
}
const esNode = (t: TreeResponse) =>
  t.nodes.find((n) => n.ref.kind === 'ExternalSecret' && n.ref.name === 'render-api-key');
const secretNode = (t: TreeResponse) => t.nodes.find((n) => n.ref.kind === 'Secret' && n.ref.name === 'render-api-key');

beforeAll(async () => {
  // the seed's dev infra (platform objects and External Secrets; its SOPS Secret is sops.test's), applied by the
  // estate's own Kustomization into its own namespace
  const infra = infraFiles();
  estate = await ownEstate({
    name: 'eso',
    env: 'dev',
    files: { [FILE]: infra[FILE] as string, 'infra/dev/platform.yaml': infra['infra/dev/platform.yaml'] as string },
    apps: [{ name: 'infra', path: 'infra/dev' }],
  });
  INFRA = estate.appId('infra');
  con = await startTestConsole();
  developer = await signIn(con.url, 'developer');
}, 300_000);
afterAll(async () => {
  try {
    await con?.close();
  } finally {
    await estate?.teardown();
  }
});

describe('External Secrets Operator', () => {
  it('the ExternalSecret synced from its store; the tree names the Secret it wrote, never reads it', async () => {
    // the real controller wrote the Secret (its field manager), with the store's value
    await waitFor('ESO wrote render-api-key', async () =>
      kubectl(estate.cluster, ['-n', estate.namespace, 'get', 'secrets', '-o', 'name']).includes(
        'secret/render-api-key',
      ),
    );
    const live = JSON.parse(
      kubectl(estate.cluster, [
        '-n',
        estate.namespace,
        'get',
        'secret',
        'render-api-key',
        '-o',
        'json',
        '--show-managed-fields',
      ]),
    ) as { data: { API_KEY: string }; metadata: { managedFields: Array<{ manager: string }> } };
    expect(Buffer.from(live.data.API_KEY, 'base64').toString()).toBe(ESO_FAKE_VALUE);
    // (ESO applies as a field manager named after the ExternalSecret)
    expect(live.metadata.managedFields.map((m) => m.manager)).toContain(
      'externalsecrets.external-secrets.io/render-api-key',
    );

    let t: TreeResponse | undefined;
    // (a console just started may still be listing SecretStores: the tree says "not known yet" until then)
    await waitFor('the ExternalSecret in the tree, synced, its store listed', async () => {
      t = await tree();
      return esNode(t)?.health === 'Healthy' && !!secretNode(t) && !/not known yet/.test(secretNode(t)?.reason ?? '');
    });
    const s = secretNode(t as TreeResponse);
    expect(s).toMatchObject({ parentId: esNode(t as TreeResponse)?.id, health: 'Unknown', unread: true });
    expect(s?.reason).toMatch(
      /^written by external-secrets: SecretSynced, refreshed \S+; from SecretStore platform-secrets \(Ready\)/,
    );
    expect(t?.nodes.find((n) => n.ref.kind === 'SecretStore')?.health).toBe('Healthy');
    // no value reaches the console's answers
    expect(JSON.stringify(t)).not.toContain(ESO_FAKE_VALUE.slice(5));
  });

  it('a store that fails makes the app Degraded with the reason; Git’s store back makes it Healthy', async () => {
    const sha = estate.push('infra: platform-secrets on a Vault without credentials (eso test)', (w) =>
      writeRepoFile(w, FILE, externalSecretsFile('dev', FAILING_STORE)),
    );
    await estate.waitApplied(sha, 'infra');
    let last: AppResponse | undefined;
    await waitFor(
      'the infra Degraded by its store',
      async () => {
        last = await app();
        return last.app.health === 'Degraded' && /SecretStore|secret/i.test(last.app.healthMessage);
      },
      { timeoutMs: 120_000, intervalMs: 2000 },
    ).catch((e: unknown) => {
      throw new Error(`${String(e)}; last: ${last?.app.health} ${last?.app.healthMessage}`);
    });
    const t = await tree();
    expect(t.nodes.find((n) => n.ref.kind === 'SecretStore')?.health).toBe('Degraded');
    expect(t.nodes.find((n) => n.ref.kind === 'SecretStore')?.reason).toMatch(
      /vault-token-that-does-not-exist|InvalidProviderConfig|token/i,
    );
    // Git's store back (the seed's): the app is Healthy again
    const back = estate.push('infra: platform-secrets back to the seed (eso test)', (w) =>
      writeRepoFile(w, FILE, externalSecretsFile('dev')),
    );
    await estate.waitApplied(back, 'infra');
    await waitFor('the infra Healthy again', async () => (await app()).app.health === 'Healthy', {
      timeoutMs: 120_000,
      intervalMs: 2000,
    });
  }, 360_000);
});
