// What the freeze integration files (test/integration/freeze*.test.ts) share: the shapes of a freeze and a live
// change as the API answers them, and the waits on the sandbox's controllers they prove "nothing happened" with —
// a reconcile request a Kustomization's controller has handled (a suspended one too: it records the request and
// applies nothing), instead of a sleep of its interval.
import { getJson } from '../../sandbox/scenario.ts';
import { kubectl } from '../../sandbox/state.ts';
import { waitFor } from '../../sandbox/procs.ts';

export type Freeze = {
  id: string;
  status: string;
  active: boolean;
  expiresAt: string;
  endReason?: string | null;
  targets: Array<{
    appId: string;
    applied: boolean;
    interference?: { state: string };
    controllerPause?: { requested: string; confirmed?: string };
  }>;
  writeBack?: Array<{
    branch: string;
    commit: string | null;
    pullRequest?: { number: number; url: string } | null;
    placements: Array<{ placed: boolean; file?: string }>;
  }>;
};

export type Change = {
  id: string;
  path: string;
  git: unknown;
  live: unknown;
  manager: string;
  ref: { kind: string; name: string };
};

/**
 * Asks kustomize-controller to reconcile a Kustomization now and waits until it has handled that request: its
 * status.lastHandledReconcileAt at (or past) the request. The controller records it at the end of every
 * reconcile, a suspended Kustomization's too (which applies nothing), so once this returns the controller has
 * looked at the object after everything done before the call.
 */
export async function reconcileHandled(cluster: string, name: string, timeoutMs = 60_000): Promise<void> {
  const requested = new Date().toISOString();
  kubectl(cluster, [
    ...['-n', 'flux-system', 'annotate', '--overwrite', `kustomization/${name}`],
    `reconcile.fluxcd.io/requestedAt=${requested}`,
  ]);
  await waitFor(
    `${cluster}/${name} handled the reconcile request of ${requested}`,
    async () => {
      const st = getJson(cluster, ['-n', 'flux-system', 'get', 'kustomization', name]).status as
        { lastHandledReconcileAt?: string } | undefined;
      const handled = st?.lastHandledReconcileAt ?? '';
      // another request made since (another test's) is handled after this one
      return handled === requested || Date.parse(handled) >= Date.parse(requested);
    },
    { timeoutMs, intervalMs: 250 },
  );
}
