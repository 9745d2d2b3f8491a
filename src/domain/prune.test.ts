import { describe, expect, it } from 'vitest';
import { cascadeWalk, deletionCount, planPrune, protectionOf, type CascadeLookups, type PruneLimits } from './prune.ts';
import type { ObjectRef } from './refs.ts';

const C = 'nonprod';
const ref = (kind: string, name: string, namespace?: string, group = '', version = 'v1'): ObjectRef => ({
  cluster: C,
  group,
  version,
  kind,
  ...(namespace ? { namespace } : {}),
  name,
});
const live = (
  r: ObjectRef,
  md: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
): Record<string, unknown> => ({
  apiVersion: r.group ? `${r.group}/${r.version}` : r.version,
  kind: r.kind,
  metadata: { name: r.name, ...(r.namespace ? { namespace: r.namespace } : {}), uid: `uid-${r.kind}-${r.name}`, ...md },
  ...extra,
});
const LOOSE: PruneLimits = { maxDeletions: 100, maxFraction: 1 };

const cm = ref('ConfigMap', 'render-config', 'dev');
const deploy = ref('Deployment', 'render-worker', 'dev', 'apps');
const svc = ref('Service', 'tts-gateway', 'dev');
const inventory = [cm, deploy, svc];

describe('planPrune', () => {
  it('unknown render: unknown, no candidates (unknown is never empty)', () => {
    const p = planPrune({ controller: 'flux', inventory, desired: null, live: [], limits: LOOSE });
    expect(p.state).toBe('unknown');
    expect(p.candidates).toEqual([]);
    expect(p.reasons[0]).toMatch(/unknown/);
  });

  it('nothing to prune when the render has every inventory object (another version is the same object)', () => {
    const desired = [cm, { ...deploy, version: 'v1beta1' }, svc];
    expect(planPrune({ controller: 'flux', inventory, desired, live: [], limits: LOOSE })).toEqual({
      state: 'nothing',
      reasons: [],
      candidates: [],
    });
  });

  it('a ConfigMap removed from Git is the one candidate, with its finalizers', () => {
    const p = planPrune({
      controller: 'flux',
      inventory,
      desired: [deploy, svc],
      live: [live(cm, { finalizers: ['example.com/keep'] }), live(deploy), live(svc)],
      limits: LOOSE,
    });
    expect(p.state).toBe('ready');
    expect(p.candidates).toEqual([
      {
        ref: cm,
        protectedBy: null,
        blockedBy: null,
        cascadesUnknown: null,
        cascades: [],
        finalizers: ['example.com/keep'],
      },
    ]);
  });

  it('an empty render of a non-empty inventory needs an override', () => {
    const p = planPrune({
      controller: 'flux',
      inventory,
      desired: [],
      live: inventory.map((r) => live(r)),
      limits: LOOSE,
    });
    expect(p.state).toBe('needs-override');
    expect(p.reasons.join()).toMatch(/render is empty: all 3 objects/);
    expect(p.candidates).toHaveLength(3);
  });

  it('over the count or the fraction limit needs an override, each reason named', () => {
    const p = planPrune({
      controller: 'argocd',
      inventory,
      desired: [svc],
      live: [],
      limits: { maxDeletions: 1, maxFraction: 0.5 },
    });
    expect(p.state).toBe('needs-override');
    expect(p.reasons).toEqual([
      '2 deletions exceed the limit of 1',
      "67% of the app's objects would be deleted, over the limit of 50%",
    ]);
  });

  it.each([
    [
      'argocd',
      { annotations: { 'argocd.argoproj.io/sync-options': 'Prune=false' } },
      'argocd.argoproj.io/sync-options: Prune=false',
    ],
    [
      'argocd',
      { annotations: { 'argocd.argoproj.io/sync-options': 'ServerSideApply=true, Delete=false' } },
      'argocd.argoproj.io/sync-options: ServerSideApply=true, Delete=false',
    ],
    [
      'flux',
      { annotations: { 'kustomize.toolkit.fluxcd.io/prune': 'disabled' } },
      'kustomize.toolkit.fluxcd.io/prune: disabled',
    ],
    [
      'flux',
      { labels: { 'kustomize.toolkit.fluxcd.io/prune': 'disabled' } },
      'kustomize.toolkit.fluxcd.io/prune: disabled (label)',
    ],
  ] as const)('%s protection %j is named verbatim and not counted as a deletion', (controller, md, by) => {
    const p = planPrune({ controller, inventory, desired: [deploy, svc], live: [live(cm, md)], limits: LOOSE });
    expect(p.candidates[0]?.protectedBy).toBe(by);
    expect(p.state).toBe('nothing');
  });

  it('not protected: Prune=true, another option, enabled', () => {
    expect(protectionOf(live(cm, { annotations: { 'argocd.argoproj.io/sync-options': 'Prune=true' } }))).toBeNull();
    expect(protectionOf(live(cm, { annotations: { 'kustomize.toolkit.fluxcd.io/prune': 'enabled' } }))).toBeNull();
  });

  it('cascades: owner references recursively, a Namespace’s contents, a CRD’s custom resources', () => {
    const ns = ref('Namespace', 'team-a');
    const crd = ref('CustomResourceDefinition', 'widgets.example.com', undefined, 'apiextensions.k8s.io');
    const rs = ref('ReplicaSet', 'render-worker-7d9', 'dev', 'apps');
    const pod = ref('Pod', 'render-worker-7d9-abc', 'dev');
    const inTeam = ref('ConfigMap', 'x', 'team-a');
    const widget = ref('Widget', 'w1', 'dev', 'example.com');
    const p = planPrune({
      controller: 'flux',
      inventory: [deploy, ns, crd, svc],
      desired: [svc],
      live: [
        live(deploy),
        live(rs, { ownerReferences: [{ uid: 'uid-Deployment-render-worker' }] }),
        live(pod, { ownerReferences: [{ uid: 'uid-ReplicaSet-render-worker-7d9' }] }),
        live(ns),
        live(inTeam),
        live(crd, {}, { spec: { group: 'example.com', names: { kind: 'Widget' } } }),
        live(widget),
        live(svc),
      ],
      limits: LOOSE,
    });
    const by = Object.fromEntries(p.candidates.map((c) => [c.ref.kind, c.cascades.map((x) => `${x.kind}/${x.name}`)]));
    expect(by).toEqual({
      CustomResourceDefinition: ['Widget/w1'],
      Deployment: ['Pod/render-worker-7d9-abc', 'ReplicaSet/render-worker-7d9'],
      Namespace: ['ConfigMap/x'],
    });
  });
});

describe('planPrune: what a deletion takes with it is governed', () => {
  const PROTECT = { annotations: { 'kustomize.toolkit.fluxcd.io/prune': 'disabled' } };
  const ARGO_KEEP = { annotations: { 'argocd.argoproj.io/sync-options': 'Delete=false' } };
  const rs = ref('ReplicaSet', 'render-worker-7d9', 'dev', 'apps');
  const pod = (n: string) => ref('Pod', `render-worker-7d9-${n}`, 'dev');
  const owned = (uid: string, md: Record<string, unknown> = {}) => ({ ownerReferences: [{ uid }], ...md });
  const team = ref('Namespace', 'team-a');
  const inTeam = ref('ConfigMap', 'x', 'team-a');
  const crd = ref('CustomResourceDefinition', 'widgets.example.com', undefined, 'apiextensions.k8s.io');
  const crdLive = live(crd, {}, { spec: { group: 'example.com', names: { kind: 'Widget' } } });
  const widget = ref('Widget', 'w1', 'dev', 'example.com');
  /** a Deployment with one ReplicaSet and `pods` Pods; `podMd` on the first Pod */
  const deployment = (pods: number, podMd: Record<string, unknown> = {}) => [
    live(deploy),
    live(rs, owned('uid-Deployment-render-worker')),
    ...Array.from({ length: pods }, (_, i) =>
      live(pod(String(i)), owned('uid-ReplicaSet-render-worker-7d9', i === 0 ? podMd : {})),
    ),
  ];

  it.each([
    [
      'a Deployment whose Pod (through its ReplicaSet) is protected',
      [deploy, svc],
      [...deployment(2, PROTECT), live(svc)],
      'Deployment',
      'its Pod dev/render-worker-7d9-0 is protected (kustomize.toolkit.fluxcd.io/prune: disabled)',
    ],
    [
      'a Namespace holding a protected ConfigMap (Argo CD Delete=false)',
      [team, svc],
      [live(team), live(inTeam, ARGO_KEEP), live(svc)],
      'Namespace',
      'its ConfigMap team-a/x is protected (argocd.argoproj.io/sync-options: Delete=false)',
    ],
    [
      'a CRD one of whose custom resources is protected',
      [crd, svc],
      [crdLive, live(widget, { labels: { 'kustomize.toolkit.fluxcd.io/prune': 'disabled' } }), live(svc)],
      'CustomResourceDefinition',
      'its Widget dev/w1 is protected (kustomize.toolkit.fluxcd.io/prune: disabled (label))',
    ],
    [
      'two protected objects: the first named, the other counted',
      [deploy, svc],
      [...deployment(1, PROTECT), live(pod('9'), owned('uid-ReplicaSet-render-worker-7d9', PROTECT)), live(svc)],
      'Deployment',
      'its Pod dev/render-worker-7d9-0 is protected (kustomize.toolkit.fluxcd.io/prune: disabled), and 1 more object it takes with it is',
    ],
  ] as const)('%s: blocked, named, not deleted', (_what, inv, liveObjs, kind, blocked) => {
    const p = planPrune({
      controller: 'flux',
      inventory: [...inv],
      desired: [svc],
      live: [...liveObjs],
      limits: LOOSE,
    });
    const c = p.candidates.find((x) => x.ref.kind === kind);
    expect(c).toMatchObject({ protectedBy: null, blockedBy: blocked, cascadesUnknown: null });
    // nothing else would be deleted: the plan says so
    expect(p.state).toBe('nothing');
  });

  it('a blocked candidate is left out, the others still deleted', () => {
    const p = planPrune({
      controller: 'flux',
      inventory: [deploy, cm, svc],
      desired: [svc],
      live: [...deployment(1, PROTECT), live(cm), live(svc)],
      limits: LOOSE,
    });
    expect(p.state).toBe('ready');
    expect(p.candidates.map((c) => [c.ref.name, c.blockedBy !== null])).toEqual([
      ['render-config', false],
      ['render-worker', true],
    ]);
  });

  it.each([
    // 1 Deployment + its ReplicaSet + 3 Pods = 5 deletions
    [
      { maxDeletions: 4, maxFraction: 1 },
      ['5 deletions (1 object and 4 that their deletion takes with it) exceed the limit of 4'],
    ],
    [{ maxDeletions: 5, maxFraction: 1 }, []],
  ] as const)('the count limit counts cascaded objects (%j)', (limits, reasons) => {
    const p = planPrune({ controller: 'flux', inventory, desired: [cm, svc], live: deployment(3), limits });
    expect(p.reasons).toEqual(reasons);
    expect(p.state).toBe(reasons.length ? 'needs-override' : 'ready');
    expect(deletionCount(p.candidates)).toBe(5);
  });

  it('an object two deletions take is counted once (a ConfigMap candidate inside a Namespace candidate)', () => {
    const p = planPrune({
      controller: 'flux',
      inventory: [team, inTeam, svc],
      desired: [svc],
      live: [live(team), live(inTeam), live(ref('Secret', 's', 'team-a'))],
      limits: { maxDeletions: 2, maxFraction: 1 },
    });
    expect(deletionCount(p.candidates)).toBe(3);
    expect(p.reasons).toEqual([
      '3 deletions (2 objects and 1 that their deletion takes with it) exceed the limit of 2',
    ]);
  });

  it('protected or blocked candidates take nothing off the count', () => {
    const p = planPrune({
      controller: 'flux',
      inventory: [deploy, cm, svc],
      desired: [svc],
      live: [...deployment(30, PROTECT), live(cm)],
      limits: { maxDeletions: 1, maxFraction: 1 },
    });
    expect(p.state).toBe('ready');
    expect(deletionCount(p.candidates)).toBe(1);
  });

  const why =
    "cannot list secrets, rbac.authorization.k8s.io/rolebindings in ns team-a: the namespace's contents are unknown";
  it('a Namespace whose contents are unknown: not deleted, said; the plan is unknown when nothing else is', () => {
    const p = planPrune({
      controller: 'flux',
      inventory: [team, svc],
      desired: [svc],
      live: [live(team), live(inTeam)],
      unknown: { namespaces: new Map([['team-a', why]]) },
      limits: LOOSE,
    });
    expect(p.candidates[0]).toMatchObject({ blockedBy: null, cascadesUnknown: why });
    // what is known is still listed
    expect(p.candidates[0]?.cascades.map((r) => r.name)).toEqual(['x']);
    expect(p.state).toBe('unknown');
    expect(p.reasons).toEqual([`Namespace team-a is not deleted: ${why}`]);
  });

  it('an unknown candidate beside deletable ones: the plan goes on without it and names it', () => {
    const p = planPrune({
      controller: 'flux',
      inventory: [team, cm, crd, svc],
      desired: [svc],
      live: [live(team), live(cm), crdLive],
      unknown: {
        namespaces: new Map([['team-a', why]]),
        kinds: new Map([
          ['example.com/Widget', "cannot list example.com/widgets: the CRD's custom resources are unknown"],
        ]),
      },
      limits: { maxDeletions: 1, maxFraction: 1 },
    });
    expect(p.state).toBe('ready');
    expect(deletionCount(p.candidates)).toBe(1);
    expect(p.reasons).toEqual([
      `Namespace team-a is not deleted: ${why}`,
      "CustomResourceDefinition widgets.example.com is not deleted: cannot list example.com/widgets: the CRD's custom resources are unknown",
    ]);
  });

  it('a protected candidate with unknown contents stays protected (not an unknown plan)', () => {
    const p = planPrune({
      controller: 'flux',
      inventory: [team, svc],
      desired: [svc],
      live: [live(team, PROTECT)],
      unknown: { namespaces: new Map([['team-a', why]]) },
      limits: LOOSE,
    });
    expect(p.state).toBe('nothing');
    expect(p.candidates[0]).toMatchObject({ protectedBy: 'kustomize.toolkit.fluxcd.io/prune: disabled' });
  });
});

describe('cascadeWalk: the one walk of what a deletion takes with it', () => {
  const dep = live(deploy);
  const rs = live(ref('ReplicaSet', 'rw-1', 'dev', 'apps'), {
    ownerReferences: [{ uid: 'uid-Deployment-render-worker' }],
  });
  const pod = live(ref('Pod', 'rw-1-a', 'dev'), { ownerReferences: [{ uid: 'uid-ReplicaSet-rw-1' }] });
  const ns = live(ref('Namespace', 'team-a'));
  const inTeam = live(ref('ConfigMap', 'x', 'team-a'));
  const crd = live(
    ref('CustomResourceDefinition', 'widgets.example.com', undefined, 'apiextensions.k8s.io'),
    {},
    { spec: { group: 'example.com', names: { kind: 'Widget' } } },
  );
  const widget = live(ref('Widget', 'w1', 'team-a', 'example.com'), {
    ownerReferences: [{ uid: 'uid-Deployment-render-worker' }],
  });
  const all = [dep, rs, pod, ns, inTeam, crd, widget];
  const owners = (o: Record<string, unknown>) =>
    ((o.metadata as { ownerReferences?: Array<{ uid?: string }> }).ownerReferences ?? []).map((x) => x.uid);
  const nsOf = (o: Record<string, unknown>) => (o.metadata as { namespace?: string }).namespace;
  const full: CascadeLookups = {
    childrenOf: (uid) => all.filter((o) => owners(o).includes(uid)),
    inNamespace: (n) => all.filter((o) => nsOf(o) === n),
    ofKind: (group, kind) => all.filter((o) => o.apiVersion === `${group}/v1` && o.kind === kind),
  };
  const ownersOnly: CascadeLookups = { childrenOf: full.childrenOf };
  const name = (o: Record<string, unknown>) => `${String(o.kind)}/${(o.metadata as { name?: string }).name}`;
  it.each([
    ['owner references, recursively', [dep], full, [], ['ReplicaSet/rw-1', 'Widget/w1', 'Pod/rw-1-a']],
    ['a Namespace: its contents', [ns], full, [], ['ConfigMap/x', 'Widget/w1']],
    ['a CRD: its custom resources', [crd], full, [], ['Widget/w1']],
    [
      'no namespace and kind lookups: owner references only',
      [ns, crd, dep],
      ownersOnly,
      [],
      ['ReplicaSet/rw-1', 'Widget/w1', 'Pod/rw-1-a'],
    ],
    [
      'each object once, reached twice',
      [ns, dep],
      full,
      [],
      ['ConfigMap/x', 'Widget/w1', 'ReplicaSet/rw-1', 'Pod/rw-1-a'],
    ],
    ['a root another root reaches is listed', [dep, rs], full, [], ['ReplicaSet/rw-1', 'Widget/w1', 'Pod/rw-1-a']],
    ['an excluded key is neither listed nor walked', [dep], full, ['apps/ReplicaSet/dev/rw-1'], ['Widget/w1']],
    ['nothing owned: nothing', [inTeam], full, [], []],
  ] as const)('%s', (_what, roots, lookups, exclude, want) => {
    const walk = cascadeWalk([...roots], lookups, new Set(exclude));
    expect(walk.objects.map(name)).toEqual(want);
    expect(walk.unknown).toEqual([]);
  });

  it('a namespace or a kind its lookups say is unknown: listed as far as known, with each sentence once', () => {
    const why = "cannot list secrets in ns team-a: the namespace's contents are unknown";
    const kindWhy = "cannot list example.com/widgets: the CRD's custom resources are unknown";
    const walk = cascadeWalk([ns, crd, ns], {
      ...full,
      namespaceUnknown: (n) => (n === 'team-a' ? why : undefined),
      kindUnknown: (g, k) => (g === 'example.com' && k === 'Widget' ? kindWhy : undefined),
    });
    expect(walk.objects.map(name)).toEqual(['ConfigMap/x', 'Widget/w1']);
    expect(walk.unknown).toEqual([why, kindWhy]);
  });
});
