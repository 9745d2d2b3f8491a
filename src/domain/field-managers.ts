/**
 * The field managers of the GitOps controllers, as they appear in
 * `metadata.managedFields[].manager`, and of the interactive tools people use.
 * The one list: the diff's classes (a controller's field is Git's, a person's
 * is drift), the drift summary's culprit and the SPA's owner badges all read it.
 *
 * - Flux: kustomize-controller applies (Server-Side Apply) what a Kustomization
 *   renders; helm-controller installs and upgrades HelmReleases.
 * - Argo CD: `argocd-controller` is the manager of its server-side apply sync,
 *   `argocd-application-controller` of its client-side apply (and of the
 *   fields it took over from kubectl).
 *
 * The first manager of each controller is the one the console dry-runs as.
 */
import type { Controller } from './controller.ts';

export const GITOPS_CONTROLLER_MANAGERS: Readonly<Record<Controller, readonly string[]>> = Object.freeze({
  flux: Object.freeze(['kustomize-controller', 'helm-controller']),
  argocd: Object.freeze(['argocd-controller', 'argocd-application-controller']),
});

const ALL = new Set(Object.values(GITOPS_CONTROLLER_MANAGERS).flat());

/** The field managers of one GitOps controller, the one it applies with first. */
export function controllerManagersOf(controller: Controller): readonly string[] {
  return GITOPS_CONTROLLER_MANAGERS[controller];
}

/** Whether a field manager is a GitOps controller's (any controller's: Flux or Argo CD). */
export function isGitOpsControllerManager(manager: string): boolean {
  return ALL.has(manager);
}

/**
 * Interactive tools (kubectl and its subcommands' managers such as
 * `kubectl-edit`, `kubectl-client-side-apply`; k9s, browser-based consoles): a
 * field they own against Git is drift; anything else owning it is a controller
 * conflict.
 */
export function isInteractiveManager(manager: string): boolean {
  return /^kubectl/.test(manager) || /^(k9s|Mozilla|lens|headlamp|rancher)/i.test(manager);
}
