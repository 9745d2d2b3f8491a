import { describe, expect, it } from 'vitest';
import type { App } from '../../domain/app.ts';
import type { EvidenceInput } from '../../domain/evidence.ts';
import {
  deployment,
  deploymentApply,
  replicasUpdate,
  T_APPLY,
  T_WRITE,
} from '../../domain/fixtures/delivery-objects.ts';
import type { EvidenceRecorder } from '../evidence/recorder.ts';
import type { KubeObject } from '../kube/informer.ts';
import { DriftTracker } from './tracker.ts';

const app = {
  id: 'nonprod/flux-system/kustomization/digital-human-dev',
  cluster: 'nonprod',
  controller: 'flux',
  kind: 'Kustomization',
  namespace: 'flux-system',
  name: 'digital-human-dev',
  env: 'dev',
} as App;

const apply = (time: string, replicas: boolean) => ({
  manager: 'kustomize-controller',
  operation: 'Apply',
  time,
  fieldsType: 'FieldsV1',
  fieldsV1: {
    'f:metadata': {
      'f:labels': { 'f:kustomize.toolkit.fluxcd.io/name': {}, 'f:kustomize.toolkit.fluxcd.io/namespace': {} },
    },
    'f:spec': replicas ? { 'f:replicas': {} } : {},
  },
});
const byHand = (manager: string, time: string) => ({
  manager,
  operation: 'Update',
  time,
  fieldsType: 'FieldsV1',
  fieldsV1: { 'f:spec': { 'f:replicas': {} } },
});
const deploy = (replicas: number, rv: number, mf: unknown[]): KubeObject =>
  ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'tts-gateway',
      namespace: 'dev',
      resourceVersion: String(rv),
      labels: {
        'kustomize.toolkit.fluxcd.io/name': 'digital-human-dev',
        'kustomize.toolkit.fluxcd.io/namespace': 'flux-system',
      },
      managedFields: mf,
    },
    spec: { replicas },
  }) as unknown as KubeObject;

function tracker() {
  const records: EvidenceInput[] = [];
  const recorder = { observe: (e: EvidenceInput) => records.push(e) } as unknown as EvidenceRecorder;
  let now = Date.parse('2026-12-01T10:00:00Z');
  const t = new DriftTracker({ recorder, apps: () => [app], now: () => now });
  return { t, records, tick: (ms: number) => (now += ms) };
}

describe('DriftTracker', () => {
  it('one episode from a hand edit to the revert, with manager, fields, writes and duration', () => {
    const { t, records, tick } = tracker();
    const v1 = deploy(1, 1, [apply('2026-12-01T09:50:00Z', true)]);
    const v2 = deploy(3, 2, [apply('2026-12-01T09:50:00Z', false), byHand('kubectl-scale', '2026-12-01T10:00:00Z')]);
    t.onObject('nonprod', undefined, v1);
    expect(t.forApp(app.id)).toBeUndefined();
    t.onObject('nonprod', v1, v2);
    const d = t.forApp(app.id);
    expect(d).toMatchObject({ kind: 'person', managers: ['kubectl-scale'], objectCount: 1 });
    expect(d?.objects[0]?.fields).toEqual([{ path: 'spec.replicas', from: 1, to: 3 }]);
    expect(d?.objects[0]?.afterApplyMs).toBe(10 * 60_000);
    // 49 more writes in 5 s: coalesced into the same episode, counted
    let prev = v2;
    for (let i = 0; i < 49; i++) {
      tick(100);
      const next = deploy(4 + (i % 3), 3 + i, [
        apply('2026-12-01T09:50:00Z', false),
        byHand('kubectl-scale', new Date(Date.parse('2026-12-01T10:00:00Z') + (i + 1) * 100).toISOString()),
      ]);
      t.onObject('nonprod', prev, next);
      prev = next;
    }
    expect(t.forApp(app.id)?.objects[0]?.writes).toBe(50);
    expect(records.map((r) => r.type)).toEqual(['drift.detected']);
    // the controller applies Git again: the episode ends, reverted
    tick(10_000);
    t.onObject('nonprod', prev, deploy(1, 100, [apply('2026-12-01T10:00:15Z', true)]));
    expect(t.forApp(app.id)).toBeUndefined();
    expect(records.map((r) => r.type)).toEqual(['drift.detected', 'drift.reverted']);
    expect(records[1]?.data).toMatchObject({ writes: 50, managers: ['kubectl-scale'], durationMs: 14_900 });
    expect(records[1]?.actor).toBe('kustomize-controller');
    expect(records[1]?.data.fields).toEqual([{ path: 'spec.replicas', from: 1, to: 4 }]);
  });

  it('adopted when Git takes the live value; objects of no app are ignored', () => {
    const { t, records } = tracker();
    const v1 = deploy(1, 1, [apply('2026-12-01T09:50:00Z', true)]);
    const v2 = deploy(3, 2, [apply('2026-12-01T09:50:00Z', false), byHand('kubectl-edit', '2026-12-01T10:00:00Z')]);
    t.onObject('nonprod', v1, v2);
    t.onObject('nonprod', v2, deploy(3, 3, [apply('2026-12-01T10:01:00Z', true)]));
    expect(records.map((r) => r.type)).toEqual(['drift.detected', 'drift.adopted']);
    const stray = deploy(1, 1, [apply('2026-12-01T09:50:00Z', true)]);
    (stray.metadata as { labels: Record<string, string> }).labels = {};
    t.onObject('nonprod', stray, { ...stray, spec: { replicas: 9 } } as KubeObject);
    expect(records).toHaveLength(2);
  });

  it('a storm within one second (managedFields times unchanged) is one episode, every write counted', () => {
    const { t, records, tick } = tracker();
    const T = '2026-12-01T10:00:00Z';
    const v1 = deploy(1, 1, [apply('2026-12-01T09:50:00Z', true)]);
    let prev = v1;
    for (let i = 0; i < 50; i++) {
      tick(20);
      const next = deploy(2 + i, 2 + i, [apply('2026-12-01T09:50:00Z', false), byHand('kubectl-edit', T)]);
      t.onObject('nonprod', prev, next);
      prev = next;
    }
    const ep = t.forId('nonprod/apps/Deployment/dev/tts-gateway');
    expect(ep).toMatchObject({
      writes: 50,
      managers: ['kubectl-edit'],
      fields: [{ path: 'spec.replicas', from: 1, to: 51 }],
    });
    expect(records.map((r) => r.type)).toEqual(['drift.detected']);
    // status writes and the object's own controller in between are no writes of the episode
    const status = { ...prev, status: { replicas: 51 } } as KubeObject;
    t.onObject('nonprod', prev, status);
    expect(t.forId('nonprod/apps/Deployment/dev/tts-gateway')?.writes).toBe(50);
  });

  it('turning detection off drops the open episodes and ignores updates', () => {
    const { t, records } = tracker();
    const v1 = deploy(1, 1, [apply('2026-12-01T09:50:00Z', true)]);
    const v2 = deploy(3, 2, [apply('2026-12-01T09:50:00Z', false), byHand('kubectl-scale', '2026-12-01T10:00:00Z')]);
    t.onObject('nonprod', v1, v2);
    expect(t.openCount).toBe(1);
    t.setEnabled(false);
    expect(t.forApp(app.id)).toBeUndefined();
    t.onObject('nonprod', v1, v2);
    expect(t.openCount).toBe(0);
    expect(records).toHaveLength(1);
  });

  it("a field put back by hand stays Git's: another controller writing it later is still a conflict", () => {
    const { t, records } = tracker();
    const v1 = deploy(1, 1, [apply('2026-12-01T09:50:00Z', true)]);
    const v2 = deploy(3, 2, [apply('2026-12-01T09:50:00Z', false), byHand('kubectl', '2026-12-01T10:00:00Z')]);
    const v3 = deploy(1, 3, [apply('2026-12-01T09:50:00Z', false), byHand('kubectl', '2026-12-01T10:00:05Z')]);
    t.onObject('nonprod', v1, v2);
    t.onObject('nonprod', v2, v3);
    expect(records.map((r) => r.type)).toEqual(['drift.detected', 'drift.reverted']);
    expect(records[1]?.actor).toBe('kubectl');
    // the controller does not own replicas any more (the value is Git's, so it applies nothing)
    const v4 = deploy(2, 4, [
      apply('2026-12-01T09:50:00Z', false),
      byHand('kube-controller-manager', '2026-12-01T10:01:00Z'),
    ]);
    t.onObject('nonprod', v3, v4);
    expect(t.forApp(app.id)?.objects[0]).toMatchObject({
      kind: 'conflict',
      managers: ['kube-controller-manager'],
      fields: [{ path: 'spec.replicas', from: 1, to: 2 }],
    });
  });

  it('a write to an object of an app the catalog does not know yet is looked at when the app appears, not dropped', () => {
    const records: EvidenceInput[] = [];
    const recorder = { observe: (e: EvidenceInput) => records.push(e) } as unknown as EvidenceRecorder;
    const apps: App[] = [];
    const t = new DriftTracker({ recorder, apps: () => apps });
    const v1 = deploy(1, 1, [apply('2026-12-01T09:50:00Z', true)]);
    const v2 = deploy(3, 2, [apply('2026-12-01T09:50:00Z', false), byHand('=HYPERLINK("x")', '2026-12-01T10:00:00Z')]);
    t.onObject('nonprod', undefined, v1);
    t.onObject('nonprod', v1, v2); // the index was built a moment ago, without the app
    expect(records).toEqual([]);
    apps.push(app);
    t.appsChanged({ type: 'upsert', app });
    expect(records.map((r) => [r.type, r.actor, r.app])).toEqual([['drift.detected', '=HYPERLINK("x")', app.id]]);
    expect(t.forApp(app.id)?.objects[0]?.fields).toEqual([{ path: 'spec.replicas', from: 1, to: 3 }]);
    // the same app again (a status change): nothing is replayed twice
    t.appsChanged({ type: 'upsert', app: { ...app, health: 'Healthy' } as App });
    expect(records).toHaveLength(1);
  });
});

describe('DriftTracker next to progressive-delivery controllers', () => {
  const podinfoApp = { ...app, id: 'nonprod/flux-system/kustomization/podinfo', name: 'podinfo' } as App;
  const argoApp = {
    ...app,
    id: 'nonprod/argocd/application/podinfo',
    controller: 'argocd',
    kind: 'Application',
    namespace: 'argocd',
    name: 'podinfo',
  } as App;
  const make = () => {
    const records: EvidenceInput[] = [];
    const recorder = { observe: (e: EvidenceInput) => records.push(e) } as unknown as EvidenceRecorder;
    const t = new DriftTracker({ recorder, apps: () => [podinfoApp, argoApp], now: () => Date.parse(T_WRITE) });
    return { t, records };
  };
  const v1 = deployment(2, [deploymentApply()]) as KubeObject;

  it('Flagger scaling its target to 0 records no drift.detected; kubectl-scale of the same field does', () => {
    const { t, records } = make();
    t.onObject('nonprod', undefined, v1);
    const flagger = deployment(0, [deploymentApply(T_APPLY, ['replicas']), replicasUpdate('flagger')]) as KubeObject;
    t.onObject('nonprod', v1, flagger);
    expect(records).toEqual([]);
    expect(t.forApp(podinfoApp.id)).toBeUndefined();
    const byHand = deployment(0, [
      deploymentApply(T_APPLY, ['replicas']),
      replicasUpdate('kubectl-scale'),
    ]) as KubeObject;
    t.onObject('nonprod', v1, byHand);
    expect(records.map((r) => [r.type, r.actor, r.app])).toEqual([['drift.detected', 'kubectl-scale', podinfoApp.id]]);
  });

  it("Flagger's generated <target>-primary (a Canary controls it) is never the app's drift, whatever it copied", () => {
    const { t, records } = make();
    // createPrimaryDeployment copies the target's annotations but Flux's: Argo CD's tracking id comes along
    const primary = (replicas: number, mf: unknown[], owned: boolean): KubeObject => {
      const o = deployment(replicas, mf);
      const md = o.metadata as Record<string, unknown>;
      md.name = 'podinfo-primary';
      md.labels = { 'app.kubernetes.io/name': 'podinfo-primary' };
      md.annotations = { 'argocd.argoproj.io/tracking-id': 'podinfo:apps/Deployment:dev/podinfo' };
      if (owned)
        md.ownerReferences = [
          { apiVersion: 'flagger.app/v1beta1', kind: 'Canary', name: 'podinfo', uid: 'c1', controller: true },
        ];
      return o as KubeObject;
    };
    // Flagger created it (a create records an Update entry), then someone edited it by hand
    const created = [replicasUpdate('flagger', T_APPLY)];
    const edited = [...created, replicasUpdate('kubectl-edit')];
    t.onObject('nonprod', primary(2, created, true), primary(5, edited, true));
    expect(records).toEqual([]);
    expect(t.openCount).toBe(0);
    // without the Canary's ownerReference the same object would be the Argo CD app's, and the edit its drift
    t.onObject('nonprod', primary(2, created, false), primary(5, edited, false));
    expect(records.map((r) => [r.type, r.app])).toEqual([['drift.detected', argoApp.id]]);
  });
});
