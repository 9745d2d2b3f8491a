// The release's reconcile state for an Argo CD app: synced at the release's revision is ok; a sync operation of
// that revision that failed (a PreSync hook) fails it with the hook's message, even where the objects compare
// Synced; a later operation that succeeds makes it ok.
import { describe, expect, it } from 'vitest';
import { applicationToApp } from '../gitops/argocd.ts';
import { recordReconcile } from './record-reconcile.ts';
import type { StateContext, Tracked } from './tracking.ts';

const SHA = 'b'.repeat(40);

const application = (sync: string, op: Record<string, unknown> | undefined) =>
  applicationToApp(
    'nonprod',
    {
      metadata: { name: 'ledger-staging', namespace: 'argocd' },
      spec: { source: { repoURL: 'http://git/x.git', path: 'argo/ledger', targetRevision: 'main' } },
      status: {
        sync: { status: sync, revision: SHA },
        health: { status: 'Healthy' },
        ...(op ? { operationState: op } : {}),
      },
    },
    'env',
  );

const failedHook = {
  phase: 'Failed',
  message: 'one or more synchronization tasks completed unsuccessfully',
  operation: { sync: { revision: SHA } },
  syncResult: {
    revision: SHA,
    resources: [
      {
        kind: 'Job',
        group: 'batch',
        name: 'ledger-db-migrate',
        syncPhase: 'PreSync',
        hookType: 'PreSync',
        hookPhase: 'Failed',
        message: 'Job has reached the specified backoff limit',
      },
    ],
  },
};

function setup() {
  const emitted: Array<{ state: string; data: Record<string, unknown> }> = [];
  const ctx: StateContext = {
    o: {} as StateContext['o'],
    emit: (_a, rel, state, _actor, data) => {
      emitted.push({ state, data });
      rel.recorded.set(state, { status: String(data.status ?? 'ok'), reason: data.reason as string, time: '' });
    },
    emitOther: () => undefined,
  };
  const rel: Tracked = { sha: SHA, revision: SHA, seenAt: Date.now(), recorded: new Map() };
  return { ctx, rel, emitted };
}

describe('recordReconcile, Argo CD', () => {
  it('a failed PreSync hook at the release revision: failed with the hook and its message', () => {
    const { ctx, rel, emitted } = setup();
    const app = application('OutOfSync', failedHook);
    expect(app.syncOperation).toMatchObject({ phase: 'Failed', revision: SHA });
    recordReconcile(ctx, app, rel);
    expect(emitted).toEqual([
      expect.objectContaining({
        state: 'reconcile',
        data: expect.objectContaining({
          status: 'failed',
          reason: 'sync Failed: PreSync hook ledger-db-migrate failed: Job has reached the specified backoff limit',
        }),
      }),
    ]);
    // the same failure seen again is not recorded twice
    recordReconcile(ctx, app, rel);
    expect(emitted).toHaveLength(1);
  });

  it('objects Synced but the operation of this revision failed (a PostSync hook): still failed; a later success: ok', () => {
    const { ctx, rel, emitted } = setup();
    recordReconcile(ctx, application('Synced', failedHook), rel);
    expect(emitted[0]?.data.status).toBe('failed');
    recordReconcile(
      ctx,
      application('Synced', {
        phase: 'Succeeded',
        operation: { sync: { revision: SHA } },
        syncResult: { revision: SHA },
      }),
      rel,
    );
    expect(emitted).toHaveLength(2);
    expect(emitted[1]?.data.status).toBeUndefined();
    expect(emitted[1]?.data.appliedRevision).toBe(SHA);
  });

  it('a failed operation of another revision does not fail this release', () => {
    const { ctx, rel, emitted } = setup();
    const other = {
      ...failedHook,
      operation: { sync: { revision: 'c'.repeat(40) } },
      syncResult: { revision: 'c'.repeat(40), resources: [] },
    };
    recordReconcile(ctx, application('Synced', other), rel);
    expect(emitted).toEqual([
      expect.objectContaining({ state: 'reconcile', data: expect.objectContaining({ appliedRevision: SHA }) }),
    ]);
  });
});
