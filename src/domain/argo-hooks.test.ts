// Argo CD hooks (issue 40 item 13): which objects are hooks, as Argo CD reads their annotations, and a hook's last
// run from the Application's operation state (the shapes Argo CD 3.6 writes: gitops-engine's syncResult), else from
// the live object's own status.
import { describe, expect, it } from 'vitest';
import { argoHookOf, hookText, hookTypesOf, listedHooksOf } from './argo-hooks.ts';
import { argoSyncOperationOf } from './argo-sync.ts';
import { migrateTask as task } from '../../test/support/argo-hooks.ts';

const annotated = (annotations: Record<string, string>) => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'migrate', namespace: 'staging', annotations },
});

const job = (name: string, hook: string, status: Record<string, unknown>) => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name, namespace: 'staging', uid: `uid-${name}`, annotations: { 'argocd.argoproj.io/hook': hook } },
  status,
});

/** An Application after a sync: its hooks listed with `hook: true`, its operation's tasks with hookType/hookPhase. */
const application = (phase: string, tasks: unknown[], finishedAt = '2026-12-06T21:13:46Z') => ({
  status: {
    resources: [
      { group: 'batch', kind: 'Job', namespace: 'staging', name: 'ledger-db-migrate', hook: true, version: 'v1' },
      { group: 'apps', kind: 'Deployment', namespace: 'staging', name: 'ledger', status: 'Synced', version: 'v1' },
    ],
    operationState: {
      phase,
      message:
        phase === 'Succeeded'
          ? 'successfully synced (no more tasks)'
          : 'one or more synchronization tasks completed unsuccessfully',
      startedAt: '2026-12-06T21:13:29Z',
      ...(phase === 'Running' ? {} : { finishedAt }),
      operation: { sync: { revision: 'abc' } },
      syncResult: { revision: 'abc', resources: tasks },
    },
  },
});
const migrateTask = (hookPhase: string, message: string) =>
  task(hookPhase, { status: hookPhase === 'Succeeded' ? 'Synced' : 'SyncFailed', message });
const jobRef = (name: string) => ({ group: 'batch', kind: 'Job', namespace: 'staging', name });

describe('hookTypesOf: what Argo CD runs as a hook', () => {
  it('reads argocd.argoproj.io/hook (several types, Skip alone is no hook)', () => {
    expect(hookTypesOf(annotated({ 'argocd.argoproj.io/hook': 'PreSync' }))).toEqual(['PreSync']);
    expect(hookTypesOf(annotated({ 'argocd.argoproj.io/hook': 'PreSync, PostSync' }))).toEqual(['PreSync', 'PostSync']);
    expect(hookTypesOf(annotated({ 'argocd.argoproj.io/hook': 'Skip' }))).toEqual([]);
    expect(hookTypesOf(annotated({}))).toEqual([]);
    expect(hookTypesOf(undefined)).toEqual([]);
  });

  it('maps Helm hooks as Argo CD does; crd-install is an ordinary object; Argo CD’s own annotation wins', () => {
    expect(hookTypesOf(annotated({ 'helm.sh/hook': 'pre-install,pre-upgrade' }))).toEqual(['PreSync']);
    expect(hookTypesOf(annotated({ 'helm.sh/hook': 'post-install' }))).toEqual(['PostSync']);
    expect(hookTypesOf(annotated({ 'helm.sh/hook': 'crd-install' }))).toEqual([]);
    expect(hookTypesOf(annotated({ 'helm.sh/hook': 'test' }))).toEqual(['helm:test']);
    expect(hookTypesOf(annotated({ 'helm.sh/hook': 'post-install', 'argocd.argoproj.io/hook': 'Sync' }))).toEqual([
      'Sync',
    ]);
  });

  it('listedHooksOf: the objects the Application lists with hook: true, and none else', () => {
    expect([...listedHooksOf(application('Succeeded', []))]).toEqual(['batch/Job/staging/ledger-db-migrate']);
    expect(listedHooksOf({}).size).toBe(0);
  });
});

describe('argoHookOf: a hook’s last run', () => {
  const done = {
    completionTime: '2026-12-06T21:13:34Z',
    conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: '2026-12-06T21:13:34Z', message: 'done' }],
  };

  it('the phase and message Argo CD recorded, the end from the Job', () => {
    const op = argoSyncOperationOf(
      application('Succeeded', [migrateTask('Succeeded', 'Reached expected number of succeeded pods')]),
    );
    expect(argoHookOf(jobRef('ledger-db-migrate'), { live: job('ledger-db-migrate', 'PreSync', done) }, op)).toEqual({
      type: 'PreSync',
      phase: 'Succeeded',
      from: 'argocd',
      message: 'Reached expected number of succeeded pods',
      finishedAt: '2026-12-06T21:13:34Z',
    });
  });

  it('a failed hook: Argo CD’s phase and message, the end from the Job’s Failed condition', () => {
    const op = argoSyncOperationOf(
      application('Failed', [migrateTask('Failed', 'Job has reached the specified backoff limit')]),
    );
    const failed = job('ledger-db-migrate', 'PreSync', {
      conditions: [
        { type: 'Failed', status: 'True', lastTransitionTime: '2026-12-06T21:14:02Z', message: 'BackoffLimitExceeded' },
      ],
    });
    const h = argoHookOf(jobRef('ledger-db-migrate'), { live: failed }, op);
    expect(h).toEqual({
      type: 'PreSync',
      phase: 'Failed',
      from: 'argocd',
      message: 'Job has reached the specified backoff limit',
      finishedAt: '2026-12-06T21:14:02Z',
    });
    expect(hookText(h!, '3 min ago')).toBe(
      'hook · PreSync · Failed 3 min ago: Job has reached the specified backoff limit',
    );
  });

  it('no task for it in the last operation: the live Job’s own status, said to be the object’s', () => {
    const op = argoSyncOperationOf(application('Succeeded', []));
    const failed = job('ledger-smoke-test', 'PostSync', {
      conditions: [
        { type: 'Failed', status: 'True', lastTransitionTime: '2026-12-06T21:20:00Z', message: 'DeadlineExceeded' },
      ],
    });
    expect(argoHookOf(jobRef('ledger-smoke-test'), { live: failed }, op)).toEqual({
      type: 'PostSync',
      phase: 'Failed',
      from: 'live',
      message: 'DeadlineExceeded',
      finishedAt: '2026-12-06T21:20:00Z',
    });
    expect(
      argoHookOf(jobRef('ledger-smoke-test'), { live: job('ledger-smoke-test', 'PostSync', { active: 1 }) }),
    ).toEqual({
      type: 'PostSync',
      phase: 'Running',
      from: 'live',
    });
  });

  it('a running hook has no end; a rendered hook not live yet has no run', () => {
    const op = argoSyncOperationOf(application('Running', [migrateTask('Running', 'waiting')]));
    expect(argoHookOf(jobRef('ledger-db-migrate'), {}, op)).toEqual({
      type: 'PreSync',
      phase: 'Running',
      from: 'argocd',
      message: 'waiting',
    });
    const rendered = annotated({ 'argocd.argoproj.io/hook': 'PreSync' });
    const h = argoHookOf(jobRef('migrate'), { rendered });
    expect(h).toEqual({ type: 'PreSync' });
    expect(hookText(h!)).toBe('hook · PreSync · no run recorded');
  });

  it('an object that is no hook (no annotation, not listed, not run as one) is undefined', () => {
    const op = argoSyncOperationOf(application('Succeeded', [migrateTask('Succeeded', 'ok')]));
    const deploy = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'ledger', namespace: 'staging' } };
    expect(
      argoHookOf({ group: 'apps', kind: 'Deployment', namespace: 'staging', name: 'ledger' }, { live: deploy }, op),
    ).toBeUndefined();
    // listed by the Application as a hook, though this copy carries no annotation: a hook
    expect(argoHookOf(jobRef('x'), {}, undefined, true)).toEqual({ type: 'unknown' });
  });

  it('hookText: "hook · PreSync · Succeeded 3 min ago" (no message unless it failed)', () => {
    expect(hookText({ type: 'PreSync', phase: 'Succeeded', message: 'Reached expected number' }, '3 min ago')).toBe(
      'hook · PreSync · Succeeded 3 min ago',
    );
  });
});
