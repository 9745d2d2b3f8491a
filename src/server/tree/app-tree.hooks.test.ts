// The tree of an Argo CD app from the object index and its Application (issue 40 item 13): the Jobs the Application
// lists as hooks are hooks with the phase its last sync recorded, never Synced; a Flux app's annotated Job stays an
// ordinary object; the memo builds again when the Application (its operation state) changes.
import { describe, expect, it } from 'vitest';
import type { App } from '../../domain/app.ts';
import type { ObjectRef } from '../../domain/refs.ts';
import { ClusterManager, type ManagedCluster } from '../kube/cluster-manager.ts';
import type { Informer, KubeObject, ResourceKind } from '../kube/informer.ts';
import { ObjectIndex } from '../kube/object-index.ts';
import { migrateTask } from '../../../test/support/argo-hooks.ts';
import { AppTreeMemo, appTree } from './app-tree.ts';

const JOB: ResourceKind = { group: 'batch', version: 'v1', kind: 'Job', plural: 'jobs', namespaced: true };

function fakeCluster(): { cm: ClusterManager; index: ObjectIndex } {
  const cm = new ClusterManager();
  const informers = new Map([
    ['batch/Job', { state: { synced: true, absent: false, relists: 0 } } as unknown as Informer],
  ]);
  cm.clusters.set('c', { informers } as unknown as ManagedCluster);
  return { cm, index: new ObjectIndex(cm) };
}
const job = (name: string, hook: string): KubeObject =>
  ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: 'staging', uid: `uid-${name}`, annotations: { 'argocd.argoproj.io/hook': hook } },
    status: { conditions: [{ type: 'Complete', status: 'True' }], completionTime: '2026-12-06T21:13:34Z' },
  }) as KubeObject;
const ref = (name: string): ObjectRef => ({
  cluster: 'c',
  group: 'batch',
  version: 'v1',
  kind: 'Job',
  namespace: 'staging',
  name,
});

const app = (controller: 'argocd' | 'flux'): App => ({
  id: `c/argocd/application/ledger-${controller}`,
  cluster: 'c',
  controller,
  kind: controller === 'argocd' ? 'Application' : 'Kustomization',
  namespace: 'argocd',
  name: `ledger-${controller}`,
  env: 'staging',
  source: {},
  automation: { autoSync: true, selfHeal: true, prune: true, suspended: false },
  sync: 'Synced',
  health: 'Healthy',
  healthMessage: '',
  conditions: [],
  inventory: [ref('ledger-db-migrate')],
  warnings: [],
});
const application = (hookPhase: string) => ({
  status: {
    resources: [{ group: 'batch', kind: 'Job', namespace: 'staging', name: 'ledger-db-migrate', hook: true }],
    operationState: {
      phase: hookPhase === 'Running' ? 'Running' : 'Succeeded',
      syncResult: {
        resources: [migrateTask(hookPhase)],
      },
    },
  },
});

describe('appTree: Argo CD hooks', () => {
  it('an Argo CD app’s hook Job is a hook with the phase Argo CD recorded, no sync, in no sync count', () => {
    const { cm, index } = fakeCluster();
    cm.emit('object', 'c', { type: 'add', kind: JOB, obj: job('ledger-db-migrate', 'PreSync') });
    const { nodes, summary } = appTree(app('argocd'), index, application('Succeeded'));
    expect(nodes[0]?.sync).toBeUndefined();
    expect(nodes[0]?.hook).toMatchObject({ type: 'PreSync', phase: 'Succeeded', from: 'argocd' });
    expect(summary.sync.Synced).toBe(0);
  });

  it('a Flux app’s Job with the same annotation is Synced (Flux has no hooks), Application or not', () => {
    const { cm, index } = fakeCluster();
    cm.emit('object', 'c', { type: 'add', kind: JOB, obj: job('ledger-db-migrate', 'PreSync') });
    const { nodes } = appTree(app('flux'), index, application('Succeeded'));
    expect(nodes[0]).toMatchObject({ sync: 'Synced' });
    expect(nodes[0]?.hook).toBeUndefined();
  });

  it('the memo builds again for a new Application object (a new operation state)', () => {
    const { cm, index } = fakeCluster();
    cm.emit('object', 'c', { type: 'add', kind: JOB, obj: job('ledger-db-migrate', 'PreSync') });
    const memo = new AppTreeMemo(index);
    const a = app('argocd');
    const running = application('Running');
    expect(memo.tree(a, running).nodes[0]?.hook?.phase).toBe('Running');
    expect(memo.tree(a, running)).toBe(memo.tree(a, running));
    expect(memo.tree(a, application('Succeeded')).nodes[0]?.hook?.phase).toBe('Succeeded');
  });
});
