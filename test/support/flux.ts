// Flux as tests drive it: reconcile now (the admin's requestedAt annotation, as `flux reconcile` writes
// it) and wait until the controller has handled that very request (status.lastHandledReconcileAt).
import { waitFor } from '../../sandbox/procs.ts';
import { getJson, requestReconcile } from '../../sandbox/scenario.ts';

export async function fluxReconciled(cluster: string, kustomization: string, timeoutMs = 90_000): Promise<void> {
  requestReconcile(cluster, 'kustomization', kustomization);
  const k = getJson(cluster, ['-n', 'flux-system', 'get', 'kustomization', kustomization]);
  const want = (k.metadata as { annotations: Record<string, string> }).annotations['reconcile.fluxcd.io/requestedAt'];
  await waitFor(
    `${cluster}/${kustomization} to handle the reconcile request of ${want}`,
    async () =>
      (getJson(cluster, ['-n', 'flux-system', 'get', 'kustomization', kustomization]).status as Record<string, unknown>)
        .lastHandledReconcileAt === want,
    { timeoutMs, intervalMs: 300 },
  );
}
