// A HelmRelease on a test file's own estate (./own-estate.ts): the seed's `status-page` release (sandbox/helm-charts.ts
// helmReleaseFiles: the chart from the sandbox's OCI registry through the shared HelmRepository in flux-system,
// values inline and from a ConfigMap beside it) in the estate's repository, applied by the estate's Flux
// Kustomization `infra` into the estate's namespace (governed when asked, mapped to dev). The seed's HelmRelease is
// only read. A chart upgrade or a changed value is a commit to the estate's repository (`commit`).
//
//   const helm = await helmEstate({ name: 'helmrelease', governed: true });
//   await helm.commit('status-page: chart 0.2.0', { version: '0.2.0' });
//   …
//   await helm.teardown();
import { helmReleaseFiles, STATUS_PAGE_CHART } from '../../sandbox/helm-charts.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { writeRepoFile } from '../../sandbox/scenario.ts';
import { kubectl } from '../../sandbox/state.ts';
import { ownEstate, type Estate } from './own-estate.ts';

/** the estate's app that applies the HelmRelease (its Kustomization is `<estate id>-infra`) */
export const HELM_APP = 'infra';
const DIR = 'infra/dev';

export type ReleaseOptions = Parameters<typeof helmReleaseFiles>[0];

/**
 * The seed's HelmRelease files at `opts`, without the seed's namespace (`dev`): the estate's Kustomization puts
 * them in its own (targetNamespace). The chart's source stays the sandbox's HelmRepository in flux-system.
 */
export function estateReleaseFiles(opts: ReleaseOptions = {}): Record<string, string> {
  return Object.fromEntries(
    Object.entries(helmReleaseFiles(opts)).map(([path, text]) => {
      if (!path.startsWith(`${DIR}/`)) throw new Error(`helmReleaseFiles wrote ${path}, not under ${DIR}/`);
      const own = text.replace(/^ {2}namespace: dev\n/gm, '');
      if (/namespace: dev\b/.test(own)) throw new Error(`${path} still names the seed's namespace dev`);
      return [path, own];
    }),
  );
}

export interface HelmEstate {
  estate: Estate;
  /** the HelmRelease's name (the release's objects are named after it) */
  name: string;
  /** the HelmRelease's id in the console: `<cluster>/<namespace>/helmrelease/<name>` */
  app: string;
  /** the HelmChart helm-controller makes for it in the source's namespace: `flux-system/<namespace>-<name>` */
  helmChart: string;
  /** commits the HelmRelease's files at `opts` to the estate's repository; resolves once Flux applied that commit */
  commit(message: string, opts: ReleaseOptions): Promise<string>;
  /** kubectl (as the sandbox admin) in the estate's namespace */
  kubectl(args: string[]): string;
  teardown(): Promise<void>;
}

export async function helmEstate(opts: { name: string; governed?: boolean }): Promise<HelmEstate> {
  const estate = await ownEstate({
    name: opts.name,
    env: 'dev',
    governed: opts.governed,
    files: {
      ...estateReleaseFiles(),
      [`${DIR}/kustomization.yaml`]: `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ${STATUS_PAGE_CHART}.yaml
`,
    },
    apps: [{ name: HELM_APP, path: DIR }],
  });
  const { cluster, namespace } = estate;
  const k = (args: string[]) => kubectl(cluster, ['-n', namespace, ...args]);
  return {
    estate,
    name: STATUS_PAGE_CHART,
    app: `${cluster}/${namespace}/helmrelease/${STATUS_PAGE_CHART}`,
    helmChart: `flux-system/${namespace}-${STATUS_PAGE_CHART}`,
    kubectl: k,
    async commit(message, release) {
      const sha = estate.push(message, (w) => {
        for (const [f, text] of Object.entries(estateReleaseFiles(release))) writeRepoFile(w, f, text);
      });
      await estate.waitApplied(sha, HELM_APP);
      return sha;
    },
    async teardown() {
      // helm-controller uninstalls the release when its HelmRelease goes: in a governed namespace its deletes of
      // the release's objects are held by the prune policy (no approved preview), so the admin (the sandbox's
      // set-up) deletes them while the HelmRelease goes; its HelmChart in flux-system goes with it
      try {
        kubectl(cluster, [
          ...['-n', 'flux-system', 'patch', 'kustomization', estate.kustomization(HELM_APP)],
          ...['--type=merge', '-p', JSON.stringify({ spec: { prune: false, suspend: true } })],
        ]);
        k(['delete', 'helmrelease', STATUS_PAGE_CHART, '--ignore-not-found', '--wait=false']);
        await waitFor(
          `${namespace}/${STATUS_PAGE_CHART} uninstalled`,
          async () => {
            const objects = ['deployment', 'service', 'configmap'].map((kind) => `${kind}/${STATUS_PAGE_CHART}`);
            k(['delete', ...objects, `configmap/${STATUS_PAGE_CHART}-banner`, '--ignore-not-found', '--wait=false']);
            return k(['get', 'helmrelease', STATUS_PAGE_CHART, '--ignore-not-found', '-o', 'name']).trim() === '';
          },
          { timeoutMs: 90_000, intervalMs: 1000 },
        );
      } finally {
        await estate.teardown();
      }
    },
  };
}
