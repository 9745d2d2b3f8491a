// What a Namespace's or a CRD's deletion takes with it, listed live (cascade-live.ts, cascades.ts), and the
// approval's re-check of it (snapshot.ts): against a small in-memory apiserver that serves discovery, metadata-only
// lists (and full lists when asked without the metadata Accept header, to prove it is never asked so), 403s.
import { describe, expect, it } from 'vitest';
import type { Obj } from '../../domain/object-meta.ts';
import { planPrune, type PruneLimits } from '../../domain/prune.ts';
import type { ObjectRef } from '../../domain/refs.ts';
import { KubeError, type ClusterConnection, type KubeResponse } from '../kube/connection.ts';
import type { ObjectIndex } from '../kube/object-index.ts';
import { customResources, METADATA_LIST_ACCEPT, named, namespaceContents, namespacedKinds } from './cascade-live.ts';
import { gatherCascades } from './cascades.ts';
import { pruneContext } from './context.ts';
import type { PreviewDoc, PruneServiceDeps, StoredPreview } from './model.ts';
import { snapshotMatches } from './snapshot.ts';

const PROTECT = { 'kustomize.toolkit.fluxcd.io/prune': 'disabled' };
const LIMITS: PruneLimits = { maxDeletions: 100, maxFraction: 1 };

interface Res {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  verbs?: string[];
}
const RESOURCES: Res[] = [
  { group: '', version: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false },
  { group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true },
  { group: '', version: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true },
  { group: '', version: 'v1', kind: 'Event', plural: 'events', namespaced: true },
  { group: '', version: 'v1', kind: 'Pod', plural: 'pods', namespaced: true },
  { group: '', version: 'v1', kind: 'Binding', plural: 'bindings', namespaced: true, verbs: ['create'] },
  { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'RoleBinding', plural: 'rolebindings', namespaced: true },
  { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRole', plural: 'clusterroles', namespaced: false },
  {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    kind: 'CustomResourceDefinition',
    plural: 'customresourcedefinitions',
    namespaced: false,
  },
  { group: 'example.com', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true },
];

/** An apiserver of a few kinds; `forbid` answers 403 to lists of those plurals, `ignoreAccept` full lists. */
class FakeApi {
  objects: Obj[] = [];
  forbid = new Set<string>();
  brokenGroups = new Set<string>();
  ignoreAccept = new Set<string>();
  requests: Array<{ path: string; accept: string }> = [];
  private uid = 0;

  add(kind: string, name: string, namespace?: string, md: Record<string, unknown> = {}, extra: Obj = {}): Obj {
    const r = RESOURCES.find((x) => x.kind === kind) as Res;
    const o: Obj = {
      apiVersion: r.group ? `${r.group}/${r.version}` : r.version,
      kind,
      metadata: { name, ...(namespace ? { namespace } : {}), uid: `u${++this.uid}`, resourceVersion: '1', ...md },
      ...extra,
    };
    this.objects.push(o);
    return o;
  }

  private answer(status: number, body: unknown): KubeResponse {
    return { status, headers: {}, body: JSON.stringify(body) };
  }

  private discovery(path: string): unknown {
    if (path === '/api/v1') return this.resourceList('');
    if (path === '/apis') {
      const groups = [...new Set(RESOURCES.map((r) => r.group).filter(Boolean))];
      return {
        groups: groups.map((name) => ({ name, preferredVersion: { version: 'v1' }, versions: [{ version: 'v1' }] })),
      };
    }
    const m = /^\/apis\/([^/]+)\/v1$/.exec(path);
    if (m && !this.brokenGroups.has(m[1] ?? '')) return this.resourceList(m[1] ?? '');
    throw new KubeError(`GET ${path}: HTTP 503`, 'c', 503);
  }

  private resourceList(group: string) {
    return {
      resources: RESOURCES.filter((r) => r.group === group).flatMap((r) => [
        { name: r.plural, kind: r.kind, namespaced: r.namespaced, verbs: r.verbs ?? ['get', 'list', 'watch'] },
        { name: `${r.plural}/status`, kind: r.kind, namespaced: r.namespaced, verbs: ['get'] },
      ]),
    };
  }

  conn(): ClusterConnection {
    const c = {
      json: async (_m: string, path: string) => this.discovery(path),
      request: async (method: string, full: string, opts: { headers?: Record<string, string> } = {}) => {
        const accept = String(opts.headers?.Accept ?? 'application/json');
        this.requests.push({ path: full, accept });
        const [path = '', query = ''] = full.split('?');
        const m = /^\/apis?\/(?:([^/]+)\/)?v1(?:\/namespaces\/([^/]+))?\/([^/]+)(?:\/([^/]+))?$/.exec(path);
        const res = m && RESOURCES.find((r) => r.plural === m[3] && (r.group || undefined) === m[1]);
        if (!m || !res || method !== 'GET') return this.answer(404, {});
        const [, , ns, , name] = m;
        const of = this.objects.filter(
          (o) =>
            o.kind === res.kind &&
            (!ns || (o.metadata as { namespace?: string }).namespace === ns) &&
            (!name || (o.metadata as { name?: string }).name === name),
        );
        if (name) return of[0] ? this.answer(200, of[0]) : this.answer(404, {});
        if (this.forbid.has(res.plural)) return this.answer(403, { message: 'forbidden' });
        // pages of 1 (the client follows `continue`)
        const at = Number(/continue=(\d+)/.exec(query)?.[1] ?? '0');
        const page = of.slice(at, at + 1);
        const cont = at + 1 < of.length ? String(at + 1) : undefined;
        if (accept === METADATA_LIST_ACCEPT && !this.ignoreAccept.has(res.plural))
          return this.answer(200, {
            kind: 'PartialObjectMetadataList',
            apiVersion: 'meta.k8s.io/v1',
            metadata: cont ? { continue: cont } : {},
            items: page.map((o) => ({
              kind: 'PartialObjectMetadata',
              apiVersion: 'meta.k8s.io/v1',
              metadata: o.metadata,
            })),
          });
        return this.answer(200, { kind: `${res.kind}List`, metadata: cont ? { continue: cont } : {}, items: page });
      },
      httpError: (r: KubeResponse, what: string) => new KubeError(`${what}: HTTP ${r.status}`, 'c', r.status),
    };
    return c as unknown as ClusterConnection;
  }
}

const names = (os: Obj[]) => os.map((o) => `${String(o.kind)}/${(o.metadata as { name: string }).name}`).sort();

function teamA(api = new FakeApi()) {
  const ns = api.add('Namespace', 'team-a');
  api.add('ConfigMap', 'x', 'team-a');
  api.add('Secret', 's', 'team-a', {}, { data: { password: 'aHVudGVyMg==' } });
  api.add('Event', 'e', 'team-a');
  api.add('RoleBinding', 'rb', 'team-a');
  api.add('ConfigMap', 'other', 'team-b');
  return { api, ns };
}

describe('namespaceContents: every namespaced kind, metadata only', () => {
  it('lists each kind that can be listed (not Events, not subresources, not create-only kinds), page by page', async () => {
    const { api } = teamA();
    api.add('ConfigMap', 'y', 'team-a');
    const d = await namespacedKinds(api.conn());
    expect(d.kinds.map((k) => k.plural)).toEqual(['configmaps', 'pods', 'secrets', 'widgets', 'rolebindings']);
    const l = await namespaceContents(api.conn(), 'team-a', d.kinds, d.failed);
    expect(l.unknown).toBeNull();
    expect(names(l.objects)).toEqual(['ConfigMap/x', 'ConfigMap/y', 'RoleBinding/rb', 'Secret/s']);
  });

  it('a Secret is counted, never read: every list asks for metadata only and keeps nothing else', async () => {
    const { api } = teamA();
    const d = await namespacedKinds(api.conn());
    const l = await namespaceContents(api.conn(), 'team-a', d.kinds);
    const lists = api.requests.filter((r) => r.path.includes('/namespaces/team-a/'));
    expect(lists.length).toBeGreaterThan(0);
    expect(lists.every((r) => r.accept === METADATA_LIST_ACCEPT)).toBe(true);
    const secret = l.objects.find((o) => o.kind === 'Secret');
    expect(secret).toEqual({ apiVersion: 'v1', kind: 'Secret', metadata: expect.objectContaining({ name: 's' }) });
    expect(JSON.stringify(l)).not.toContain('aHVudGVyMg==');
  });

  it('a server that answers a full list anyway: refused, unknown, and none of it kept', async () => {
    const { api } = teamA();
    api.ignoreAccept.add('secrets');
    const d = await namespacedKinds(api.conn());
    const l = await namespaceContents(api.conn(), 'team-a', d.kinds);
    expect(l.unknown).toBe(
      "cannot list secrets (not served as metadata) in ns team-a: the namespace's contents are unknown",
    );
    expect(JSON.stringify(l)).not.toContain('aHVudGVyMg==');
  });

  it('a kind the console may not list (403) or a group it cannot discover: unknown, named, never "nothing else"', async () => {
    const { api } = teamA();
    api.forbid.add('rolebindings').add('secrets');
    api.brokenGroups.add('example.com');
    const d = await namespacedKinds(api.conn());
    expect(d.failed).toEqual(['example.com/v1']);
    const l = await namespaceContents(api.conn(), 'team-a', d.kinds, d.failed);
    expect(l.unknown).toBe(
      "cannot list the kinds of example.com/v1 (discovery failed), secrets, rbac.authorization.k8s.io/rolebindings in ns team-a: the namespace's contents are unknown",
    );
    // what could be listed is still listed
    expect(names(l.objects)).toEqual(['ConfigMap/x']);
  });

  it('names failures with a reason, then Kubernetes’ own kinds, then custom resources (20 at most)', () => {
    const failures = [
      ...Array.from({ length: 25 }, (_, i) => ({ what: `gen${i}.example.com/gadget${i}s`, error: '' })),
      { what: 'rbac.authorization.k8s.io/rolebindings', error: '' },
      { what: 'secrets', error: '' },
      { what: 'the kinds of example.com/v1', error: 'discovery failed' },
    ];
    expect(named(failures)).toMatch(
      /^the kinds of example\.com\/v1 \(discovery failed\), rbac\.authorization\.k8s\.io\/rolebindings, secrets, gen0\.example\.com\/gadget0s, .*gen16\.example\.com\/gadget16s and 8 more kinds$/,
    );
  });
});

describe("customResources: a CRD's custom resources across namespaces", () => {
  const crd = (versions: Array<{ name: string; served: boolean; storage: boolean }>) => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: { group: 'example.com', names: { kind: 'Widget', plural: 'widgets' }, versions },
  });

  it('lists the served storage version in every namespace', async () => {
    const api = new FakeApi();
    api.add('Widget', 'w1', 'team-a');
    api.add('Widget', 'w2', 'team-b');
    const l = await customResources(
      api.conn(),
      crd([
        { name: 'v1beta1', served: true, storage: false },
        { name: 'v1', served: true, storage: true },
      ]),
    );
    expect(l).toMatchObject({ unknown: null });
    expect(names(l.objects)).toEqual(['Widget/w1', 'Widget/w2']);
    expect(api.requests.map((r) => r.path.split('?')[0])).toEqual([
      '/apis/example.com/v1/widgets',
      '/apis/example.com/v1/widgets',
    ]);
  });

  it('403: unknown; a CRD that serves no version: unknown', async () => {
    const api = new FakeApi();
    api.forbid.add('widgets');
    expect((await customResources(api.conn(), crd([{ name: 'v1', served: true, storage: true }]))).unknown).toBe(
      "cannot list example.com/widgets: the CRD's custom resources are unknown",
    );
    expect((await customResources(api.conn(), crd([{ name: 'v1', served: false, storage: true }]))).unknown).toMatch(
      /serves no version/,
    );
  });
});

/** A prune context over the fake apiserver; the informer cache holds the Pods and their owners. */
function context(api: FakeApi) {
  const cached = () => api.objects.filter((o) => o.kind === 'Pod' || o.kind === 'ConfigMap');
  const index = {
    watches: () => false,
    get: () => undefined,
    trackedBy: () => [],
    childrenOf: (_c: string, uid: string) =>
      cached().filter((o) =>
        ((o.metadata as { ownerReferences?: Array<{ uid: string }> }).ownerReferences ?? []).some((x) => x.uid === uid),
      ),
  } as unknown as ObjectIndex;
  const deps = { index, conn: () => api.conn(), app: () => undefined } as unknown as PruneServiceDeps;
  return pruneContext(deps);
}

const refOf = (o: Obj): ObjectRef => {
  const av = String(o.apiVersion);
  const md = o.metadata as { name: string; namespace?: string };
  return {
    cluster: 'c',
    group: av.includes('/') ? (av.split('/')[0] ?? '') : '',
    version: av.split('/').at(-1) ?? 'v1',
    kind: String(o.kind),
    ...(md.namespace ? { namespace: md.namespace } : {}),
    name: md.name,
  };
};

describe('gatherCascades + planPrune: a Namespace candidate read live', () => {
  const plan = async (api: FakeApi, roots: Obj[]) => {
    const g = await gatherCascades(context(api), 'c', roots);
    return planPrune({
      controller: 'flux',
      inventory: roots.map(refOf),
      desired: [{ cluster: 'c', group: '', version: 'v1', kind: 'ConfigMap', namespace: 'keep', name: 'keep' }],
      live: [...roots, ...g.live],
      unknown: g.unknown,
      limits: LIMITS,
    });
  };

  it('its Secrets and RoleBindings are counted (the cache has neither)', async () => {
    const { api, ns } = teamA();
    const p = await plan(api, [ns]);
    expect(p.state).toBe('ready');
    expect(p.candidates[0]?.cascades.map((r) => `${r.kind}/${r.name}`)).toEqual([
      'ConfigMap/x',
      'Secret/s',
      'RoleBinding/rb',
    ]);
  });

  it('a kind it may not list: the candidate is unknown and not deleted; the plan says why', async () => {
    const { api, ns } = teamA();
    api.forbid.add('rolebindings');
    const p = await plan(api, [ns]);
    expect(p.state).toBe('unknown');
    expect(p.candidates[0]?.cascadesUnknown).toBe(
      "cannot list rbac.authorization.k8s.io/rolebindings in ns team-a: the namespace's contents are unknown",
    );
  });

  it('a protected Secret in it (found only live) blocks it', async () => {
    const { api, ns } = teamA();
    api.add('Secret', 'keep-me', 'team-a', { annotations: PROTECT });
    const p = await plan(api, [ns]);
    expect(p.candidates[0]?.blockedBy).toBe(
      'its Secret team-a/keep-me is protected (kustomize.toolkit.fluxcd.io/prune: disabled)',
    );
    expect(p.state).toBe('nothing');
  });

  it('a CRD candidate counts its custom resources; their children (by owner) too', async () => {
    const api = new FakeApi();
    const crd = api.add(
      'CustomResourceDefinition',
      'widgets.example.com',
      undefined,
      {},
      {
        spec: {
          group: 'example.com',
          names: { kind: 'Widget', plural: 'widgets' },
          versions: [{ name: 'v1', served: true, storage: true }],
        },
      },
    );
    const w = api.add('Widget', 'w1', 'team-a');
    api.add('Pod', 'w1-pod', 'team-a', { ownerReferences: [{ uid: (w.metadata as { uid: string }).uid }] });
    const p = await plan(api, [crd]);
    expect(p.candidates[0]?.cascades.map((r) => `${r.kind}/${r.name}`)).toEqual(['Pod/w1-pod', 'Widget/w1']);
  });

  it('no Namespace or CRD among the candidates: nothing is listed', async () => {
    const { api } = teamA();
    const cm = api.objects.find((o) => o.kind === 'ConfigMap') as Obj;
    await plan(api, [cm]);
    expect(api.requests).toEqual([]);
  });
});

describe('snapshotMatches: what a deletion takes with it is judged again at approval', () => {
  const preview = (candidate: Obj, planState: PreviewDoc['planState'] = 'ready', maxDeletions = 100): StoredPreview => {
    const md = candidate.metadata as { uid: string; resourceVersion: string };
    const ref = refOf(candidate);
    return {
      id: 'p',
      app: 'c/flux-system/kustomization/a',
      cluster: 'c',
      env: 'dev',
      status: 'pending',
      statusReason: null,
      snapshotHash: 'h',
      requiredApprovals: 1,
      requester: { issuer: 'console', subject: 'dev', name: 'dev' },
      createdAt: new Date().toISOString(),
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
      decisions: [],
      doc: {
        controller: 'flux',
        revision: null,
        renderHash: null,
        renderer: null,
        planState,
        reasons: [],
        limits: { maxDeletions, maxFraction: 1 },
        candidates: [
          {
            ref,
            id: `c/core/${ref.kind}/_/${ref.name}`,
            uid: md.uid,
            resourceVersion: md.resourceVersion,
            protectedBy: null,
            blockedBy: null,
            cascadesUnknown: null,
            cascades: [],
            finalizers: [],
            createdAt: null,
            lastWriter: null,
            deletable: true,
          },
        ],
        propagationPolicy: 'Background',
        batchSize: 10,
        confirmation: null,
      },
    } as unknown as StoredPreview;
  };
  const ctxOf = context;

  it('unchanged: it matches', async () => {
    const { api, ns } = teamA();
    expect(await snapshotMatches(ctxOf(api), preview(ns))).toEqual({ ok: true });
  });

  it('a protected object added to the Namespace since (its resourceVersion does not move): void', async () => {
    const { api, ns } = teamA();
    api.add('ConfigMap', 'late', 'team-a', { annotations: PROTECT });
    const r = await snapshotMatches(ctxOf(api), preview(ns));
    expect(r.ok).toBe(false);
    expect(r.reason).toMatch(/would now take a protected object with it: its ConfigMap team-a\/late is protected/);
  });

  it('a kind that can no longer be listed: void', async () => {
    const { api, ns } = teamA();
    api.forbid.add('secrets');
    expect((await snapshotMatches(ctxOf(api), preview(ns))).reason).toMatch(/unknown now: cannot list secrets/);
  });

  it('a plan within the limits whose Namespace filled up past the count limit since: void', async () => {
    const { api, ns } = teamA();
    for (let i = 0; i < 4; i++) api.add('ConfigMap', `more-${i}`, 'team-a');
    expect((await snapshotMatches(ctxOf(api), preview(ns, 'ready', 5))).reason).toMatch(
      /would now remove 8 objects .* over the limit of 5/,
    );
    // an override plan was approved knowing it is large
    expect(await snapshotMatches(ctxOf(api), preview(ns, 'needs-override', 5))).toEqual({ ok: true });
  });
});
