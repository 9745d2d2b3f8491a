// The catalog's "waiting on" line (issue 26): an app held by kustomize-controller for a dependency names it and the
// dependency's reason; a change of the dependency's Ready reaches the dependent at once (in either order of
// arrival), a health-only change of the dependency does not re-read its dependents, and a deleted dependency is
// unknown, never Ready.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EvidenceRecorder } from '../evidence/recorder.ts';
import { SqliteEvidenceStore } from '../evidence/sqlite-store.ts';
import { ClusterManager } from '../kube/cluster-manager.ts';
import type { KubeObject } from '../kube/informer.ts';
import { KINDS } from '../kube/kinds.ts';
import { AppCatalog } from './catalog.ts';

const dir = mkdtempSync(join(tmpdir(), 'catalog-deps-'));
const store = SqliteEvidenceStore.open(dir);
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ks = (name: string, ready: Record<string, string>, dependsOn?: string[], rv = '1'): KubeObject =>
  ({
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name, namespace: 'flux-system', resourceVersion: rv, labels: { env: 'dev' } },
    spec: {
      path: `./${name}`,
      sourceRef: { kind: 'GitRepository', name: 'repo' },
      ...(dependsOn ? { dependsOn: dependsOn.map((n) => ({ name: n })) } : {}),
    },
    status: { conditions: [{ type: 'Ready', ...ready }] },
  }) as KubeObject;

describe('AppCatalog: Flux dependencies', () => {
  it('says what an app waits on, kept current from the dependency', async () => {
    const clusters = new ClusterManager();
    clusters.clusters.set('c', { get: () => undefined, list: () => [] } as never);
    const catalog = new AppCatalog(clusters, new EvidenceRecorder(store, silent), 'env', silent);
    await catalog.start();
    const emit = (obj: KubeObject, type: 'update' | 'delete' = 'update') =>
      clusters.emit('object', 'c', { type, kind: KINDS.Kustomization, obj });
    const APPS = 'c/flux-system/kustomization/apps';
    const held = {
      status: 'False',
      reason: 'DependencyNotReady',
      message: "dependency 'flux-system/infra' is not ready",
    };
    // the dependent first: its dependency is not known yet
    emit(ks('apps', held, ['infra']));
    expect(catalog.get(APPS)?.waitingOn).toBe('waiting on infra (Ready unknown: NotFound)');
    emit(ks('infra', { status: 'False', reason: 'BuildFailed', message: 'kustomization path not found' }));
    expect(catalog.get(APPS)?.waitingOn).toBe('waiting on infra (not Ready: BuildFailed)');
    expect(catalog.get(APPS)?.health).toBe('Progressing');
    expect(catalog.dependentsOf('c/flux-system/kustomization/infra').map((a) => a.id)).toEqual([APPS]);
    expect(catalog.get(APPS)?.healthMessage).toBe('waiting on infra (not Ready: BuildFailed)');
    // infra Ready: until the app's own next reconcile Flux still says "not ready"; the console never repeats it
    // beside infra's Ready (issue 39), in the waiting line or the health line
    emit(ks('infra', { status: 'True', reason: 'ReconciliationSucceeded' }, undefined, '2'));
    expect(catalog.get(APPS)?.waitingOn).toMatch(/^its dependencies are Ready now; its controller moves on/);
    expect(catalog.get(APPS)?.healthMessage).toBe(catalog.get(APPS)?.waitingOn);
    emit(ks('apps', { status: 'True', reason: 'ReconciliationSucceeded' }, ['infra'], '2'));
    expect(catalog.get(APPS)?.waitingOn).toBeUndefined();
    // gone: unknown, never Ready
    emit(ks('apps', held, ['infra'], '3'));
    emit(ks('infra', { status: 'True' }, undefined, '3'), 'delete');
    expect(catalog.get(APPS)?.waitingOn).toBe('waiting on infra (Ready unknown: NotFound)');
  });
});

describe('AppCatalog: its version (the list answer and the stream hello carry it)', () => {
  it('moves with every app upsert and delete it emits, not with an unchanged object', async () => {
    const clusters = new ClusterManager();
    clusters.clusters.set('c', { get: () => undefined, list: () => [] } as never);
    const catalog = new AppCatalog(clusters, new EvidenceRecorder(store, silent), 'env', silent);
    await catalog.start();
    const other = new AppCatalog(clusters, new EvidenceRecorder(store, silent), 'env', silent);
    const emit = (obj: KubeObject, type: 'update' | 'delete' = 'update') =>
      clusters.emit('object', 'c', { type, kind: KINDS.Kustomization, obj });
    const v0 = catalog.version();
    expect(v0).toMatch(/^[0-9a-f]{12}:\d+$/);
    expect(other.version().split(':')[0]).not.toBe(v0.split(':')[0]); // another process: another boot id
    emit(ks('solo', { status: 'True', reason: 'ReconciliationSucceeded' }));
    const v1 = catalog.version();
    expect(Number(v1.split(':')[1])).toBe(Number(v0.split(':')[1]) + 1);
    emit(ks('solo', { status: 'True', reason: 'ReconciliationSucceeded' }));
    expect(catalog.version()).toBe(v1); // the same app again: nothing emitted, nothing to miss
    emit(ks('solo', {}), 'delete');
    expect(Number(catalog.version().split(':')[1])).toBe(Number(v1.split(':')[1]) + 1);
  });
});
