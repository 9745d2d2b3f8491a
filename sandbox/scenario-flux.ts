// Scenario helpers on Flux (its real controllers run in every sandbox cluster; re-exported by scenario.ts):
// patch, point, suspend and resume a Kustomization, ask for a reconcile, and wait until a Kustomization applied
// a revision (a timeout says why: the objects' states and the controllers' last log lines).
import { join } from 'node:path';
import { kubectl, RUN_DIR } from './state.ts';
import { sleep, tail, waitFor } from './procs.ts';
import { conditions, getJson } from './scenario-kube.ts';

type Json = Record<string, unknown>;

/** A merge patch of a Flux object's spec with kubectl (`manager`: the field manager, as the flux CLI names itself). */
export function patchFluxSpec(
  cluster: string,
  target: { kind: 'kustomization' | 'helmrelease'; namespace?: string; name: string },
  spec: Json,
  manager?: string,
): void {
  kubectl(cluster, [
    ...['-n', target.namespace ?? 'flux-system', 'patch', target.kind, target.name, '--type', 'merge'],
    ...(manager ? ['--field-manager', manager] : []),
    ...['-p', JSON.stringify({ spec })],
  ]);
}

/** Points a Kustomization at another path, as someone with kubectl would (the sandbox applies it, not Git). */
export function setKustomizationPath(cluster: string, name: string, path: string): void {
  patchFluxSpec(cluster, { kind: 'kustomization', name }, { path });
}

/** Asks Flux to reconcile now (what `flux reconcile` does: the requestedAt annotation). */
export function requestReconcile(cluster: string, kind: 'gitrepository' | 'kustomization', name: string): void {
  kubectl(cluster, [
    '-n',
    'flux-system',
    'annotate',
    '--overwrite',
    `${kind}/${name}`,
    `reconcile.fluxcd.io/requestedAt=${new Date().toISOString()}`,
  ]);
}

/** One line on a Flux object's state: what a timed-out wait prints (suspend, revisions, Ready's reason and message). */
function fluxStatusLine(cluster: string, kind: 'gitrepository' | 'kustomization', name: string): string {
  try {
    const o = getJson(cluster, ['-n', 'flux-system', 'get', kind, name]);
    const spec = (o.spec ?? {}) as Json;
    const st = (o.status ?? {}) as Json;
    const ready = conditions(o).find((c) => c.type === 'Ready');
    const artifact = (st.artifact ?? {}) as Json;
    return [
      `${cluster} ${kind}/${name}:`,
      spec.suspend === true ? 'SUSPENDED' : '',
      kind === 'kustomization'
        ? `applied=${String(st.lastAppliedRevision ?? '-')} attempted=${String(st.lastAttemptedRevision ?? '-')}`
        : `artifact=${String(artifact.revision ?? '-')}`,
      `Ready=${String(ready?.status ?? '-')} ${String(ready?.reason ?? '')}: ${String(ready?.message ?? '').slice(0, 300)}`,
    ]
      .filter(Boolean)
      .join(' ');
  } catch (e) {
    return `${cluster} ${kind}/${name}: unreadable (${e instanceof Error ? e.message.split('\n')[0] : String(e)})`;
  }
}

/** The GitRepository a Kustomization reads (the seed repo's when it cannot be read). */
function sourceOf(cluster: string, name: string): string {
  try {
    const k = getJson(cluster, ['-n', 'flux-system', 'get', 'kustomization', name]);
    return String(((k.spec as Json | undefined)?.sourceRef as Json | undefined)?.name ?? 'digital-human');
  } catch {
    return 'digital-human';
  }
}

/**
 * Waits until a Kustomization applied `sha` and is Ready, nudging the source and it every 5 s. A timeout says why:
 * the Kustomization's, its source's and its dependencies' states, and the tail of the cluster's kustomize-controller
 * and source-controller logs (a CI log is all there is of a run on a machine that is gone).
 */
export async function waitForKustomizationRevision(
  cluster: string,
  name: string,
  sha: string,
  timeoutMs = 120_000,
  /** commits that count as well: ones pushed after `sha` to the same branch (a busy repository may skip past it) */
  later: readonly string[] = [],
): Promise<void> {
  const accepted = [sha, ...later];
  // the Kustomization's own source (the seed repo's, or a test estate's: test/support/own-estate.ts)
  let source = sourceOf(cluster, name);
  requestReconcile(cluster, 'gitrepository', source);
  let lastNudge = Date.now();
  let dependsOn: string[] = [];
  try {
    await waitFor(
      `${cluster}/${name} at ${sha.slice(0, 8)}`,
      async () => {
        const k = getJson(cluster, ['-n', 'flux-system', 'get', 'kustomization', name]);
        const st = k.status as Json | undefined;
        const ready = conditions(k).find((c) => c.type === 'Ready');
        dependsOn = (((k.spec as Json | undefined)?.dependsOn as Json[] | undefined) ?? []).map((d) => String(d.name));
        source = String(((k.spec as Json | undefined)?.sourceRef as Json | undefined)?.name ?? source);
        if (Date.now() - lastNudge > 5000) {
          lastNudge = Date.now();
          requestReconcile(cluster, 'gitrepository', source);
          requestReconcile(cluster, 'kustomization', name);
          // a dependent waits until its dependencies on the same source applied the same revision
          for (const d of dependsOn) requestReconcile(cluster, 'kustomization', d);
        }
        const applied = String(st?.lastAppliedRevision ?? '');
        return accepted.some((c) => applied.endsWith(c)) && ready?.status === 'True';
      },
      { timeoutMs, intervalMs: 500 },
    );
  } catch (e) {
    // the controllers' last lines about this object, or errors, each cut to 400 characters
    const logs = ['kustomize-controller', 'source-controller']
      .map((c) => {
        const lines = tail(join(RUN_DIR, 'clusters', cluster, `${c}.log`), 400)
          .split('\n')
          .filter((l) => l.includes(`"name":"${name}"`) || l.includes(source) || /"level":"error"/.test(l))
          .slice(-10)
          .map((l) => l.slice(0, 400));
        return `--- ${c}\n${lines.join('\n')}`;
      })
      .join('\n');
    const states = [
      fluxStatusLine(cluster, 'kustomization', name),
      fluxStatusLine(cluster, 'gitrepository', source),
      ...dependsOn.map((d) => fluxStatusLine(cluster, 'kustomization', d)),
    ].join('\n');
    throw new Error(`${e instanceof Error ? e.message : String(e)}\n${states}\n${logs}`);
  }
}

/**
 * Test clean-up in a governed namespace: waits for a Kustomization at `sha` while deleting `objects` (e.g.
 * `secret/leak-probe`) as the sandbox admin, because the console's prune admission policy
 * (deploy/prune-admission-policy.yaml) denies kustomize-controller's own prune of them without an approved preview.
 */
export async function waitForRevisionPrunedByAdmin(
  cluster: string,
  name: string,
  sha: string,
  namespace: string,
  objects: string[],
  timeoutMs = 180_000,
): Promise<void> {
  let done = false;
  const deleter = (async () => {
    while (!done) {
      kubectl(cluster, ['-n', namespace, 'delete', ...objects, '--ignore-not-found', '--wait=false']);
      await sleep(2000);
    }
  })();
  try {
    await waitForKustomizationRevision(cluster, name, sha, timeoutMs);
  } finally {
    done = true;
    await deleter;
  }
}

/** Suspends or resumes a Flux Kustomization (what `flux suspend|resume kustomization` does). */
export function setSuspended(cluster: string, name: string, suspend: boolean): void {
  patchFluxSpec(cluster, { kind: 'kustomization', name }, { suspend }, 'flux-client-side-apply');
}

/**
 * Suspends a Kustomization and waits until kustomize-controller has handled the suspended object: a reconcile that
 * began before the suspend still applies, and would revert an edit a test makes right after. Waiting for "no
 * `Reconciling` condition" was not enough (a reconcile that had read the object but not yet written its status
 * looked settled; cli.test saw its edit reverted). So the suspend carries a reconcile request
 * (`reconcile.fluxcd.io/requestedAt`) in the same patch, and the wait is for `status.lastHandledReconcileAt` to
 * echo it: the controller writes it only from a reconcile that read the suspended object, and it reconciles one
 * object at a time, so every earlier reconcile has finished by then.
 */
export async function suspendSettled(cluster: string, name: string, timeoutMs = 60_000): Promise<void> {
  const token = `suspend-${new Date().toISOString()}-${Math.random().toString(36).slice(2, 8)}`;
  kubectl(cluster, [
    ...['-n', 'flux-system', 'patch', 'kustomization', name, '--type', 'merge'],
    ...['--field-manager', 'flux-client-side-apply'],
    ...[
      '-p',
      JSON.stringify({
        metadata: { annotations: { 'reconcile.fluxcd.io/requestedAt': token } },
        spec: { suspend: true },
      }),
    ],
  ]);
  await waitFor(
    `${cluster}/${name} suspended, and the controller handled the suspended object`,
    async () => {
      const k = getJson(cluster, ['-n', 'flux-system', 'get', 'kustomization', name]);
      return (k.status as { lastHandledReconcileAt?: string } | undefined)?.lastHandledReconcileAt === token;
    },
    { timeoutMs, intervalMs: 250 },
  );
}
