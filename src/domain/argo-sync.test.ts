import { describe, expect, it } from 'vitest';
import { argoSyncFailing, argoSyncOperationOf, argoSyncSteps, argoSyncWhy, syncWaveOf } from './argo-sync.ts';

/** An Application's status as Argo CD 3.6 writes it during and after a sync (shapes from gitops-engine). */
const app = (phase: string, message: string, resources: unknown[]) => ({
  status: {
    operationState: {
      phase,
      message,
      startedAt: '2026-12-01T10:00:00Z',
      ...(phase === 'Running' ? {} : { finishedAt: '2026-12-01T10:01:00Z' }),
      operation: { sync: { revision: 'abc123' }, initiatedBy: { automated: true } },
      syncResult: { revision: 'abc123', resources },
    },
  },
});

const waves: Record<string, number> = { 'ConfigMap/ledger-config': 0, 'Deployment/ledger': 1, 'Service/ledger': 1 };
const waveOf = (t: { kind: string; name: string }) => waves[`${t.kind}/${t.name}`];

describe('Argo CD sync progress', () => {
  it('a sync waiting on wave 1: names the wave, the object and its health', () => {
    const op = argoSyncOperationOf(
      app('Running', 'waiting for healthy state of apps/Deployment/ledger and 1 more resources', [
        {
          kind: 'Job',
          name: 'ledger-migrate',
          namespace: 'staging',
          group: 'batch',
          syncPhase: 'PreSync',
          hookType: 'PreSync',
          hookPhase: 'Succeeded',
          status: 'Synced',
          message: 'Reached expected number of succeeded pods',
        },
        {
          kind: 'ConfigMap',
          name: 'ledger-config',
          namespace: 'staging',
          group: '',
          syncPhase: 'Sync',
          status: 'Synced',
          hookPhase: 'Succeeded',
        },
        {
          kind: 'Deployment',
          name: 'ledger',
          namespace: 'staging',
          group: 'apps',
          syncPhase: 'Sync',
          status: 'Synced',
          hookPhase: 'Running',
        },
        {
          kind: 'Service',
          name: 'ledger',
          namespace: 'staging',
          group: '',
          syncPhase: 'Sync',
          status: 'Synced',
          hookPhase: 'Running',
        },
      ]),
      waveOf,
    );
    expect(op?.initiatedBy).toBe('automated sync');
    expect(
      argoSyncWhy(op, (t) =>
        t.kind === 'Deployment' ? { status: 'Degraded', message: '0/2 ready: CrashLoopBackOff' } : undefined,
      ),
    ).toBe(
      'waiting on wave 1: Deployment ledger not healthy (Degraded: 0/2 ready: CrashLoopBackOff) (and 1 more resources)',
    );
    // Argo CD may name the wave's healthy Service first: the Deployment that holds the wave is named instead
    const serviceFirst = argoSyncOperationOf(
      app('Running', 'waiting for healthy state of /Service/ledger and 1 more resources', op!.tasks as never),
      waveOf,
    );
    const health = (t: { kind: string }) =>
      t.kind === 'Deployment' ? { status: 'Progressing', message: '0/2 ready: Unschedulable' } : { status: 'Healthy' };
    expect(argoSyncWhy(serviceFirst, health)).toBe(
      'waiting on wave 1: Deployment ledger not healthy (Progressing: 0/2 ready: Unschedulable) (and 1 more resources)',
    );
    // all of the wave healthy by the console's look: Argo CD has not looked again yet
    expect(argoSyncWhy(serviceFirst, () => ({ status: 'Healthy' }))).toBe(
      'waiting on wave 1: Argo CD has not seen Service ledger healthy yet (and 1 more resources)',
    );
    // the steps in the order they run
    expect(argoSyncSteps(op!).map((s) => [s.phase, s.wave, s.tasks.map((t) => t.name)])).toEqual([
      ['PreSync', undefined, ['ledger-migrate']],
      ['Sync', 0, ['ledger-config']],
      ['Sync', 1, ['ledger', 'ledger']],
    ]);
  });

  it('a PreSync hook that failed: its name and message', () => {
    const op = argoSyncOperationOf(
      app('Failed', 'one or more synchronization tasks completed unsuccessfully', [
        {
          kind: 'Job',
          name: 'ledger-migrate',
          group: 'batch',
          syncPhase: 'PreSync',
          hookType: 'PreSync',
          hookPhase: 'Failed',
          status: 'Synced',
          message: 'Job has reached the specified backoff limit',
        },
      ]),
    );
    expect(argoSyncWhy(op)).toBe('PreSync hook ledger-migrate failed: Job has reached the specified backoff limit');
  });

  it('a running hook, an object that failed to apply, and a succeeded sync', () => {
    const hook = argoSyncOperationOf(
      app('Running', 'waiting for completion of hook batch/Job/ledger-smoke', [
        {
          kind: 'Job',
          name: 'ledger-smoke',
          group: 'batch',
          syncPhase: 'PostSync',
          hookType: 'PostSync',
          hookPhase: 'Running',
        },
      ]),
    );
    expect(argoSyncWhy(hook)).toBe('waiting on the PostSync hook Job ledger-smoke to complete');
    const bad = argoSyncOperationOf(
      app('Failed', 'one or more objects failed to apply', [
        {
          kind: 'Deployment',
          name: 'ledger',
          group: 'apps',
          syncPhase: 'Sync',
          status: 'SyncFailed',
          message: 'admission webhook denied',
        },
      ]),
      waveOf,
    );
    expect(argoSyncWhy(bad)).toBe('Deployment ledger failed to sync (wave 1): admission webhook denied');
    expect(
      argoSyncWhy(argoSyncOperationOf(app('Succeeded', 'successfully synced (all tasks run)', []))),
    ).toBeUndefined();
    expect(argoSyncOperationOf({ status: {} })).toBeUndefined();
  });

  it('Argo CD 3.x retrying after a failed hook: still Running, but failing, with the hook and the next attempt', () => {
    const op = argoSyncOperationOf(
      app(
        'Running',
        'one or more synchronization tasks completed unsuccessfully. Retrying attempt #2 at 2026-12-01T21:30:42Z.',
        [
          {
            kind: 'Job',
            name: 'ledger-db-migrate',
            group: 'batch',
            syncPhase: 'PreSync',
            hookType: 'PreSync',
            hookPhase: 'Failed',
            message: 'Job has reached the specified backoff limit',
          },
        ],
      ),
    );
    expect(argoSyncFailing(op)).toBe(true);
    expect(argoSyncWhy(op)).toBe(
      'PreSync hook ledger-db-migrate failed: Job has reached the specified backoff limit; Argo CD retries (attempt #2 at 2026-12-01T21:30:42Z)',
    );
    // between attempts the tasks are gone: not failing (yet), said as it is
    const between = argoSyncOperationOf(app('Running', 'Retrying operation. Attempt #2', []));
    expect(argoSyncFailing(between)).toBe(false);
    expect(argoSyncWhy(between)).toBe('the last attempt failed; Argo CD retries: Retrying operation. Attempt #2');
    // the old hook is deleted before it runs again; a prune waits for its confirmation
    expect(
      argoSyncWhy(argoSyncOperationOf(app('Running', 'waiting for deletion of hook batch/Job/ledger-db-migrate', []))),
    ).toBe('waiting for the previous Job ledger-db-migrate to be deleted before it runs again');
    expect(
      argoSyncWhy(argoSyncOperationOf(app('Running', 'waiting for pruning confirmation of /ConfigMap/old', []))),
    ).toBe(
      "waiting for the confirmation to prune ConfigMap old (Prune=confirm: its prune preview needs a reviewer's approval)",
    );
    expect(
      argoSyncFailing(argoSyncOperationOf(app('Running', 'waiting for healthy state of apps/Deployment/ledger', []))),
    ).toBe(false);
    // healthy already by the console's look: a moment until Argo CD looks again
    const cm = argoSyncOperationOf(
      app('Running', 'waiting for healthy state of /ConfigMap/ledger-config', [
        { kind: 'ConfigMap', name: 'ledger-config', group: '', syncPhase: 'Sync', hookPhase: 'Running' },
      ]),
      waveOf,
    );
    expect(argoSyncWhy(cm, () => ({ status: 'Healthy' }))).toBe(
      'waiting on wave 0: Argo CD has not seen ConfigMap ledger-config healthy yet',
    );
  });

  it('sync waves: an integer annotation, anything else is wave 0', () => {
    const o = (v?: string) => ({
      metadata: { annotations: v === undefined ? {} : { 'argocd.argoproj.io/sync-wave': v } },
    });
    expect(syncWaveOf(o('-2'))).toBe(-2);
    expect(syncWaveOf(o(' 3 '))).toBe(3);
    expect(syncWaveOf(o('one'))).toBe(0);
    expect(syncWaveOf(o())).toBe(0);
  });
});
