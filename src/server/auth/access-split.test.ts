// AccessReviewer.split: what one user may `get` of a list, one SubjectAccessReview per kind and namespace, and
// what is hidden said in one sentence. Against a fake apiserver (discovery and SubjectAccessReviews only).
import { describe, expect, it } from 'vitest';
import type { ClusterManager } from '../kube/cluster-manager.ts';
import { AccessReviewer, type AccessRef } from './access-review.ts';
import type { Principal } from './session-types.ts';

const rhea: Principal = { name: 'rhea', source: 'local', groups: [], grants: [] };

/** An apiserver that allows `get` on everything but the resources in `denied`; `failing` reviews throw. */
function reviewer(denied: string[], failing: string[] = []) {
  const asked: string[] = [];
  const conn = {
    json: async (method: string, path: string, opts: { body?: string } = {}) => {
      if (method === 'GET' && path === '/api/v1')
        return {
          resources: [
            { name: 'configmaps', kind: 'ConfigMap', namespaced: true },
            { name: 'services', kind: 'Service', namespaced: true },
          ],
        };
      if (method === 'GET' && path === '/apis/apps/v1')
        return { resources: [{ name: 'deployments', kind: 'Deployment', namespaced: true }] };
      if (method === 'POST' && path.endsWith('/subjectaccessreviews')) {
        const a = (JSON.parse(opts.body ?? '{}') as { spec: { resourceAttributes: Record<string, string> } }).spec
          .resourceAttributes;
        asked.push(`${a.verb} ${a.resource} ${a.namespace ?? ''}`);
        if (failing.includes(a.resource ?? '')) throw new Error('apiserver unavailable');
        return { status: { allowed: !denied.includes(a.resource ?? '') } };
      }
      throw new Error(`unexpected ${method} ${path}`);
    },
  };
  const clusters = { clusters: new Map([['c1', { conn }]]) } as unknown as ClusterManager;
  return { r: new AccessReviewer(clusters), asked };
}

const ref = (kind: string, namespace: string | undefined, name: string): AccessRef & { name: string } => ({
  cluster: 'c1',
  group: kind === 'Deployment' ? 'apps' : '',
  version: 'v1',
  kind,
  namespace,
  name,
});

describe('AccessReviewer.split', () => {
  const items = [
    ref('ConfigMap', 'dev', 'a'),
    ref('Service', 'dev', 'b'),
    ref('ConfigMap', 'dev', 'c'),
    ref('ConfigMap', 'prod', 'd'),
    ref('Deployment', 'dev', 'e'),
  ];

  it('leaves out what the user may not get, counts it by resource and namespace, asks once per kind and namespace', async () => {
    const { r, asked } = reviewer(['configmaps']);
    const s = await AccessReviewer.split(r, rhea, items, (x) => x);
    expect(s.visible.map((x) => x.name)).toEqual(['b', 'e']);
    expect(s.hidden.map((x) => x.name)).toEqual(['a', 'c', 'd']);
    expect(s.message).toBe(
      '3 objects hidden: your Kubernetes RBAC does not allow get on configmaps in dev (2), configmaps in prod (1)',
    );
    expect(asked.sort()).toEqual([
      'get configmaps dev',
      'get configmaps prod',
      'get deployments dev',
      'get services dev',
    ]);
  });

  it('one kind in one namespace, and a group other than core', async () => {
    const one = await AccessReviewer.split(reviewer(['configmaps']).r, rhea, items.slice(0, 2), (x) => x);
    expect(one.message).toBe('1 object hidden: your Kubernetes RBAC does not allow get on configmaps in dev');
    const apps = await AccessReviewer.split(reviewer(['deployments']).r, rhea, items, (x) => x);
    expect(apps.message).toBe('1 object hidden: your Kubernetes RBAC does not allow get on deployments.apps in dev');
  });

  it('a review that fails hides the objects and says so (never shown)', async () => {
    const s = await AccessReviewer.split(reviewer([], ['services']).r, rhea, items, (x) => x);
    expect(s.hidden.map((x) => x.name)).toEqual(['b']);
    expect(s.message).toBe('1 object hidden: the access review failed for get on services in dev');
  });

  it('service mode (no reviewer) shows everything; a reviewer without a user shows nothing', async () => {
    expect(await AccessReviewer.split(undefined, rhea, items, (x) => x)).toEqual({
      visible: items,
      hidden: [],
      message: null,
    });
    const none = await AccessReviewer.split(reviewer([]).r, undefined, items, (x) => x);
    expect(none.visible).toEqual([]);
    expect(none.message).toMatch(/^5 objects hidden: /);
  });
});
