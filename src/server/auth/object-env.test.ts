// The object routes' scope (issue 40, item 8): where the console's mapping covers an object's namespace, that
// decides its environment, never the app whose tracking label the object carries. A live object in staging's
// namespace labelled as the dev app's is staging's: a 403 for a dev reader, recorded in staging. Without a mapping
// (the label decides environments) the app's environment decides, as before. The guard with fakes of its inputs.
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { parseGrant } from '../../domain/access.ts';
import type { AppCatalog } from '../apps/index.ts';
import type { EvidenceRecorder } from '../evidence/index.ts';
import type { ObjectIndex } from '../kube/object-index.ts';
import { installGuard } from './guard.ts';
import type { SessionStore } from './sessions.ts';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const DEV_APP = {
  id: 'nonprod/flux-system/kustomization/app-dev',
  cluster: 'nonprod',
  namespace: 'flux-system',
  kind: 'Kustomization',
  name: 'app-dev',
  controller: 'flux',
  env: 'dev',
};
/** every object the index holds carries the dev app's Flux labels */
const labelled = (ns: string | undefined, kind: string, name: string) => ({
  apiVersion: 'v1',
  kind,
  metadata: {
    name,
    ...(ns ? { namespace: ns } : {}),
    labels: { 'kustomize.toolkit.fluxcd.io/name': 'app-dev', 'kustomize.toolkit.fluxcd.io/namespace': 'flux-system' },
  },
});

async function start(mapping: Record<string, string> | undefined) {
  const denied: Array<{ env?: string; data: { route: string } }> = [];
  app = Fastify();
  installGuard(app, {
    sessions: {
      find: async (cookie: string | undefined) =>
        cookie === 'dana'
          ? {
              key: 'k',
              csrf: 'c',
              createdAt: 0,
              lastSeen: 0,
              user: { name: 'dana', source: 'local', groups: [], grants: [parseGrant('viewer@nonprod/dev')] },
            }
          : undefined,
    } as unknown as SessionStore,
    recorder: { observe: (e: (typeof denied)[number]) => denied.push(e) } as unknown as EvidenceRecorder,
    catalog: {
      list: () => [DEV_APP],
      get: () => undefined,
      envOfNamespace: (_c: string, ns: string) => (mapping ? (mapping[ns] ?? 'unknown') : undefined),
    } as unknown as AppCatalog,
    index: {
      get: (_c: string, r: { kind: string; namespace?: string; name: string }) => labelled(r.namespace, r.kind, r.name),
      ancestors: (_c: string, o: unknown) => [o],
    } as unknown as ObjectIndex,
  });
  app.get('/api/clusters/:cluster/object', { config: { access: { action: 'app.read', scope: 'object' } } }, () => ({
    ok: true,
  }));
  await app.ready();
  const read = async (q: string) =>
    (
      await (app as FastifyInstance).inject({
        url: `/api/clusters/nonprod/object?${q}`,
        cookies: { console_session: 'dana' },
      })
    ).statusCode;
  return { read, denied };
}

const cm = (ns: string) => `group=&version=v1&kind=ConfigMap&namespace=${ns}&name=settings`;

describe('an object route’s environment', () => {
  it('with a mapping: its namespace’s, whoever’s label it carries (a Namespace: its own name’s)', async () => {
    const { read, denied } = await start({ dev: 'dev', staging: 'staging' });
    expect(await read(cm('dev'))).toBe(200);
    expect(await read(cm('staging'))).toBe(403);
    expect(await read(cm('kube-system'))).toBe(403); // mapped by no rule: `unknown`
    expect(await read('group=&version=v1&kind=Namespace&name=staging')).toBe(403);
    expect(await read('group=&version=v1&kind=Namespace&name=dev')).toBe(200);
    expect(denied.map((d) => [d.env, d.data.route])).toEqual([
      ['staging', '/api/clusters/:cluster/object'],
      ['unknown', '/api/clusters/:cluster/object'],
    ]);
  });

  it('with a mapping, a cluster-scoped object the mapping cannot place: the app whose label it carries', async () => {
    const { read } = await start({ dev: 'dev', staging: 'staging' });
    expect(await read('group=rbac.authorization.k8s.io&version=v1&kind=ClusterRole&name=app-dev-reader')).toBe(200);
  });

  it('without a mapping: the app’s environment, as before', async () => {
    const { read } = await start(undefined);
    expect(await read(cm('staging'))).toBe(200);
  });
});
