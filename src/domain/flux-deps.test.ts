import { describe, expect, it } from 'vitest';
import type { App } from './app.ts';
import { dependencyDepths, dependencyGraph, dependencyStates, dependsOnOf, waitingOn } from './flux-deps.ts';

const app = (name: string, ready: { status: string; reason?: string; message?: string }): App =>
  ({
    id: `nonprod/flux-system/kustomization/${name}`,
    cluster: 'nonprod',
    kind: 'Kustomization',
    namespace: 'flux-system',
    name,
    conditions: [{ type: 'Ready', ...ready }],
  }) as unknown as App;

describe('Flux dependencies', () => {
  it('dependsOn defaults the namespace to the object’s own', () => {
    expect(
      dependsOnOf({
        metadata: { namespace: 'flux-system' },
        spec: { dependsOn: [{ name: 'infra' }, { name: 'db', namespace: 'data' }, {}] },
      }),
    ).toEqual([
      { namespace: 'flux-system', name: 'infra' },
      { namespace: 'data', name: 'db' },
    ]);
  });

  it('an app held back names the dependency and its own reason', () => {
    const infra = app('infra', {
      status: 'False',
      reason: 'HealthCheckFailed',
      message: 'Deployment/ingress not ready',
    });
    const apps = app('apps', {
      status: 'False',
      reason: 'DependencyNotReady',
      message: "dependency 'flux-system/infra' is not ready",
    });
    const states = dependencyStates(apps, [{ namespace: 'flux-system', name: 'infra' }], [infra, apps]);
    expect(waitingOn(apps, states)).toBe(
      'waiting on infra (not Ready: HealthCheckFailed — Deployment/ingress not ready)',
    );
    // the line shown wherever the app is names the reason only
    expect(waitingOn(apps, states, { messages: false })).toBe('waiting on infra (not Ready: HealthCheckFailed)');
    // a Ready app waits on nothing, whatever its dependencies say
    expect(waitingOn(app('x', { status: 'True' }), states)).toBeUndefined();
  });

  it('a dependency Ready since the controller said "not ready" is never shown beside its Ready (issue 39)', () => {
    const infra = app('infra', { status: 'True', reason: 'ReconciliationSucceeded' });
    const held = {
      status: 'False',
      reason: 'DependencyNotReady',
      message: "dependency 'flux-system/infra' is not ready",
    };
    const apps = app('apps', held);
    const states = dependencyStates(apps, [{ namespace: 'flux-system', name: 'infra' }], [infra, apps]);
    expect(states[0]?.ready).toBe('True');
    const line = waitingOn(apps, states) ?? '';
    expect(line).toMatch(/^its dependencies are Ready now; its controller moves on at its next retry/);
    expect(line).not.toContain('not ready');
    // frozen (suspended with a freeze): nothing moves until the freeze ends, and the line says so
    const frozen = {
      ...apps,
      automation: { autoSync: true, selfHeal: true, prune: true, suspended: true },
      freeze: { id: 'frz-1', by: 'oncall', reason: 'incident', until: '2026-12-06T20:00:00Z' },
    } as App;
    expect(waitingOn(frozen, states)).toBe(
      'its dependencies are Ready; it is frozen, so its controller re-checks them when the freeze ends',
    );
    const suspended = { ...frozen, freeze: undefined } as App;
    expect(waitingOn(suspended, states)).toMatch(/reconciliation is suspended/);
  });

  it('a dependency the console does not know is unknown, never Ready', () => {
    const apps = app('apps', { status: 'False', reason: 'DependencyNotReady' });
    const states = dependencyStates(apps, [{ namespace: 'flux-system', name: 'ghost' }], [apps]);
    expect(states[0]).toMatchObject({ id: null, ready: 'Unknown', reason: 'NotFound' });
    expect(waitingOn(apps, states)).toMatch(/^waiting on ghost \(Ready unknown: NotFound/);
  });

  it('the graph has the edges, and finds a cycle', () => {
    const a = app('a', { status: 'True' });
    const b = app('b', { status: 'True' });
    const c = app('c', { status: 'Unknown' });
    const g = dependencyGraph(
      [
        { app: a, deps: [{ namespace: 'flux-system', name: 'b' }] },
        { app: b, deps: [{ namespace: 'flux-system', name: 'c' }] },
        {
          app: c,
          deps: [
            { namespace: 'flux-system', name: 'a' },
            { namespace: 'other', name: 'x' },
          ],
        },
      ],
      [a, b, c],
    );
    expect(g.edges).toHaveLength(3);
    expect(g.cycles).toEqual([[a.id, b.id, c.id]]);
    expect(g.unknown).toEqual([{ from: c.id, ref: { namespace: 'other', name: 'x' } }]);
    // a cycle ends; a chain counts its length
    expect([...dependencyDepths(g).values()].every((d) => d >= 0 && d <= g.nodes.length)).toBe(true);
    const line = dependencyGraph(
      [
        { app: a, deps: [{ namespace: 'flux-system', name: 'b' }] },
        { app: b, deps: [{ namespace: 'flux-system', name: 'c' }] },
      ],
      [a, b, c],
    );
    expect(Object.fromEntries(dependencyDepths(line))).toEqual({ [a.id]: 2, [b.id]: 1, [c.id]: 0 });
  });
});
