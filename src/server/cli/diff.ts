// npm run cli -- diff <cluster>/<namespace>/<app> (dispatched by cli/main.ts, loaded only for `diff`: the
// Kubernetes client and the renderers cost seconds of start-up the other commands do not pay).
// Prints the same field diff the console shows, with owners. Exit 0: no difference, 1: differences, 2: error.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { readState } from '../../../sandbox/state.ts';
import type { App } from '../../domain/app.ts';
import { loadConfig } from '../config.ts';
import { diffApp, renderTools, type AppDiff, type Obj } from '../diff/index.ts';
import { configureUrlPolicy } from '../git/url-policy.ts';
import { applicationToApp } from '../gitops/argocd.ts';
import { helmChartOf, helmReleaseToApp, kustomizationToApp } from '../gitops/flux.ts';
import { ClusterManager } from '../kube/cluster-manager.ts';
import { ClusterConnection } from '../kube/connection.ts';
import { Discovery } from '../kube/discovery.ts';
import { resourcePath } from '../kube/informer.ts';
import { KINDS } from '../kube/kinds.ts';
import { sandboxGitHosts } from '../sandbox-git-hosts.ts';

const fmt = (v: unknown) => (v === undefined ? '∅' : typeof v === 'string' ? v : JSON.stringify(v));

export function printDiff(d: AppDiff, out: (s: string) => void): number {
  if (d.state === 'unknown') {
    out(`desired state UNKNOWN: ${d.error ?? ''}`);
    return 2;
  }
  out(
    `render: ${d.render?.renderer} · revision ${d.render?.revision} · ${d.render?.artifactDigest ?? 'no artifact digest'} · render ${d.render?.renderHash}`,
  );
  let differs = false;
  for (const o of d.objects) {
    if (o.status === 'unchanged' && !o.changes.some((c) => c.class === 'conflict')) continue;
    const mark = { changed: '~', missing: '+', extraneous: '-', unchanged: '=', unknown: '?', hook: 'h' }[o.status];
    out(
      `${mark} ${o.ref.kind} ${o.ref.namespace ? `${o.ref.namespace}/` : ''}${o.ref.name}  [${o.status}${o.mode === 'normalized' ? ', normalized comparison' : ''}]${o.note ? `  (${o.note})` : ''}`,
    );
    // an Argo CD hook is no difference: Argo CD compares none of it (its last run is printed instead)
    if (o.hook)
      out(
        `    hook ${o.hook.type}: ${o.hook.phase ?? 'no run recorded'}${o.hook.finishedAt ? ` at ${o.hook.finishedAt}` : ''}${o.hook.message ? ` (${o.hook.message})` : ''}`,
      );
    if (o.status !== 'unchanged' && o.status !== 'unknown' && o.status !== 'hook') differs = true;
    for (const c of o.changes) {
      if (c.class === 'defaulted' || c.class === 'ignored') continue;
      const owners = c.owners
        .map(
          (w) =>
            `${w.manager} (${w.operation}${w.subresource ? `/${w.subresource}` : ''}${w.time ? ` ${w.time}` : ''})`,
        )
        .join(', ');
      out(`    ${c.path}: git=${fmt(c.predicted)} live=${fmt(c.live)}  [${c.class}] ${owners}`);
    }
  }
  out(d.summary);
  return differs ? 1 : 0;
}
/** `diff <cluster>/<namespace>/<app>`: the app's field diff, printed; its exit code. */
export async function diffCli(target: string): Promise<number> {
  const [cluster, namespace, name] = target.split('/') as [string, string, string];
  const sandboxKc = join(process.cwd(), '.sandbox/kubeconfig');
  const kubeconfig =
    process.env.KUBECONFIG?.split(':')[0] ??
    (existsSync(sandboxKc) ? sandboxKc : join(process.env.HOME ?? '', '.kube/config'));
  const [ctx] = ClusterManager.loadContexts(kubeconfig, [cluster]);
  if (!ctx) return 2;
  // the Git URL policy as the console applies it (src/server/git/url-policy.ts); against the sandbox, its own
  // loopback Git endpoints are allowed by host and port
  const cfg = loadConfig(process.env, []);
  // (the sandbox's admin kubeconfig or its console identity's, .sandbox/kubeconfig-console)
  const sandboxKcs = [sandboxKc, join(process.cwd(), '.sandbox/kubeconfig-console')].map((k) => resolve(k));
  const sandbox = sandboxKcs.includes(resolve(kubeconfig)) ? readState() : undefined;
  configureUrlPolicy({
    ...cfg.git,
    allowHosts: [...(cfg.git?.allowHosts ?? []), ...(sandbox ? sandboxGitHosts(sandbox) : [])],
  });
  const conn = new ClusterConnection(cluster, ctx.kc);
  const discovery = new Discovery(conn);
  const get = async (path: string): Promise<Obj | undefined> => {
    const r = await conn.request('GET', path, { timeoutMs: 15_000 });
    if (r.status === 404) return undefined;
    if (r.status !== 200) throw conn.httpError(r, 'GET');
    return JSON.parse(r.body) as Obj;
  };
  try {
    let appObj: Obj | undefined;
    let app: App | undefined;
    const lookup = (kind: string, ns: string, n: string): Obj | undefined => cache.get(`${kind}/${ns}/${n}`);
    const cache = new Map<string, Obj>();
    for (const k of [KINDS.Kustomization, KINDS.Application, KINDS.HelmRelease]) {
      appObj = await get(`${resourcePath(k, namespace)}/${encodeURIComponent(name)}`).catch(() => undefined);
      if (!appObj) continue;
      if (k.kind === 'Kustomization' || k.kind === 'HelmRelease') {
        const ref = ((appObj.spec as Obj).sourceRef ?? (appObj.spec as Obj).chartRef ?? {}) as {
          kind?: string;
          name?: string;
          namespace?: string;
        };
        const sk = (KINDS as Record<string, typeof KINDS.GitRepository>)[ref.kind ?? 'GitRepository'];
        if (sk && ref.name) {
          const src = await get(`${resourcePath(sk, ref.namespace ?? namespace)}/${encodeURIComponent(ref.name)}`);
          if (src) cache.set(`${ref.kind}/${ref.namespace ?? namespace}/${ref.name}`, src);
        }
        app =
          k.kind === 'Kustomization'
            ? kustomizationToApp(cluster, appObj, lookup, 'env')
            : helmReleaseToApp(cluster, appObj, lookup, 'env');
      } else app = applicationToApp(cluster, appObj, 'env');
      break;
    }
    if (!app || !appObj) {
      process.stderr.write(`no Kustomization, Application or HelmRelease ${namespace}/${name} in ${cluster}\n`);
      return 2;
    }
    const a = app;
    // a HelmRelease renders from its chart's artifact (gitops/flux.ts helmChartOf)
    const chart = a.kind === 'HelmRelease' ? helmChartOf(appObj) : undefined;
    const chartKind = chart && (KINDS as Record<string, typeof KINDS.GitRepository>)[chart.kind];
    const chartObj =
      chart && chartKind
        ? await get(`${resourcePath(chartKind, chart.namespace)}/${encodeURIComponent(chart.name)}`)
        : undefined;
    const srcObj = chart
      ? chartObj
      : a.source.kind && a.source.name
        ? cache.get(
            `${a.source.kind}/${String(((appObj.spec as Obj).sourceRef as { namespace?: string } | undefined)?.namespace ?? namespace)}/${a.source.name}`,
          )
        : undefined;
    // the ConfigMaps the render reads (postBuild.substituteFrom, a HelmRelease's valuesFrom), read now
    const spec = (appObj.spec ?? {}) as Obj;
    const refs = [
      ...(((spec.postBuild as Obj | undefined)?.substituteFrom as unknown[] | undefined) ?? []),
      ...((spec.valuesFrom as unknown[] | undefined) ?? []),
    ] as Array<{ kind?: string; name?: string }>;
    const configMaps = new Map<string, Obj>();
    for (const r of refs.filter((x) => x.kind === 'ConfigMap' && x.name)) {
      const cm = await get(
        `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps/${encodeURIComponent(String(r.name))}`,
      );
      if (cm) configMaps.set(String(r.name), cm);
    }
    const result = await diffApp(a, {
      conn,
      discovery,
      tools: renderTools(mkdtempSync(join(tmpdir(), 'console-cli-'))),
      appObject: appObj,
      ...(srcObj ? { sourceObject: srcObj } : {}),
      configMap: (ns, n) => (ns === namespace ? configMaps.get(n) : undefined),
      tracked: () => [],
      async getLive(ref) {
        return get(await discovery.path(ref.apiVersion, ref.kind, ref.namespace, ref.name));
      },
    });
    return printDiff(result, (s) => process.stdout.write(`${s}\n`));
  } catch (e) {
    process.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`);
    return 2;
  } finally {
    conn.close();
  }
}
