// The prune tests' set-up on prod, once: an estate of the test file's own on the prod cluster (./own-estate.ts)
// whose Flux Kustomization has `prune: false` — like the seed's digital-human-prod — so objects removed from Git
// leave its inventory and stay live, and the console is the one that deletes them (after approval). Its namespace
// is governed, like prod's. "Probe" ConfigMaps are in the repository's first commit (in the prod overlay, one line
// in its kustomization.yaml), applied by Flux; then a second commit takes them out of Git again. What is left is
// the probes live, tracked by the Kustomization's labels, and nothing else of anyone else's: a preview of the
// estate's app lists exactly the probes. Teardown deletes the estate (its namespace, the probes with it).
//
//   const probes = await prodProbeEstate({ name: 'prune-people', probes: ['people-probe-0', …] });
//   await probes.consoleAt(con.url, con.admin);          // the console renders the commit without the probes
//   POST /api/apps/${probes.app}/prune-previews …
//   await probes.teardown();
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../../sandbox/procs.ts';
import { requestReconcile, writeRepoFile } from '../../sandbox/scenario.ts';
import { kubectl } from '../../sandbox/state.ts';
import { as, type Signed } from './auth.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from './own-estate.ts';

export const OVERLAY = 'overlays/prod/kustomization.yaml';

export interface Probe {
  name: string;
  /** e.g. kustomize.toolkit.fluxcd.io/prune: disabled (Flux's protection) */
  annotations?: Record<string, string>;
}

export interface ProbeEstateOptions {
  /** the test file's short name (part of the estate's names) */
  name: string;
  /** the probe ConfigMaps (names, or names with annotations), in the estate's namespace */
  probes: Array<string | Probe>;
  /**
   * what else the app renders: `digital-human` is the seed's prod service (base/ and overlays/prod/: three
   * Deployments, their Services, an HPA, two ConfigMaps), where the tests need its size (the 25 % limit) or its
   * objects; `minimal` (default) is two ConfigMaps, enough for an app that is not empty
   */
  template?: 'digital-human' | 'minimal';
}

export interface ProdProbeEstate {
  estate: Estate;
  /** the app's id in the console */
  app: string;
  /** the probes' names, sorted */
  names: string[];
  /** the commit that took the probes out of Git (Flux applied it) */
  removed: string;
  /** the probes live now, by name (one LIST) */
  liveProbes(): Set<string>;
  isLive(name: string): boolean;
  /** kubectl (as the sandbox admin) in the estate's namespace on prod */
  kubectl(args: string[], input?: string): string;
  /**
   * Until the console at `base` renders the app at `sha` (default: the commit without the probes) or a later commit
   * of the estate (its busy() committer's): the GitRepository is asked to fetch on every look.
   */
  consoleAt(base: string, session: Signed, sha?: string): Promise<void>;
  teardown(): Promise<void>;
}

/** A minimal prod app: two ConfigMaps (one generated), labelled like the seed's overlay. */
export function minimalProdTemplate(): Record<string, string> {
  return {
    [OVERLAY]: `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
labels:
  - pairs:
      env: prod
resources:
  - settings.yaml
configMapGenerator:
  - name: env-settings
    literals:
      - ENVIRONMENT=prod
`,
    'overlays/prod/settings.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: render-worker-config
data:
  max-sessions: "8"
`,
  };
}

/** A ConfigMap probe as YAML. */
export function probeYaml(p: Probe): string {
  const annotations = Object.entries(p.annotations ?? {});
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${p.name}\n${
    annotations.length
      ? `  annotations:\n${annotations.map(([k, v]) => `    ${k}: ${JSON.stringify(v)}`).join('\n')}\n`
      : ''
  }data:\n  probe: "${p.name}"\n`;
}

/** The overlay's kustomization.yaml with `file` as its first resource. */
export function withResource(kustomization: string, file: string): string {
  const next = kustomization.replace(/^resources:\n/m, `resources:\n  - ${file}\n`);
  if (next === kustomization) throw new Error(`${OVERLAY} has no resources list`);
  return next;
}

export async function prodProbeEstate(opts: ProbeEstateOptions): Promise<ProdProbeEstate> {
  const probes: Probe[] = opts.probes.map((p) => (typeof p === 'string' ? { name: p } : p));
  const names = probes.map((p) => p.name).sort();
  const file = `${opts.name.replace(/[^a-z0-9-]/gi, '-')}-probe.yaml`;
  const template = opts.template === 'digital-human' ? digitalHumanTemplate('prod') : minimalProdTemplate();
  const overlay = template[OVERLAY];
  if (overlay === undefined) throw new Error(`the template has no ${OVERLAY}`);
  const estate = await ownEstate({
    name: opts.name,
    env: 'prod',
    // the probes are in the first commit: the estate is ready once Flux applied them
    files: {
      ...template,
      [`overlays/prod/${file}`]: probes.map(probeYaml).join('---\n'),
      [OVERLAY]: withResource(overlay, file),
    },
    apps: [{ name: 'app', path: 'overlays/prod', prune: false }],
    governed: true,
  });
  const k = (args: string[], input?: string) => kubectl(estate.cluster, ['-n', estate.namespace, ...args], input);
  const wanted = new Set(names);
  const liveProbes = () =>
    new Set(
      k(['get', 'configmaps', '-o', 'jsonpath={.items[*].metadata.name}'])
        .split(/\s+/)
        .filter((n) => wanted.has(n)),
    );
  try {
    const live = liveProbes();
    if (live.size !== names.length)
      throw new Error(`${live.size} of ${names.length} probes live after the first commit`);
    // removed from Git: prune: false keeps them live (and drops them from Flux's inventory)
    const removed = estate.push(`${opts.name} probes: remove from Git`, (w) => {
      const path = join(w, OVERLAY);
      writeRepoFile(w, OVERLAY, readFileSync(path, 'utf8').replace(`  - ${file}\n`, ''));
      rmSync(join(w, 'overlays/prod', file), { force: true });
    });
    await estate.waitApplied(removed);
    return {
      estate,
      app: estate.appId(),
      names,
      removed,
      liveProbes,
      isLive: (name) => k(['get', 'configmap', name, '--ignore-not-found', '-o', 'name']).trim() !== '',
      kubectl: k,
      async consoleAt(base, session, sha = removed) {
        await waitFor(
          `the console renders ${estate.id} at ${sha.slice(0, 8)}`,
          async () => {
            requestReconcile(estate.cluster, 'gitrepository', estate.source);
            const r = await as(session, base, `/api/apps/${estate.appId()}`);
            const rev =
              (r.body as { app?: { source?: { revisionWanted?: string } } }).app?.source?.revisionWanted ?? '';
            return estate.atOrAfter(sha).some((c) => rev.endsWith(c));
          },
          { timeoutMs: 120_000, intervalMs: 1000 },
        );
      },
      teardown: () => estate.teardown(),
    };
  } catch (e) {
    await estate.teardown().catch(() => undefined);
    throw e;
  }
}
