// Scenario helpers on live objects (re-exported by scenario.ts): read an object, change it as a given field
// manager (kubectl edit, kubectl scale, a second controller, the HPA controller), wait for a Deployment.
import { waitFor } from './procs.ts';
import { kubectl } from './state.ts';

type Json = Record<string, unknown>;

/** What `kubectl edit` does: a strategic merge patch with field manager kubectl-edit (operation Update). */
/** A kubectl-edit style patch; returns the object as the apiserver wrote it (a controller may revert it a moment later). */
export function kubectlEdit(cluster: string, kindName: string, namespace: string, patch: Json): Json {
  const out = kubectl(cluster, [
    '-n',
    namespace,
    'patch',
    kindName,
    '--type',
    'strategic',
    '--field-manager',
    'kubectl-edit',
    '-o',
    'json',
    '--show-managed-fields',
    '-p',
    JSON.stringify(patch),
  ]);
  return JSON.parse(out) as Json;
}

/** The incident edit used by tests and fixtures: render-worker to 12 replicas plus a DEBUG_TRACE env var, by kubectl-edit. */
export function incidentEditRenderWorker(cluster: string, namespace: string): void {
  kubectlEdit(cluster, 'deployment/render-worker', namespace, {
    spec: {
      replicas: 12,
      template: {
        spec: {
          containers: [
            {
              name: 'render',
              env: [
                { name: 'RENDER_QUALITY', value: 'standard' },
                { name: 'DEBUG_TRACE', value: '1' },
              ],
            },
          ],
        },
      },
    },
  });
}

/** What `kubectl scale` does: an Update of the scale subresource. */
export function kubectlScale(cluster: string, kindName: string, namespace: string, replicas: number): void {
  kubectl(cluster, ['-n', namespace, 'scale', kindName, `--replicas=${replicas}`]);
}

/** A second controller (the cloud-controller pattern) writing a Service annotation. */
export function annotateServiceAsController(
  cluster: string,
  namespace: string,
  service: string,
  key: string,
  value: string,
  manager = 'cloud-lb-controller',
): void {
  kubectl(cluster, [
    '-n',
    namespace,
    'patch',
    'service',
    service,
    '--type',
    'merge',
    '--field-manager',
    manager,
    '-p',
    JSON.stringify({ metadata: { annotations: { [key]: value } } }),
  ]);
}

export function getJson(cluster: string, args: string[]): Json {
  return JSON.parse(kubectl(cluster, [...args, '-o', 'json', '--show-managed-fields'])) as Json;
}

/** An object's status conditions (none when it has none). */
export const conditions = (o: Json): Array<{ type: string; status: string; reason?: string; message?: string }> =>
  ((o.status as Json | undefined)?.conditions as Array<{ type: string; status: string }>) ?? [];

export async function waitForDeploymentAvailable(
  cluster: string,
  ns: string,
  name: string,
  timeoutMs = 120_000,
): Promise<Json> {
  let last: Json = {};
  await waitFor(
    `${cluster}/${ns}/deployment/${name} available`,
    async () => {
      last = getJson(cluster, ['-n', ns, 'get', 'deployment', name]);
      const st = last.status as Json | undefined;
      const spec = last.spec as Json;
      const avail = conditions(last).find((c) => c.type === 'Available');
      return (
        avail?.status === 'True' && st?.updatedReplicas === spec.replicas && st?.availableReplicas === spec.replicas
      );
    },
    { timeoutMs, intervalMs: 500 },
  );
  return last;
}

/** What the HPA controller does: an Update of the scale subresource, as field manager kube-controller-manager. */
export function scaleAsController(
  cluster: string,
  deployment: string,
  namespace: string,
  replicas: number,
  manager = 'kube-controller-manager',
): void {
  kubectl(cluster, [
    '-n',
    namespace,
    'patch',
    'deployment',
    deployment,
    '--subresource=scale',
    '--type',
    'merge',
    '--field-manager',
    manager,
    '-p',
    JSON.stringify({ spec: { replicas } }),
  ]);
}
