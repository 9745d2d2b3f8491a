import { describe, expect, it } from 'vitest';
import { externalSecretChild, externalSecretLine, storeRefOf, targetSecretOf } from './external-secret.ts';
import type { TreeNode } from './tree.ts';

const es = (status: Record<string, unknown>) => ({
  apiVersion: 'external-secrets.io/v1',
  kind: 'ExternalSecret',
  metadata: { name: 'render-api-key', namespace: 'dev' },
  spec: { secretStoreRef: { kind: 'SecretStore', name: 'platform-secrets' }, target: { name: 'render-key' } },
  status,
});
const store = (ready: Record<string, unknown>) => ({ status: { conditions: [{ type: 'Ready', ...ready }] } });

describe('ExternalSecret', () => {
  it('names its Secret and its store', () => {
    expect(targetSecretOf(es({}))).toBe('render-key');
    expect(targetSecretOf(es({ binding: { name: 'bound' } }))).toBe('bound');
    expect(storeRefOf(es({}))).toEqual({ kind: 'SecretStore', name: 'platform-secrets' });
  });

  it('says whether it synced, when, and whether its store is Ready (with the store reason when not)', () => {
    const synced = es({
      refreshTime: '2026-12-02T07:00:00Z',
      conditions: [{ type: 'Ready', status: 'True', reason: 'SecretSynced' }],
    });
    expect(externalSecretLine(synced, store({ status: 'True', reason: 'StoreValidated' }))).toBe(
      'SecretSynced, refreshed 2026-12-02T07:00:00Z; from SecretStore platform-secrets (Ready)',
    );
    const failed = es({
      conditions: [{ type: 'Ready', status: 'False', reason: 'SecretSyncedError', message: 'could not get secret' }],
    });
    expect(
      externalSecretLine(failed, store({ status: 'False', reason: 'InvalidProviderConfig', message: 'no token' })),
    ).toBe(
      'SecretSyncedError: could not get secret; from SecretStore platform-secrets (not Ready: InvalidProviderConfig — no token)',
    );
    expect(externalSecretLine(es({}), undefined)).toBe('not synced yet; from SecretStore platform-secrets (not found)');
    // before the console's first list of stores, absent is not known (unknown is never empty)
    expect(externalSecretLine(es({}), 'unlisted')).toBe(
      'not synced yet; from SecretStore platform-secrets (not known yet: the console is still listing SecretStores)',
    );
  });

  it('its Secret is a child the console names and never reads; not added twice', () => {
    const parent: TreeNode = {
      id: 'x',
      ref: {
        cluster: 'c',
        group: 'external-secrets.io',
        version: 'v1',
        kind: 'ExternalSecret',
        namespace: 'dev',
        name: 'render-api-key',
      },
      depth: 0,
      childCount: 0,
      managed: true,
      health: 'Healthy',
      reason: '',
    };
    const child = externalSecretChild(parent, es({}), undefined, () => false);
    expect(child).toMatchObject({
      parentId: 'x',
      depth: 1,
      unread: true,
      health: 'Unknown',
      ref: { kind: 'Secret', namespace: 'dev', name: 'render-key' },
    });
    expect(child?.reason).toMatch(/^written by external-secrets: not synced yet/);
    expect(externalSecretChild(parent, es({}), undefined, () => true)).toBeUndefined();
  });
});
