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
 *
 * The progressive-delivery controllers (Argo Rollouts, Flagger) are listed below them: neither GitOps
 * nor a person, their writes to Git's fields are judged field by field (delivery-writes.ts).
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
 * conflict (or, for a progressive-delivery controller's own write, theirs).
 */
export function isInteractiveManager(manager: string): boolean {
  return /^kubectl/.test(manager) || /^(k9s|Mozilla|lens|headlamp|rancher)/i.test(manager);
}

/**
 * The progressive-delivery controllers: they are not GitOps controllers (they apply nothing from Git), but
 * they legitimately write some fields of objects Git declares — which fields is delivery-writes.ts's one
 * rule table. Their field managers, read from their source (not guessed):
 *
 * - Argo Rollouts (v1.10.2): `rollouts-controller`. The image runs `/bin/rollouts-controller`
 *   (Dockerfile:90,99; manifests/base/argo-rollouts-deployment.yaml sets no `command`), and
 *   cmd/rollouts-controller/main.go:124-153 builds every client from `clientConfig.ClientConfig()` without
 *   setting `UserAgent`; it never sets `FieldManager` and never applies (Update / Patch only).
 * - Flagger (v1.36.1): `flagger`. The image runs `./flagger` (Dockerfile:22,32; charts/flagger deployment.yaml:80
 *   `command: ./flagger`), cmd/flagger/main.go:151-164 builds its clients from `BuildConfigFromFlags` without
 *   `UserAgent`; no `FieldManager`, no apply.
 *
 * Why the program name: for an Update or a Patch without `fieldManager` the apiserver records the user
 * agent's prefix before the first `/` (apiserver endpoints/handlers/create.go `prefixFromUserAgent`), and
 * client-go's default user agent starts with `filepath.Base(os.Args[0])` (rest/config.go `adjustCommand`).
 * Their kubectl plugin (`kubectl-argo-rollouts`: promote, abort, set image) is a person's tool, not the
 * controller: {@link isInteractiveManager} says so.
 */
export const DELIVERY_CONTROLLERS = ['argo-rollouts', 'flagger'] as const;
export type DeliveryController = (typeof DELIVERY_CONTROLLERS)[number];

export const DELIVERY_CONTROLLER_MANAGERS: Readonly<Record<DeliveryController, readonly string[]>> = Object.freeze({
  'argo-rollouts': Object.freeze(['rollouts-controller']),
  flagger: Object.freeze(['flagger']),
});

/** How the SPA names them on an owner badge. */
export const DELIVERY_CONTROLLER_LABELS: Readonly<Record<DeliveryController, string>> = Object.freeze({
  'argo-rollouts': 'Argo Rollouts',
  flagger: 'Flagger',
});

const DELIVERY_BY_MANAGER = new Map<string, DeliveryController>(
  DELIVERY_CONTROLLERS.flatMap((c) => DELIVERY_CONTROLLER_MANAGERS[c].map((m) => [m, c] as const)),
);

/** The progressive-delivery controller a field manager is, if it is one. */
export function deliveryControllerOf(manager: string): DeliveryController | undefined {
  return DELIVERY_BY_MANAGER.get(manager);
}

/** A manager as a badge shows it: a delivery controller by its product name, any other manager as it is. */
export function managerLabel(manager: string): string {
  const c = deliveryControllerOf(manager);
  return c ? DELIVERY_CONTROLLER_LABELS[c] : manager;
}
