// The catalog applies the console's environment mapping to every app, and records an app whose environment is
// flagged once, when first seen (again only after it was clear in between), in the environment the console chose.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseEnvMapping } from '../../domain/environments.ts';
import { EvidenceRecorder } from '../evidence/recorder.ts';
import { SqliteEvidenceStore } from '../evidence/sqlite-store.ts';
import { ClusterManager } from '../kube/cluster-manager.ts';
import type { KubeObject } from '../kube/informer.ts';
import { KINDS } from '../kube/kinds.ts';
import { AppCatalog } from './catalog.ts';

const dir = mkdtempSync(join(tmpdir(), 'catalog-env-'));
const store = SqliteEvidenceStore.open(dir);
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A cluster manager with one cluster whose informers are the test's emits. */
function fakeClusters(): ClusterManager {
  const cm = new ClusterManager();
  cm.clusters.set('prod', { get: () => undefined, list: () => [] } as never);
  return cm;
}

const application = (label: string, rv: string): KubeObject =>
  ({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: 'edge-gateway-prod', namespace: 'argocd', labels: { env: label }, resourceVersion: rv },
    spec: { source: { repoURL: 'https://git.example/x.git', path: 'edge' }, destination: { namespace: 'prod' } },
    status: { resources: [{ group: '', version: 'v1', kind: 'Service', namespace: 'prod', name: 'edge' }] },
  }) as KubeObject;

describe('AppCatalog with an environment mapping', () => {
  it('decides by the mapping and records a label that disagrees once per appearance', async () => {
    const recorder = new EvidenceRecorder(store, silent);
    const clusters = fakeClusters();
    const rules = parseEnvMapping('nonprod/dev=dev,prod/prod=prod');
    const catalog = new AppCatalog(clusters, recorder, { label: 'env', rules }, silent);
    await catalog.start();
    const emit = (obj: KubeObject) => clusters.emit('object', 'prod', { type: 'update', kind: KINDS.Application, obj });
    const id = 'prod/argocd/application/edge-gateway-prod';
    const conflicts = async () =>
      (await store.list({ type: ['app.env-conflict'], order: 'asc' })).filter((e) => e.app === id);

    emit(application('dev', '1'));
    expect(catalog.get(id)).toMatchObject({
      env: 'prod',
      envSource: 'mapping',
      envConflict: "label says dev; the console's mapping says prod",
    });
    emit(application('dev', '2')); // the same conflict seen again: no second record
    await catalog.flush();
    expect(await conflicts()).toMatchObject([
      {
        type: 'app.env-conflict',
        actor: 'console',
        cluster: 'prod',
        env: 'prod',
        data: {
          conflict: "label says dev; the console's mapping says prod",
          envSource: 'mapping',
          label: { name: 'env', value: 'dev' },
        },
      },
    ]);

    emit(application('prod', '3')); // the label put right: no conflict, nothing recorded
    expect(catalog.get(id)?.envConflict).toBeUndefined();
    emit(application('dev', '4')); // and wrong again: recorded again
    await catalog.flush();
    expect(await conflicts()).toHaveLength(2);

    // a console started later does not record a conflict the evidence already holds
    const clusters2 = fakeClusters();
    const again = new AppCatalog(clusters2, recorder, { label: 'env', rules }, silent);
    await again.start();
    clusters2.emit('object', 'prod', { type: 'update', kind: KINDS.Application, obj: application('dev', '5') });
    await again.flush();
    expect(await conflicts()).toHaveLength(2);
    expect(catalog.envOfNamespace('prod', 'prod')).toBe('prod');
    expect(catalog.envOfNamespace('prod', 'team-x')).toBe('unknown');
  });

  it('without a mapping the label decides, as before, and nothing is flagged', async () => {
    const recorder = new EvidenceRecorder(store, silent);
    const clusters = fakeClusters();
    const catalog = new AppCatalog(clusters, recorder, 'env', silent);
    await catalog.start();
    clusters.emit('object', 'prod', { type: 'update', kind: KINDS.Application, obj: application('qa', '1') });
    expect(catalog.get('prod/argocd/application/edge-gateway-prod')).toMatchObject({ env: 'qa', envSource: 'label' });
    expect(catalog.get('prod/argocd/application/edge-gateway-prod')?.envConflict).toBeUndefined();
    expect(catalog.envOfNamespace('prod', 'prod')).toBeUndefined();
  });
});
