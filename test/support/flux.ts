// Flux as tests drive it: reconcile now (the admin's requestedAt annotation, as `flux reconcile` writes
// it) and wait until the controller has handled that very request (status.lastHandledReconcileAt).
import { waitFor } from '../../sandbox/procs.ts';
import { getJson, requestReconcile } from '../../sandbox/scenario.ts';

export async function fluxReconciled(cluster: string, kustomization: string, timeoutMs = 90_000): Promise<void> {
  const request = () => {
    requestReconcile(cluster, 'kustomization', kustomization);
    const k = getJson(cluster, ['-n', 'flux-system', 'get', 'kustomization', kustomization]);
    return (k.metadata as { annotations: Record<string, string> }).annotations['reconcile.fluxcd.io/requestedAt'];
  };
  let want = request();
  await waitFor(
    `${cluster}/${kustomization} to handle the reconcile request of ${want}`,
    async () => {
      const st = getJson(cluster, ['-n', 'flux-system', 'get', 'kustomization', kustomization]).status as {
        lastHandledReconcileAt?: string;
        conditions?: Array<{ type: string; status: string; reason?: string }>;
      };
      if (st.lastHandledReconcileAt !== want) return false;
      // handled while a dependency was reconciling itself (dependsOn: Flux held it and applied nothing): ask again
      const ready = st.conditions?.find((c) => c.type === 'Ready');
      if (ready?.reason === 'DependencyNotReady') {
        want = request();
        return false;
      }
      return true;
    },
    { timeoutMs, intervalMs: 300 },
  );
}
