// Git versus live for one app, as one user may see it: wires the diff engine (app-diff.ts) to the cluster
// cache, discovery, the renderers and, in impersonation mode, the user's Kubernetes RBAC; records each new
// render as evidence (an observation: retried until written, never dropped). No Fastify types here.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { App } from '../../domain/app.ts';
import { splitApiVersion } from '../../domain/refs.ts';
import type { Principal } from '../auth/sessions.ts';
import type { AppDeps } from '../deps.ts';
import { HttpError } from '../http/errors.ts';
import type { ManagedCluster } from '../kube/cluster-manager.ts';
import { Discovery } from '../kube/discovery.ts';
import { kindKey } from '../kube/kinds.ts';
import { connectionFor, managedCluster } from '../kube/user-connection.ts';
import { diffApp, renderDesired, type AppDiff, type DiffDeps } from './app-diff.ts';
import { trackerOf } from './app-tree.ts';
import { compareRenders, type EnvCompare } from './env-compare.ts';
import type { Obj, RenderTools } from './render.ts';
import { maskSecrets } from './secret-mask.ts';

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

type ServiceDeps = Pick<AppDeps, 'clusters' | 'catalog' | 'index' | 'reviewer' | 'recorder' | 'dataDir'>;

export class DiffService {
  private readonly discoveries = new Map<string, Discovery>();
  private readonly lastRender = new Map<string, string>();
  private readonly tools: RenderTools;

  constructor(private readonly deps: ServiceDeps) {
    this.tools = renderTools(deps.dataDir ?? '.data');
  }

  /** Git versus live for one app; a new render hash is recorded as `app.rendered`. */
  async diff(a: App, user: Principal | undefined): Promise<AppDiff> {
    const result = await diffApp(a, await this.diffDeps(a, user));
    if (result.render && this.lastRender.get(a.id) !== result.render.renderHash) {
      this.lastRender.set(a.id, result.render.renderHash);
      this.deps.recorder.observe({
        time: new Date().toISOString(),
        type: 'app.rendered',
        actor: 'console',
        app: a.id,
        cluster: a.cluster,
        env: a.env,
        data: { ...result.render },
      });
    }
    return result;
  }

  /** The same app's renders across its environments (the family this user may see), compared field by field. */
  async environments(family: App[], user: Principal | undefined): Promise<EnvCompare> {
    const rendered = await Promise.all(
      family.map(async (m) => {
        const base = { env: m.env, appId: m.id, cluster: m.cluster };
        try {
          const render = await renderDesired(m, await this.diffDeps(m, user));
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
    return {
      envs: rendered.map((r) => ({
        env: r.env,
        appId: r.appId,
        cluster: r.cluster,
        ...('render' in r && r.render ? { revision: r.render.revision, renderHash: r.render.renderHash } : {}),
        ...('error' in r && r.error ? { error: r.error } : {}),
      })),
      ...cmp,
    };
  }

  private discovery(mc: ManagedCluster): Discovery {
    let d = this.discoveries.get(mc.name);
    if (!d) this.discoveries.set(mc.name, (d = new Discovery(mc.conn)));
    return d;
  }

  /** The diff engine's inputs for one app as one user sees it. */
  private async diffDeps(a: App, user: Principal | undefined): Promise<DiffDeps> {
    const { catalog, reviewer } = this.deps;
    const index = this.deps.index;
    if (!index) throw new HttpError(400, 'BadRequest', 'no object index');
    const raw = catalog.rawObject(a.id);
    if (!raw) throw new HttpError(404, 'NotFound', `app ${a.id} is not in the console's cache`, a.cluster);
    const mc = managedCluster(this.deps.clusters, a.cluster);
    const d = this.discovery(mc);
    const srcKey = a.source.kind ? kindKey(a.source.kind) : undefined;
    const srcNs = String(
      ((raw.spec as Obj | undefined)?.sourceRef as { namespace?: string } | undefined)?.namespace ?? a.namespace,
    );
    const source = srcKey && a.source.name ? mc.get(srcKey, srcNs, a.source.name) : undefined;
    // impersonation: dry-runs and reads go out as the user, and what comes from the console's cache is
    // filtered by the user's Kubernetes RBAC too
    const conn = connectionFor(mc, reviewer, user);
    const mayGet = async (apiVersion: string, kind: string, namespace: string | undefined): Promise<boolean> => {
      if (!reviewer || !user) return true;
      const { group, version } = splitApiVersion(apiVersion);
      return reviewer
        .allowed(user, { cluster: a.cluster, verb: 'get', group, version, kind, namespace })
        .catch(() => false);
    };
    let tracked = index.trackedBy(a.cluster, trackerOf(a));
    if (reviewer && user) {
      const visible: Obj[] = [];
      for (const o of tracked) {
        const ns = (o.metadata as { namespace?: string } | undefined)?.namespace;
        if (await mayGet(String(o.apiVersion ?? 'v1'), String(o.kind), ns)) visible.push(o);
      }
      tracked = visible;
    }
    const configMapsReadable = await mayGet('v1', 'ConfigMap', a.namespace);
    return {
      conn,
      discovery: d,
      tools: this.tools,
      appObject: raw,
      ...(source ? { sourceObject: source } : {}),
      configMap: (ns, name) =>
        configMapsReadable ? index.get(a.cluster, { group: '', kind: 'ConfigMap', namespace: ns, name }) : undefined,
      tracked: () => tracked,
      async getLive(ref) {
        const { group } = splitApiVersion(ref.apiVersion);
        if (!(await mayGet(ref.apiVersion, ref.kind, ref.namespace)))
          throw new Error(
            `Kubernetes RBAC does not let ${user?.name ?? 'this user'} get ${ref.kind} in ${ref.namespace ?? 'the cluster scope'}`,
          );
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
  }
}
