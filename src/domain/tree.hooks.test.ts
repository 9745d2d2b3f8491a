// Argo CD hooks in the resource tree (issue 40 item 13): a hook gets its last run and no sync verdict, and is in no
// sync count; what it owns keeps its own rows; without a hookOf (Flux) an annotated Job is an ordinary object.
import { describe, expect, it } from 'vitest';
import { argoHookOf } from './argo-hooks.ts';
import { argoSyncOperationOf } from './argo-sync.ts';
import { migrateTask } from '../../test/support/argo-hooks.ts';
import type { ObjectRef } from './refs.ts';
import { buildTree, type TreeSources } from './tree.ts';

const ref = (group: string, kind: string, name: string): ObjectRef => ({
  cluster: 'nonprod',
  group,
  version: 'v1',
  kind,
  namespace: 'staging',
  name,
});
const hookJob = (name: string, hook: string) => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name, namespace: 'staging', uid: `uid-${name}`, annotations: { 'argocd.argoproj.io/hook': hook } },
  status: {
    succeeded: 1,
    completionTime: '2026-12-06T21:13:34Z',
    conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: '2026-12-06T21:13:34Z' }],
  },
});
const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'ledger-db-migrate-x',
    namespace: 'staging',
    uid: 'uid-pod',
    ownerReferences: [{ uid: 'uid-ledger-db-migrate' }],
  },
  status: { phase: 'Succeeded' },
};
const cm = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'ledger-config', namespace: 'staging', uid: 'uid-cm' },
};

const op = argoSyncOperationOf({
  status: {
    operationState: {
      phase: 'Succeeded',
      finishedAt: '2026-12-06T21:13:46Z',
      syncResult: {
        resources: [
          migrateTask('Succeeded', { message: 'Reached expected number of succeeded pods' }),
          {
            group: '',
            kind: 'ConfigMap',
            namespace: 'staging',
            name: 'ledger-config',
            syncPhase: 'Sync',
            hookPhase: 'Succeeded',
          },
        ],
      },
    },
  },
});

const inventory = [
  ref('', 'ConfigMap', 'ledger-config'),
  ref('batch', 'Job', 'ledger-db-migrate'),
  ref('batch', 'Job', 'ledger-smoke-test'),
];
const live = new Map<string, Record<string, unknown>>([
  ['ledger-config', cm],
  ['ledger-db-migrate', hookJob('ledger-db-migrate', 'PreSync')],
]);
const sources = (withHooks: boolean): TreeSources => ({
  get: (r) => live.get(r.name),
  childrenOf: (uid) => (uid === 'uid-ledger-db-migrate' ? [pod] : []),
  extraneous: () => [],
  ...(withHooks
    ? {
        hookOf: (r: ObjectRef, o: Record<string, unknown> | undefined) =>
          argoHookOf(r, o ? { live: o } : {}, op, r.name === 'ledger-smoke-test'),
      }
    : {}),
});

describe('buildTree: Argo CD hooks', () => {
  it('a live hook Job has its last run as Argo CD recorded it, and no sync; its Pod is its child', () => {
    const { nodes, summary } = buildTree('nonprod', inventory, sources(true));
    const migrate = nodes.find((n) => n.ref.name === 'ledger-db-migrate');
    expect(migrate?.sync).toBeUndefined();
    expect(migrate?.hook).toEqual({
      type: 'PreSync',
      phase: 'Succeeded',
      from: 'argocd',
      message: 'Reached expected number of succeeded pods',
      finishedAt: '2026-12-06T21:13:34Z',
    });
    expect(migrate?.health).toBe('Healthy');
    expect(nodes.find((n) => n.ref.kind === 'Pod')).toMatchObject({ parentId: migrate?.id, depth: 1 });
    expect(nodes.find((n) => n.ref.kind === 'ConfigMap')).toMatchObject({ sync: 'Synced' });
    expect(nodes.find((n) => n.ref.kind === 'ConfigMap')?.hook).toBeUndefined();
    // the sync summary counts the ConfigMap only: a hook is neither Synced nor Missing
    expect(summary.sync).toEqual({ Synced: 1, OutOfSync: 0, Missing: 0, Extraneous: 0, Unknown: 0 });
  });

  it('a hook that is not live (its delete policy removed it) is no Missing object and leaves the app health alone', () => {
    const { nodes, summary } = buildTree('nonprod', inventory, sources(true));
    const smoke = nodes.find((n) => n.ref.name === 'ledger-smoke-test');
    expect(smoke?.sync).toBeUndefined();
    expect(smoke?.hook).toEqual({ type: 'unknown' });
    expect(smoke?.reason).toMatch(/^not live: a hook/);
    expect(summary.health).toBe('Healthy');
  });

  it('without hookOf (a Flux app: Flux has no hooks) the same Job is an ordinary Synced object', () => {
    const { nodes, summary } = buildTree('nonprod', inventory.slice(0, 2), sources(false));
    const migrate = nodes.find((n) => n.ref.name === 'ledger-db-migrate');
    expect(migrate?.sync).toBe('Synced');
    expect(migrate?.hook).toBeUndefined();
    expect(summary.sync.Synced).toBe(2);
  });
});
