// The tree from the object index before and after a kind's first list: an object the console has not listed yet
// is not "Missing" but unknown, and an ExternalSecret's store not listed yet is not "not found" (CI saw a tree
// answered while SecretStores were still being listed say "SecretStore platform-secrets (not found)").
import { describe, expect, it } from 'vitest';
import type { App } from '../../domain/app.ts';
import type { ObjectRef } from '../../domain/refs.ts';
import { ClusterManager, type ManagedCluster } from '../kube/cluster-manager.ts';
import type { Informer, KubeObject, ResourceKind } from '../kube/informer.ts';
import { ObjectIndex } from '../kube/object-index.ts';
import { AppTreeMemo, appTree } from './app-tree.ts';

const ES_KIND: ResourceKind = {
  group: 'external-secrets.io',
  version: 'v1beta1',
  kind: 'ExternalSecret',
  plural: 'externalsecrets',
  namespaced: true,
};
const STORE_KIND: ResourceKind = { ...ES_KIND, kind: 'SecretStore', plural: 'secretstores' };
const CM_KIND: ResourceKind = { group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };

/** a cluster manager whose one cluster "c" has informers in the given synced states (no apiserver) */
function fakeCluster(synced: Record<string, boolean>): { cm: ClusterManager; index: ObjectIndex } {
  const cm = new ClusterManager();
  const informers = new Map(
    Object.entries(synced).map(([k, s]) => [
      k,
      { state: { synced: s, absent: false, relists: 0 } } as unknown as Informer,
    ]),
  );
  cm.clusters.set('c', { informers } as unknown as ManagedCluster);
  return { cm, index: new ObjectIndex(cm) };
}

const obj = (kind: ResourceKind, name: string, extra: Record<string, unknown> = {}): KubeObject =>
  ({
    apiVersion: kind.group ? `${kind.group}/${kind.version}` : kind.version,
    kind: kind.kind,
    metadata: { name, namespace: 'dev', uid: `uid-${kind.kind}-${name}` },
    ...extra,
  }) as KubeObject;

const ref = (kind: ResourceKind, name: string): ObjectRef => ({
  cluster: 'c',
  group: kind.group,
  version: kind.version,
  kind: kind.kind,
  namespace: 'dev',
  name,
});

const app = (inventory: ObjectRef[]): App => ({
  id: 'c/flux-system/kustomization/infra',
  cluster: 'c',
  controller: 'flux',
  kind: 'Kustomization',
  namespace: 'flux-system',
  name: 'infra',
  env: 'dev',
  source: {},
  automation: { autoSync: true, selfHeal: true, prune: true, suspended: false },
  sync: 'Synced',
  health: 'Healthy',
  healthMessage: '',
  conditions: [],
  inventory,
  warnings: [],
});

const es = obj(ES_KIND, 'api-key', {
  spec: { secretStoreRef: { name: 'platform-secrets' }, target: { name: 'api-key' } },
  status: { conditions: [{ type: 'Ready', status: 'True', reason: 'SecretSynced' }] },
});
const store = obj(STORE_KIND, 'platform-secrets', { status: { conditions: [{ type: 'Ready', status: 'True' }] } });

describe('appTree before and after a first list', () => {
  it('a managed object of a kind not listed yet is unknown, not Missing; once listed and absent, Missing', () => {
    const { cm, index } = fakeCluster({ '/ConfigMap': false });
    const a = app([ref(CM_KIND, 'settings')]);
    const before = appTree(a, index).nodes.find((n) => n.ref.name === 'settings');
    expect(before).toMatchObject({ health: 'Unknown', sync: 'Unknown' });
    expect(before?.reason).toBe('not known yet: the console is still listing ConfigMap objects on c');

    (cm.clusters.get('c')?.informers.get('/ConfigMap') as unknown as { state: { synced: boolean } }).state.synced =
      true;
    expect(appTree(a, index).nodes.find((n) => n.ref.name === 'settings')).toMatchObject({
      health: 'Missing',
      sync: 'Missing',
    });
  });

  it('an ExternalSecret’s store not listed yet is "not known yet", listed and absent "not found", present "Ready"', () => {
    const { cm, index } = fakeCluster({
      'external-secrets.io/ExternalSecret': true,
      'external-secrets.io/SecretStore': false,
    });
    cm.emit('object', 'c', { type: 'add', kind: ES_KIND, obj: es });
    const a = app([ref(ES_KIND, 'api-key')]);
    const secret = () => appTree(a, index).nodes.find((n) => n.ref.kind === 'Secret');
    expect(secret()?.reason).toContain(
      'from SecretStore platform-secrets (not known yet: the console is still listing',
    );

    (
      cm.clusters.get('c')?.informers.get('external-secrets.io/SecretStore') as unknown as {
        state: { synced: boolean };
      }
    ).state.synced = true;
    expect(secret()?.reason).toContain('from SecretStore platform-secrets (not found)');

    cm.emit('object', 'c', { type: 'add', kind: STORE_KIND, obj: store });
    expect(secret()?.reason).toMatch(
      /^written by external-secrets: SecretSynced; from SecretStore platform-secrets \(Ready\)/,
    );
  });
});

describe('AppTreeMemo (issue 27: the windows of one large tree share one build)', () => {
  it('answers from the build while nothing changed; builds again on an object event, a new app, or after the TTL', () => {
    const { cm, index } = fakeCluster({ '/ConfigMap': true });
    cm.emit('object', 'c', { type: 'add', kind: CM_KIND, obj: obj(CM_KIND, 'settings') });
    let now = 1000;
    const memo = new AppTreeMemo(index, 4, 2000, () => now);
    const a = app([ref(CM_KIND, 'settings')]);
    const first = memo.tree(a);
    expect(first.nodes.map((n) => n.ref.name)).toEqual(['settings']);
    expect(memo.tree(a)).toBe(first);
    // an object event: the next answer is built again and sees it
    cm.emit('object', 'c', { type: 'delete', kind: CM_KIND, obj: obj(CM_KIND, 'settings') });
    const afterDelete = memo.tree(a);
    expect(afterDelete).not.toBe(first);
    expect(afterDelete.nodes[0]).toMatchObject({ health: 'Missing' });
    // a changed app (a new inventory) is a new object in the catalog
    const b = app([ref(CM_KIND, 'other')]);
    expect(memo.tree(b).nodes.map((n) => n.ref.name)).toEqual(['other']);
    // a kind's first list can end without an event: the build is kept at most the TTL
    const kept = memo.tree(b);
    now += 2001;
    expect(memo.tree(b)).not.toBe(kept);
  });
});
