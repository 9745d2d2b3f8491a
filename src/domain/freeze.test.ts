import { describe, expect, it } from 'vitest';
import {
  argoFlagPruned,
  appSetFreezeOps,
  appSetPriorOf,
  appSetRestoreOps,
  cannotFreeze,
  freezePatch,
  freezeRequestErrors,
  frozenState,
  liveChangesSince,
  priorOf,
  pauseHandled,
  restorePatch,
  FLUX_RECONCILE_REQUEST,
  FREEZE_ANNOTATIONS,
} from './freeze.ts';
import type { FieldChange } from './field-diff.ts';
import type { Obj } from './object-meta.ts';

const meta = { id: 'frz-0000abcd', by: 'alice', reason: 'incident', until: '2026-12-01T12:00:00.000Z' };

describe('freezeRequestErrors', () => {
  it.each([
    [{ reason: '', minutes: 10 }, ['reason']],
    [{ reason: '   ', minutes: 10 }, ['reason']],
    [{ reason: 'x'.repeat(501), minutes: 10 }, ['reason']],
    [{ reason: 'ok', minutes: 0 }, ['minutes']],
    [{ reason: 'ok', minutes: -1 }, ['minutes']],
    [{ reason: 'ok', minutes: 1.5 }, ['minutes']],
    [{ reason: 'ok', minutes: 1441 }, ['minutes']],
    [{ reason: 'ok', minutes: 10, incident: 'ftp://x' }, ['incident']],
    [{ reason: 'ok', minutes: 10, incident: 'javascript:alert(1)' }, ['incident']],
    [{ reason: 'ok', minutes: 10, incident: 'https://u:p@x.example/' }, ['incident']],
    [{ reason: '', minutes: 5000, incident: 'nope' }, ['reason', 'incident', 'minutes']],
    [{ reason: 'ok' }, []],
    [{ reason: 'ok', minutes: 1440, incident: 'https://status.example.com/42' }, []],
  ])('%j → %j', (input, fields) => {
    expect(freezeRequestErrors(input).map((e) => e.field)).toEqual(fields);
  });
});

describe('Flux', () => {
  const ks = (spec: Record<string, unknown> = {}, annotations: Record<string, string> = {}) => ({
    metadata: { name: 'app', resourceVersion: '7', annotations },
    spec,
  });

  it('freezes with suspend and the annotations, with the resourceVersion as precondition', () => {
    const prior = priorOf('flux', ks({ interval: '5m' }));
    expect(prior).toEqual({ controller: 'flux', suspend: null, annotations: expect.any(Object) });
    const p = freezePatch(prior, meta, '7');
    expect(p.contentType).toBe('application/merge-patch+json');
    expect(p.body).toEqual({
      metadata: {
        resourceVersion: '7',
        annotations: {
          [FREEZE_ANNOTATIONS.id]: meta.id,
          [FREEZE_ANNOTATIONS.reason]: 'incident',
          [FREEZE_ANNOTATIONS.until]: meta.until,
          [FREEZE_ANNOTATIONS.by]: 'alice',
        },
      },
      spec: { suspend: true },
    });
  });

  it('carries a reconcile request with the suspend; only its exact echo says the controller handled it', () => {
    const at = '2026-12-07T12:00:00.123Z';
    const p = freezePatch(priorOf('flux', ks()), meta, '7', at);
    const ann = (p.body as { metadata: { annotations: Record<string, string> } }).metadata.annotations;
    expect(ann[FLUX_RECONCILE_REQUEST]).toBe(at);
    expect(ann[FREEZE_ANNOTATIONS.id]).toBe(meta.id);
    const handled = (v: unknown) =>
      pauseHandled({ ...ks({ suspend: true }), status: { lastHandledReconcileAt: v } }, at);
    expect(handled(at)).toBe(true);
    // not yet, or another request's echo (a reconcile that may have read the object before the suspend)
    expect(handled(undefined)).toBe(false);
    expect(handled('2026-12-07T11:59:59.000Z')).toBe(false);
    expect(handled('2026-12-07T12:00:05.000Z')).toBe(false);
    // Argo CD's patch carries no Flux annotation
    const argo = freezePatch(
      priorOf('argocd', { metadata: {}, spec: { syncPolicy: { automated: {} } } }),
      meta,
      '1',
      at,
    );
    expect(JSON.stringify(argo.body)).not.toContain(FLUX_RECONCILE_REQUEST);
  });

  it('Argo CD: the pause holds once no sync operation is pending or running (automated off stops none in flight)', () => {
    const at = '2026-12-07T12:00:00.123Z';
    const app = (over: Record<string, unknown>) => ({ metadata: {}, spec: { syncPolicy: {} }, ...over });
    const idle = (o: Record<string, unknown>) => pauseHandled(app(o), at, 'argocd');
    expect(idle({})).toBe(true);
    expect(idle({ status: { operationState: { phase: 'Succeeded' } } })).toBe(true);
    expect(idle({ status: { operationState: { phase: 'Failed' } } })).toBe(true);
    // a sync it began before the freeze still applies Git, or one asked for and not started yet
    expect(idle({ status: { operationState: { phase: 'Running' } } })).toBe(false);
    expect(idle({ status: { operationState: { phase: 'Terminating' } } })).toBe(false);
    expect(idle({ operation: { sync: { revision: 'abc' } }, status: { operationState: { phase: 'Succeeded' } } })).toBe(
      false,
    );
  });

  it('restores suspend as it was (absent → removed, false → false) and removes only what the freeze added', () => {
    const live = ks({ suspend: true }, { [FREEZE_ANNOTATIONS.id]: meta.id, [FREEZE_ANNOTATIONS.by]: 'alice' });
    expect(restorePatch(priorOf('flux', ks()), live).body).toEqual({
      metadata: {
        annotations: {
          [FREEZE_ANNOTATIONS.id]: null,
          [FREEZE_ANNOTATIONS.reason]: null,
          [FREEZE_ANNOTATIONS.until]: null,
          [FREEZE_ANNOTATIONS.incident]: null,
          [FREEZE_ANNOTATIONS.by]: null,
          [FLUX_RECONCILE_REQUEST]: null,
        },
      },
      spec: { suspend: null },
    });
    // a reconcile request from before the freeze comes back as it was
    const requested = ks({}, { [FLUX_RECONCILE_REQUEST]: '2026-12-01T00:00:00Z' });
    expect(
      (restorePatch(priorOf('flux', requested), live).body as { metadata: { annotations: Obj } }).metadata.annotations[
        FLUX_RECONCILE_REQUEST
      ],
    ).toBe('2026-12-01T00:00:00Z');
    // a freeze recorded before the console sent the request leaves it alone
    const { [FLUX_RECONCILE_REQUEST]: _r, ...olderAnn } = (priorOf('flux', ks()) as { annotations: Obj }).annotations;
    const older = { controller: 'flux' as const, suspend: null, annotations: olderAnn as Record<string, null> };
    expect(JSON.stringify(restorePatch(older, live).body)).not.toContain(FLUX_RECONCILE_REQUEST);
    // someone's own suspendedBy from before the freeze comes back
    const before = ks({ suspend: false }, { [FREEZE_ANNOTATIONS.by]: 'flux-operator' });
    const body = restorePatch(priorOf('flux', before), live).body as {
      metadata: { annotations: Record<string, unknown> };
      spec: unknown;
    };
    expect(body.spec).toEqual({ suspend: false });
    expect(body.metadata.annotations[FREEZE_ANNOTATIONS.by]).toBe('flux-operator');
  });

  it('cannot freeze what is suspended or frozen already', () => {
    expect(cannotFreeze('flux', ks({ suspend: true }))).toMatch(/already suspended outside the console/);
    expect(cannotFreeze('flux', ks({}, { [FREEZE_ANNOTATIONS.id]: 'frz-1' }))).toMatch(/already frozen.*extend/);
    expect(cannotFreeze('flux', ks())).toBeUndefined();
  });

  it.each([
    [{ suspend: true }, { [FREEZE_ANNOTATIONS.id]: meta.id }, 'frozen'],
    [{ suspend: false }, { [FREEZE_ANNOTATIONS.id]: meta.id }, 'resumed-directly'],
    [{}, { [FREEZE_ANNOTATIONS.id]: meta.id }, 'resumed-directly'],
    [{ suspend: true }, {}, 'annotation-dropped'],
    [{ suspend: true }, { [FREEZE_ANNOTATIONS.id]: 'frz-other' }, 'other-freeze'],
  ])('frozenState(%j, %j) = %s', (spec, ann, state) => {
    expect(frozenState('flux', ks(spec, ann), meta.id)).toBe(state);
  });
});

describe('Argo CD', () => {
  const policy = { automated: { prune: true, selfHeal: true }, syncOptions: ['Prune=confirm'], retry: { limit: 2 } };
  const app = (syncPolicy: unknown, extra: Record<string, unknown> = {}) => ({
    metadata: { name: 'edge', resourceVersion: '9', annotations: {}, ...extra },
    spec: { project: 'default', ...(syncPolicy === undefined ? {} : { syncPolicy }) },
  });

  it('pauses with automated.enabled: false keeping prune/self-heal, and restores syncPolicy exactly', () => {
    const prior = priorOf('argocd', app(policy));
    expect(prior).toEqual({ controller: 'argocd', syncPolicy: policy, shape: 'enabled-flag' });
    expect(freezePatch(prior, meta, '9').body).toMatchObject({
      metadata: { resourceVersion: '9' },
      spec: { syncPolicy: { automated: { prune: true, selfHeal: true, enabled: false } } },
    });
    const live = app(
      { ...policy, automated: { ...policy.automated, enabled: false }, extra: 1 },
      {
        annotations: { [FREEZE_ANNOTATIONS.id]: meta.id, 'keep/me': 'x' },
      },
    );
    expect(restorePatch(prior, live)).toEqual({
      contentType: 'application/json-patch+json',
      body: [
        { op: 'remove', path: '/metadata/annotations/gitops-console.dev~1freeze-id' },
        { op: 'add', path: '/spec/syncPolicy', value: policy },
      ],
    });
  });

  it('the older shape removes automated; an absent syncPolicy is removed again', () => {
    const prior = { ...priorOf('argocd', app(policy)), shape: 'removed' as const };
    expect(freezePatch(prior, meta, '9').body).toMatchObject({ spec: { syncPolicy: { automated: null } } });
    const none = priorOf('argocd', app(undefined));
    expect(restorePatch(none, app({ automated: null })).body).toEqual([{ op: 'remove', path: '/spec/syncPolicy' }]);
  });

  it('explains what cannot be frozen: manual sync (an ApplicationSet child can be: its ApplicationSet is paused too)', () => {
    expect(
      cannotFreeze('argocd', app(policy, { ownerReferences: [{ kind: 'ApplicationSet', name: 'gen' }] })),
    ).toBeUndefined();
    expect(cannotFreeze('argocd', app({ syncOptions: [] }))).toMatch(/automated sync is off/);
    expect(cannotFreeze('argocd', app({ automated: { enabled: false } }))).toMatch(/automated sync is off/);
    expect(cannotFreeze('argocd', app(policy))).toBeUndefined();
  });

  it.each([
    [{ automated: { enabled: false } }, 'frozen'],
    [{}, 'frozen'],
    [{ automated: { selfHeal: true } }, 'resumed-directly'],
  ])('frozenState(%j) = %s', (sp, state) => {
    expect(frozenState('argocd', app(sp, { annotations: { [FREEZE_ANNOTATIONS.id]: meta.id } }), meta.id)).toBe(state);
  });
});

describe('liveChangesSince', () => {
  const ref = { cluster: 'c', group: 'apps', version: 'v1', kind: 'Deployment', namespace: 'dev', name: 'w' };
  const change = (c: Partial<FieldChange>): FieldChange => ({
    path: 'spec.replicas',
    owners: [],
    class: 'drift',
    ...c,
  });
  const isController = (m: string) => m === 'kustomize-controller';

  it('lists fields written by someone else at or after the start (second precision), newest writer named', () => {
    const objects = [
      {
        ref,
        id: 'c/apps/Deployment/dev/w',
        changes: [
          change({
            desired: 6,
            predicted: 6,
            live: 12,
            owners: [{ manager: 'kubectl-edit', operation: 'Update', time: '2026-12-01T10:00:05Z' }],
          }),
          // before the freeze: not this freeze's change
          change({
            path: 'spec.template.spec.containers[name=w].image',
            desired: 'a:1',
            live: 'a:2',
            owners: [{ manager: 'kubectl-set', operation: 'Update', time: '2026-12-01T09:59:00Z' }],
          }),
          // the controller's own field
          change({
            path: 'metadata.labels.x',
            live: 'y',
            owners: [{ manager: 'kustomize-controller', operation: 'Apply', time: '2026-12-01T10:01:00Z' }],
          }),
          // pending (Git changed), not a live change
          change({
            path: 'data.a',
            class: 'pending',
            owners: [{ manager: 'kubectl-edit', operation: 'Update', time: '2026-12-01T10:02:00Z' }],
          }),
        ],
      },
    ];
    const out = liveChangesSince(objects, '2026-12-01T10:00:05.700Z', isController);
    expect(out).toEqual([
      {
        id: 'c/apps/Deployment/dev/w#spec.replicas',
        ref,
        path: 'spec.replicas',
        git: 6,
        live: 12,
        manager: 'kubectl-edit',
        operation: 'Update',
        time: '2026-12-01T10:00:05Z',
      },
    ]);
  });
});

describe('the ApplicationSet of a frozen Application', () => {
  const set = (spec: Record<string, unknown>) => ({ metadata: { name: 'web', namespace: 'argocd' }, spec });
  const apply = (spec: Record<string, unknown>, ops: unknown[] | null): Record<string, unknown> => {
    // a minimal JSON Patch (add/replace/remove/test on /spec/<key>) for the test
    const out = JSON.parse(JSON.stringify(spec)) as Record<string, unknown>;
    for (const o of ops ?? []) {
      const { op, path, value } = o as { op: string; path: string; value?: unknown };
      const key = path.replace('/spec/', '');
      if (op === 'test') expect(out[key]).toEqual(value);
      else if (op === 'remove') delete out[key];
      else out[key] = value;
    }
    return out;
  };

  it('adds the ignore entry and the preserved freeze annotations, and takes exactly those back', () => {
    const before = { generators: [], preservedFields: { labels: ['team'] } };
    const prior = appSetPriorOf(set(before));
    const frozen = apply(before, appSetFreezeOps(set(before), 'web-dev'));
    expect(frozen.ignoreApplicationDifferences).toEqual([{ name: 'web-dev', jsonPointers: ['/spec/syncPolicy'] }]);
    expect((frozen.preservedFields as { annotations: string[] }).annotations).toEqual(
      Object.values(FREEZE_ANNOTATIONS),
    );
    // a second freeze of the same Application adds nothing
    expect(appSetFreezeOps(set(frozen), 'web-dev')).toBeNull();
    // the apiserver returns the entry's keys in its own order: still the freeze's entry
    const reordered = {
      ...frozen,
      ignoreApplicationDifferences: [{ jsonPointers: ['/spec/syncPolicy'], name: 'web-dev' }],
    };
    expect(apply(reordered, appSetRestoreOps(prior, set(reordered), 'web-dev'))).toEqual(before);
    expect(apply(frozen, appSetRestoreOps(prior, set(frozen), 'web-dev'))).toEqual(before);
  });

  it('two frozen Applications: the first end keeps the preserved annotations for the other; entries the prior had stay', () => {
    const mine = { name: 'keep', jsonPointers: ['/spec/source/targetRevision'] };
    const before = { ignoreApplicationDifferences: [mine] };
    const prior = appSetPriorOf(set(before));
    const one = apply(before, appSetFreezeOps(set(before), 'web-dev'));
    const two = apply(one, appSetFreezeOps(set(one), 'web-staging'));
    const ended = apply(two, appSetRestoreOps(prior, set(two), 'web-dev'));
    expect(ended.ignoreApplicationDifferences).toEqual([
      mine,
      { name: 'web-staging', jsonPointers: ['/spec/syncPolicy'] },
    ]);
    expect((ended.preservedFields as { annotations: string[] }).annotations).toEqual(Object.values(FREEZE_ANNOTATIONS));
    const prior2 = appSetPriorOf(set(one));
    expect(
      apply(
        ended,
        appSetRestoreOps(
          { ...prior2, ignoreApplicationDifferences: [mine], preservedFields: null },
          set(ended),
          'web-staging',
        ),
      ),
    ).toEqual(before);
  });
});

describe('argoFlagPruned: a freeze patch whose automated.enabled a CRD dropped', () => {
  const obj = (automated: unknown, id = 'frz-1'): Obj => ({
    metadata: { annotations: { [FREEZE_ANNOTATIONS.id]: id } },
    spec: { syncPolicy: { automated } },
  });
  const flag = { controller: 'argocd' as const, syncPolicy: { automated: {} }, shape: 'enabled-flag' as const };
  it('is the freeze annotation with `automated` left and no `enabled` key, for a freeze made with the flag', () => {
    expect(argoFlagPruned(flag, obj({ prune: true }), 'frz-1')).toBe(true);
    expect(argoFlagPruned(flag, obj({ prune: true, enabled: false }), 'frz-1')).toBe(false);
    expect(argoFlagPruned(flag, obj({ prune: true, enabled: true }), 'frz-1')).toBe(false);
    expect(argoFlagPruned(flag, obj(null), 'frz-1')).toBe(false);
    expect(argoFlagPruned(flag, obj({ prune: true }, 'frz-2'), 'frz-1')).toBe(false);
    expect(argoFlagPruned({ ...flag, shape: 'removed' }, obj({ prune: true }), 'frz-1')).toBe(false);
  });
});
