// The release's reconcile state for a Flux app held for a dependency (issue 26): nothing is recorded while
// kustomize-controller says DependencyNotReady; the reconcile that follows says since when it waited and on what.
import { describe, expect, it } from 'vitest';
import { kustomizationToApp } from '../gitops/flux.ts';
import { dependenciesNamed, recordReconcile } from './record-reconcile.ts';
import { buildReleases } from '../../domain/release.ts';
import type { StateContext, Tracked } from './tracking.ts';

const OLD = 'a'.repeat(40);
const SHA = 'b'.repeat(40);

const kustomization = (applied: string, ready: Record<string, unknown>) =>
  kustomizationToApp(
    'nonprod',
    {
      metadata: { name: 'digital-human-dev', namespace: 'flux-system' },
      spec: {
        path: './overlays/dev',
        sourceRef: { kind: 'GitRepository', name: 'digital-human' },
        dependsOn: [{ name: 'infra-dev' }],
      },
      status: { lastAppliedRevision: `main@sha1:${applied}`, conditions: [{ type: 'Ready', ...ready }] },
    },
    () => undefined,
    'env',
  );

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

describe('recordReconcile, Flux dependsOn', () => {
  it('records nothing while held, then the reconcile with when it waited and on what', () => {
    const { ctx, rel, emitted } = setup();
    const held = kustomization(OLD, {
      status: 'False',
      reason: 'DependencyNotReady',
      message: "dependency 'flux-system/infra-dev' is not ready",
    });
    expect(held.dependsOn).toEqual([{ namespace: 'flux-system', name: 'infra-dev' }]);
    recordReconcile(ctx, held, rel);
    expect(emitted).toEqual([]);
    const since = rel.dependencyWait?.since;
    expect(rel.dependencyWait?.on).toEqual(['flux-system/infra-dev']);
    recordReconcile(ctx, held, rel);
    expect(rel.dependencyWait?.since).toBe(since);

    recordReconcile(ctx, kustomization(SHA, { status: 'True', reason: 'ReconciliationSucceeded' }), rel);
    expect(emitted).toHaveLength(1);
    const waited = emitted[0]?.data.waited as Record<string, unknown>;
    expect(waited.on).toEqual(['flux-system/infra-dev']);
    expect(waited.since).toBe(since);
    expect(typeof waited.seconds).toBe('number');
    expect(rel.recorded.get('reconcile')?.status).toBe('ok');
  });

  it('a reconcile that never waited says nothing of dependencies; the timeline line names what it waited on', () => {
    const { ctx, rel, emitted } = setup();
    recordReconcile(ctx, kustomization(SHA, { status: 'True', reason: 'ReconciliationSucceeded' }), rel);
    expect(emitted[0]?.data.waited).toBeUndefined();
    const [release] = buildReleases([
      {
        seq: 1,
        time: '2026-12-02T10:00:00Z',
        type: 'release.reconcile',
        actor: 'kustomize-controller',
        data: {
          sha: SHA,
          revision: `main@sha1:${SHA}`,
          status: 'ok',
          appliedRevision: `main@sha1:${SHA}`,
          waited: { on: ['flux-system/infra-dev'], since: '2026-12-02T09:59:20Z', seconds: 40 },
        },
      },
    ]);
    expect(release?.states.find((s) => s.name === 'reconcile')?.value).toMatch(/waited 40 s on infra-dev$/);
  });

  it('names the dependencies from the controller message, else from dependsOn', () => {
    const app = kustomization(OLD, { status: 'False', reason: 'DependencyNotReady' });
    expect(dependenciesNamed("dependency 'a/b' is not ready, dependency 'a/c' is not ready", app)).toEqual([
      'a/b',
      'a/c',
    ]);
    expect(dependenciesNamed(undefined, app)).toEqual(['flux-system/infra-dev']);
  });
});
