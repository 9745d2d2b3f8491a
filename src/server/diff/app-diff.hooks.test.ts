// An Argo CD hook in the diff (issue 40 item 13): Argo CD compares none of a hook, so its row is a hook with its last
// run (from the Application's operation state), never "unchanged" nor a drift, and no dry-run is sent for it; a live
// hook no longer in Git is no extraneous object (Argo CD does not prune hooks). Under Flux the same annotated Job is
// compared like any object (Flux has no hooks).
import { describe, expect, it } from 'vitest';
import type { App } from '../../domain/app.ts';
import type { ClusterConnection } from '../kube/connection.ts';
import type { Discovery } from '../kube/discovery.ts';
import { migrateTask } from '../../../test/support/argo-hooks.ts';
import { diffApp, type DiffDeps } from './app-diff.ts';
import type { Obj, RenderTools } from './render.ts';

const app = (controller: 'argocd' | 'flux'): App => ({
  id:
    controller === 'argocd' ? 'nonprod/argocd/application/ledger-staging' : 'nonprod/flux-system/kustomization/ledger',
  cluster: 'nonprod',
  controller,
  kind: controller === 'argocd' ? 'Application' : 'Kustomization',
  namespace: controller === 'argocd' ? 'argocd' : 'flux-system',
  name: controller === 'argocd' ? 'ledger-staging' : 'ledger',
  env: 'staging',
  source: {},
  automation: { autoSync: true, selfHeal: true, prune: true, suspended: false },
  sync: 'Synced',
  health: 'Healthy',
  healthMessage: '',
  conditions: [],
  inventory: [],
  warnings: [],
});

const job = (name: string, hook: string, extra: Obj = {}): Obj => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name, namespace: 'staging', annotations: { 'argocd.argoproj.io/hook': hook } },
  spec: { backoffLimit: 0 },
  ...extra,
});
const failedStatus = {
  conditions: [
    { type: 'Failed', status: 'True', lastTransitionTime: '2026-12-06T21:14:02Z', message: 'BackoffLimitExceeded' },
  ],
};

const application: Obj = {
  spec: { destination: { namespace: 'staging' } },
  status: {
    resources: [{ group: 'batch', kind: 'Job', namespace: 'staging', name: 'ledger-db-migrate', hook: true }],
    operationState: {
      phase: 'Failed',
      message: 'one or more synchronization tasks completed unsuccessfully',
      finishedAt: '2026-12-06T21:14:05Z',
      syncResult: {
        resources: [
          migrateTask('Failed', { status: 'SyncFailed', message: 'Job has reached the specified backoff limit' }),
        ],
      },
    },
  },
};

function deps(a: App, rendered: Obj[], live: Map<string, Obj>, tracked: Obj[] = []) {
  const dryRuns: string[] = [];
  const d: DiffDeps = {
    // a dry-run answers the live object (applying Git changes nothing)
    conn: {
      json: async (_m: string, path: string) => {
        dryRuns.push(path);
        return live.get(path.split('?')[0]!.split('/').pop()!);
      },
    } as unknown as ClusterConnection,
    discovery: {
      path: async (_v: string, _k: string, _ns: string, name: string) => `/jobs/${name}`,
    } as unknown as Discovery,
    tools: {} as RenderTools,
    getLive: async (ref) => live.get(ref.name),
    appObject: a.controller === 'argocd' ? application : {},
    configMap: () => undefined,
    tracked: () => tracked,
    render: async () => ({ objects: rendered, renderer: 'test', revision: 'main@sha1:abc', renderHash: 'sha256:0' }),
  };
  return { d, dryRuns };
}

describe('the diff of an Argo CD hook', () => {
  it('a rendered hook is a hook row with Argo CD’s last run: not unchanged, not a drift, no dry-run', async () => {
    const live = new Map([['ledger-db-migrate', job('ledger-db-migrate', 'PreSync', { status: failedStatus })]]);
    const { d, dryRuns } = deps(app('argocd'), [job('ledger-db-migrate', 'PreSync')], live);
    const diff = await diffApp(app('argocd'), d);
    const row = diff.objects.find((o) => o.ref.name === 'ledger-db-migrate');
    expect(row).toMatchObject({ status: 'hook', mode: 'not-compared', changes: [] });
    expect(row?.hook).toEqual({
      type: 'PreSync',
      phase: 'Failed',
      from: 'argocd',
      message: 'Job has reached the specified backoff limit',
      finishedAt: '2026-12-06T21:14:02Z',
    });
    expect(row?.note).toMatch(/Argo CD compares none of its fields/);
    expect(row?.liveYaml).toContain('argocd.argoproj.io/hook: PreSync');
    expect(dryRuns).toEqual([]);
    expect(diff.counts).toMatchObject({ hook: 1, unchanged: 0, changed: 0 });
    expect(diff.summary).toBe('no differences: live matches Git');
  });

  it('a live hook no longer in Git is a hook, not extraneous, and no prune candidate', async () => {
    const gone = job('ledger-smoke-test', 'PostSync', {
      metadata: {
        name: 'ledger-smoke-test',
        namespace: 'staging',
        annotations: { 'argocd.argoproj.io/hook': 'PostSync' },
      },
    });
    const { d } = deps(app('argocd'), [], new Map(), [gone]);
    const diff = await diffApp(app('argocd'), d);
    expect(diff.objects.map((o) => [o.ref.name, o.status, o.hook?.type])).toEqual([
      ['ledger-smoke-test', 'hook', 'PostSync'],
    ]);
    expect(diff.counts.extraneous).toBe(0);
    expect(diff.prune?.deletions).toBe(0);
  });

  it('under Flux (no hooks) the same annotated Job is compared as any object', async () => {
    const live = new Map([['ledger-db-migrate', job('ledger-db-migrate', 'PreSync')]]);
    const { d, dryRuns } = deps(app('flux'), [job('ledger-db-migrate', 'PreSync')], live);
    const diff = await diffApp(app('flux'), d);
    const row = diff.objects.find((o) => o.ref.name === 'ledger-db-migrate');
    expect(row?.status).not.toBe('hook');
    expect(row?.hook).toBeUndefined();
    expect(dryRuns).toHaveLength(1);
  });
});
