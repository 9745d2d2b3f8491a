import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import { DiffResponse, EnvCompareResponse } from '../../api/schemas.ts';
import type { App } from '../../domain/app.ts';
import type { ManagedCluster } from '../kube/cluster-manager.ts';
import type { ObjectIndex } from '../services/object-index.ts';
import { compareRenders, familyOf } from '../services/env-compare.ts';
import { appOf, HttpError, type AppDeps } from '../app.ts';
import { allowed } from '../auth/guard.ts';
import type { Principal } from '../auth/sessions.ts';
import { AccessReviewer } from '../kube/access-review.ts';
import type { FastifyRequest } from 'fastify';
import { Discovery } from '../kube/discovery.ts';
import { kindKey } from '../kube/kinds.ts';
import { diffApp, renderDesired, type AppDiff, type DiffDeps } from '../services/app-diff.ts';
import { trackerOf } from '../services/app-tree.ts';
import { maskSecrets } from '../services/secret-mask.ts';
import type { Obj, RenderTools } from '../services/render.ts';

/** The renderers: explicit env, else the sandbox-built binaries, else PATH. */
export function renderTools(dataDir: string, repoRoot = process.cwd()): RenderTools {
  const local = (n: string) => (existsSync(join(repoRoot, '.sandbox/bin', n)) ? join(repoRoot, '.sandbox/bin', n) : n);
  return {
    fluxRender: process.env.CONSOLE_FLUX_RENDER ?? local('flux-render'),
    kustomize: process.env.CONSOLE_KUSTOMIZE ?? local('kustomize'),
    helm: process.env.CONSOLE_HELM ?? local('helm'),
    jqDel: process.env.CONSOLE_JQ_DEL ?? local('jq-del'),
    workDir: join(dataDir, 'render-cache'),
  };
}

export const diffRoutes: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  const discoveries = new Map<string, Discovery>();
  const lastRender = new Map<string, string>();
  const tools = renderTools(deps.dataDir ?? '.data');

  const depsFor = async (a: App, raw: Obj, mc: ManagedCluster, req?: FastifyRequest): Promise<DiffDeps> => {
    const user = req?.principal as Principal | undefined;
    const reviewer = deps.reviewer;
    let discovery = discoveries.get(mc.name);
    if (!discovery) discoveries.set(mc.name, (discovery = new Discovery(mc.conn)));
    const d = discovery;
    const index = deps.index as ObjectIndex;
    const srcKey = a.source.kind ? kindKey(a.source.kind) : undefined;
    const srcNs = String(
      ((raw.spec as Obj | undefined)?.sourceRef as { namespace?: string } | undefined)?.namespace ?? a.namespace,
    );
    const source = srcKey && a.source.name ? mc.get(srcKey, srcNs, a.source.name) : undefined;
    // impersonation: dry-runs and reads go out as the user, and what comes from the console's cache is
    // filtered by the user's Kubernetes RBAC too
    const conn = reviewer && user ? mc.conn.withHeaders(AccessReviewer.headers(user)) : mc.conn;
    let tracked = index.trackedBy(a.cluster, trackerOf(a));
    let configMapsReadable = true;
    if (reviewer && user) {
      const visible: Obj[] = [];
      for (const o of tracked) {
        const [group, version] = String(o.apiVersion ?? 'v1').includes('/')
          ? String(o.apiVersion).split('/')
          : ['', String(o.apiVersion ?? 'v1')];
        const ns = (o.metadata as { namespace?: string } | undefined)?.namespace;
        const target = {
          cluster: a.cluster,
          verb: 'get',
          group: group ?? '',
          version: version ?? 'v1',
          kind: String(o.kind),
          namespace: ns,
        };
        if (await reviewer.allowed(user, target).catch(() => false)) visible.push(o);
      }
      tracked = visible;
      configMapsReadable = await reviewer
        .allowed(user, {
          cluster: a.cluster,
          verb: 'get',
          group: '',
          version: 'v1',
          kind: 'ConfigMap',
          namespace: a.namespace,
        })
        .catch(() => false);
    }
    return {
      conn,
      discovery: d,
      tools,
      appObject: raw,
      ...(source ? { sourceObject: source } : {}),
      configMap: (ns, name) =>
        configMapsReadable ? index.get(a.cluster, { group: '', kind: 'ConfigMap', namespace: ns, name }) : undefined,
      tracked: () => tracked,
      async getLive(ref) {
        const group = ref.apiVersion.includes('/') ? (ref.apiVersion.split('/')[0] ?? '') : '';
        if (reviewer && user) {
          const version = ref.apiVersion.split('/').at(-1) ?? 'v1';
          const target = { cluster: a.cluster, verb: 'get', group, version, kind: ref.kind, namespace: ref.namespace };
          if (!(await reviewer.allowed(user, target)))
            throw new Error(
              `Kubernetes RBAC does not let ${user.name} get ${ref.kind} in ${ref.namespace ?? 'the cluster scope'}`,
            );
        }
        if (index.watches(group, ref.kind))
          return index.get(a.cluster, {
            group,
            kind: ref.kind,
            ...(ref.namespace ? { namespace: ref.namespace } : {}),
            name: ref.name,
          });
        const path = await d.path(ref.apiVersion, ref.kind, ref.namespace, ref.name);
        const res = await conn.request('GET', path, { timeoutMs: 10_000 });
        if (res.status === 404) return undefined;
        if (res.status !== 200) throw mc.conn.httpError(res, `GET ${ref.kind}`);
        return JSON.parse(res.body) as Obj;
      },
    };
  };

  app.get(
    '/api/apps/:cluster/:namespace/:kind/:name/environments',
    { config: { access: { action: 'app.read', scope: 'app' } } },
    async (req) => {
      if (!deps.index) throw new HttpError(400, 'BadRequest', 'no object index');
      const a = await appOf(req, deps);
      // only the environments this user may read
      const mine = deps.catalog.list().filter((m) => allowed(req, 'app.read', { cluster: m.cluster, env: m.env }));
      const family = familyOf(a, deps.reviewer ? await deps.reviewer.visibleApps(req, mine) : mine, deps.envOrder);
      const rendered = await Promise.all(
        family.map(async (m) => {
          const raw = deps.catalog.rawObject(m.id);
          const mc = deps.clusters.clusters.get(m.cluster);
          const base = { env: m.env, appId: m.id, cluster: m.cluster };
          if (!raw || !mc) return { ...base, error: 'app object not in cache' };
          try {
            const render = await renderDesired(m, await depsFor(m, raw, mc, req));
            // Secret values never leave the BFF: compare masks (equal values, equal masks)
            return { ...base, render: { ...render, objects: render.objects.map((o) => maskSecrets(o)) } };
          } catch (e) {
            return { ...base, error: e instanceof Error ? e.message : String(e) };
          }
        }),
      );
      const cmp = compareRenders(
        rendered.map((r) => ({ env: r.env, ...('render' in r && r.render ? { render: r.render } : {}) })),
      );
      return EnvCompareResponse.parse({
        envs: rendered.map((r) => ({
          env: r.env,
          appId: r.appId,
          cluster: r.cluster,
          ...('render' in r && r.render ? { revision: r.render.revision, renderHash: r.render.renderHash } : {}),
          ...('error' in r && r.error ? { error: r.error } : {}),
        })),
        ...cmp,
      });
    },
  );

  app.get(
    '/api/apps/:cluster/:namespace/:kind/:name/diff',
    { config: { access: { action: 'app.read', scope: 'app' } } },
    async (req) => {
      if (!deps.index) throw new HttpError(400, 'BadRequest', 'no object index');
      const a = await appOf(req, deps);
      const id = a.id;
      const raw = deps.catalog.rawObject(id);
      const mc = deps.clusters.clusters.get(a.cluster);
      if (!raw || !mc) throw new HttpError(404, 'NotFound', `no app ${id}`);
      const result: AppDiff = await diffApp(a, await depsFor(a, raw, mc, req));
      if (result.render && lastRender.get(id) !== result.render.renderHash) {
        lastRender.set(id, result.render.renderHash);
        await deps.store.append({
          time: new Date().toISOString(),
          type: 'app.rendered',
          actor: 'console',
          app: id,
          cluster: a.cluster,
          env: a.env,
          data: { ...result.render },
        });
      }
      return DiffResponse.parse(result);
    },
  );
};
