// A release's stored manifests as one reader may see them (issue 40): objects in an environment they may not read
// (their namespace's mapping) and, in impersonation mode, objects their Kubernetes RBAC does not let them get are
// left out, counted, and said why.
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { parseGrant } from '../../domain/access.ts';
import type { AccessReviewer } from '../auth/index.ts';
import { manifestsSeenBy } from './manifests-seen-by.ts';

const req = (...grants: string[]) =>
  ({
    principal: { name: 'dana', source: 'local', groups: [], grants: grants.map(parseGrant) },
  }) as unknown as FastifyRequest;
const catalog = { envOfNamespace: (_c: string, ns: string) => (ns === 'dev' || ns === 'staging' ? ns : 'unknown') };
const obj = (kind: string, namespace: string | undefined, name: string) => ({
  apiVersion: 'v1',
  kind,
  metadata: { name, ...(namespace ? { namespace } : {}) },
});
const objects = [
  obj('ConfigMap', 'dev', 'settings'),
  obj('ServiceAccount', 'dev', 'worker'),
  obj('ConfigMap', 'staging', 'settings'),
  obj('Namespace', undefined, 'staging'),
  obj('ClusterRole', undefined, 'reader'),
];
/** a reviewer whose RBAC denies ConfigMaps */
const noConfigMaps = {
  mayGet: async (_u: unknown, r: { kind: string }) => (r.kind === 'ConfigMap' ? 'denied' : 'allowed'),
  plural: async (_c: string, _g: string, _v: string, kind: string) => `${kind.toLowerCase()}s`,
} as unknown as AccessReviewer;

describe('manifestsSeenBy', () => {
  it('a release.read on dev only: staging’s objects (its Namespace too) left out and counted', async () => {
    const r = await manifestsSeenBy(req('developer@nonprod/dev'), { catalog }, 'nonprod', objects);
    expect(r.objects.map((o) => `${String(o.kind)}/${String((o.metadata as { name: string }).name)}`)).toEqual([
      'ConfigMap/settings',
      'ServiceAccount/worker',
      'ClusterRole/reader',
    ]);
    expect(r.hidden).toEqual({ objects: 2, reasons: ['2 objects in environments you may not read are hidden'] });
  });

  it('impersonation: what RBAC hides too, with its own sentence', async () => {
    const r = await manifestsSeenBy(
      req('developer@nonprod/dev'),
      { catalog, reviewer: noConfigMaps },
      'nonprod',
      objects,
    );
    expect(r.objects.map((o) => o.kind)).toEqual(['ServiceAccount', 'ClusterRole']);
    expect(r.hidden).toEqual({
      objects: 3,
      reasons: [
        '2 objects in environments you may not read are hidden',
        '1 object hidden: your Kubernetes RBAC does not allow get on configmaps in dev',
      ],
    });
  });

  it('a reader of every environment, no reviewer: everything, nothing said', async () => {
    expect(await manifestsSeenBy(req('developer@nonprod'), { catalog }, 'nonprod', objects)).toEqual({ objects });
  });
});
