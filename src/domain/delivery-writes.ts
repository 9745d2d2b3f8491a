/**
 * What the progressive-delivery controllers (Argo Rollouts, Flagger; their managers in field-managers.ts)
 * legitimately write on objects Git also declares: the one rule table. The field diff classes such a field
 * `delivery` (the controller's, never drift) and the drift detector records no write for it; the same
 * field written by a person's tool is still drift, and a field these managers own that no rule names (Flagger
 * changing a container image) stays a conflict — a delivery controller is trusted for what its source does,
 * not for anything it happens to own.
 *
 * Each rule cites the source that writes the field (Argo Rollouts v1.10.2, Flagger v1.36.1). Objects they
 * generate (Flagger's `<target>-primary` Deployment, its `-canary` / `-primary` Services, `-primary`
 * ConfigMaps, Secrets and HPAs; Rollouts' ReplicaSets, canary Ingresses, AnalysisRuns) are not here: they
 * carry a controlling ownerReference to their Canary / Rollout, so no app tracks them (object-index.ts
 * `trackersOf`) — they are never extraneous, prune candidates or drift of the app.
 *
 * Paths are the diff's (managed-fields.ts's format, flattenObject's leaves). In a rule's path `[*]` stands for
 * any one list item, and `*` inside a field name for any run of characters (annotation keys by prefix).
 */
import { deliveryControllerOf, type DeliveryController } from './field-managers.ts';
import { fieldSegmentName, splitFieldPath } from './managed-fields.ts';
import { splitApiVersion } from './refs.ts';

export interface DeliveryWrite {
  controller: DeliveryController;
  /** API groups of the object ('' for the core group); several when the controller supports several */
  groups: readonly string[];
  kind: string;
  path: string;
  /** the rule covers the fields beneath `path` too (a map or list the controller rewrites as a whole) */
  subtree?: boolean;
  /** what writes it, and where */
  why: string;
}

const HASH = 'rollouts-pod-template-hash';
const MANAGED_BY = 'argo-rollouts.argoproj.io/managed-by-rollouts';

export const DELIVERY_WRITES: readonly DeliveryWrite[] = Object.freeze([
  // ---------------------------------------------------------------- Argo Rollouts (rollouts-controller)
  {
    controller: 'argo-rollouts',
    groups: [''],
    kind: 'Service',
    path: `spec.selector["${HASH}"]`,
    why: 'pins the stable / canary / active / preview Service to a ReplicaSet (rollout/service.go switchServiceSelector; removed again by service/service.go)',
  },
  {
    controller: 'argo-rollouts',
    groups: [''],
    kind: 'Service',
    path: `metadata.annotations["${MANAGED_BY}"]`,
    why: 'marks a Service it switched (rollout/service.go switchSelectorAndAddManagedByPatch)',
  },
  {
    controller: 'argo-rollouts',
    groups: ['apps'],
    kind: 'Deployment',
    path: 'spec.replicas',
    why: 'scales the Deployment a Rollout references with workloadRef (rollout/scale_utils.go scaleDeployment)',
  },
  ...['actions', 'conditions'].map((what): DeliveryWrite => ({
    controller: 'argo-rollouts',
    groups: ['networking.k8s.io', 'extensions'],
    kind: 'Ingress',
    path: `metadata.annotations["alb.ingress.kubernetes.io/${what}.*"]`,
    why: 'ALB traffic routing: the weighted forward actions and header conditions (rollout/trafficrouting/alb/alb.go SetWeight, SetHeaderRoute; default annotation prefix)',
  })),
  ...['managed-alb-annotations', 'managed-alb-actions'].map((key): DeliveryWrite => ({
    controller: 'argo-rollouts',
    groups: ['networking.k8s.io', 'extensions'],
    kind: 'Ingress',
    path: `metadata.annotations["rollouts.argoproj.io/${key}"]`,
    why: 'ALB traffic routing: which annotations it manages (utils/ingress/ingress.go ManagedAnnotations; ingress/alb.go)',
  })),
  ...['http', 'tls', 'tcp'].map((routes): DeliveryWrite => ({
    controller: 'argo-rollouts',
    groups: ['networking.istio.io'],
    kind: 'VirtualService',
    path: `spec.${routes}[*].route`,
    subtree: true,
    why: 'Istio traffic routing: the stable / canary destination weights (rollout/trafficrouting/istio/istio.go SetWeight)',
  })),
  {
    controller: 'argo-rollouts',
    groups: ['networking.istio.io'],
    kind: 'DestinationRule',
    path: `spec.subsets[*].labels["${HASH}"]`,
    why: 'Istio subset-level routing: pins the stable / canary subsets to ReplicaSets (istio.go UpdateHash)',
  },
  {
    controller: 'argo-rollouts',
    groups: ['networking.istio.io'],
    kind: 'DestinationRule',
    path: `metadata.annotations["${MANAGED_BY}"]`,
    why: 'marks a DestinationRule it manages (istio.go UpdateHash)',
  },
  {
    controller: 'argo-rollouts',
    groups: ['traefik.io', 'traefik.containo.us'],
    kind: 'TraefikService',
    path: 'spec.weighted.services[*].weight',
    why: 'Traefik traffic routing: the stable / canary weights (rollout/trafficrouting/traefik/traefik.go SetWeight; traefik.io by default, traefik.containo.us for Traefik v2)',
  },
  // ---------------------------------------------------------------- Flagger (flagger)
  {
    controller: 'flagger',
    groups: ['apps'],
    kind: 'Deployment',
    path: 'spec.replicas',
    why: 'scales the target to 0 once it promoted the canary into <target>-primary, and back up for the next analysis or on deletion (pkg/canary/deployment_controller.go ScaleToZero, ScaleFromZero, Finalize)',
  },
  {
    controller: 'flagger',
    groups: ['apps'],
    kind: 'DaemonSet',
    path: 'spec.template.spec.nodeSelector["flagger.app/scale-to-zero"]',
    why: 'scales a target DaemonSet to zero with a node selector no node has (pkg/canary/daemonset_controller.go ScaleToZero)',
  },
  {
    controller: 'flagger',
    groups: [''],
    kind: 'Service',
    path: 'spec.selector',
    subtree: true,
    why: 'points the apex Service at <target>-primary (pkg/router/kubernetes_default.go reconcileService; restored on deletion by Finalize)',
  },
  {
    controller: 'flagger',
    groups: [''],
    kind: 'Service',
    path: 'spec.ports',
    subtree: true,
    why: "sets the apex Service's ports from the Canary's service spec (pkg/router/kubernetes_default.go reconcileService)",
  },
  {
    controller: 'flagger',
    groups: ['keda.sh'],
    kind: 'ScaledObject',
    path: 'metadata.annotations["autoscaling.keda.sh/paused-replicas"]',
    why: "pauses the target's KEDA scaler while the primary serves (pkg/canary/scaled_object_reconciler.go PauseTargetScaler)",
  },
] satisfies DeliveryWrite[]);

// ---------------------------------------------------------------- matching

type SegmentTest = (segment: string) => boolean;

const isItem = (segment: string) => segment.startsWith('[') && fieldSegmentName(segment) === undefined;

/** A rule path's segment as a test: `[*]` any list item, a name with `*` a glob, anything else the same name. */
function segmentTest(pattern: string): SegmentTest {
  if (pattern === '[*]') return isItem;
  const name = fieldSegmentName(pattern);
  if (name === undefined) return (s) => s === pattern;
  if (!name.includes('*')) return (s) => fieldSegmentName(s) === name;
  const glob = new RegExp(`^${name.split('*').map(escapeRegExp).join('.*')}$`, 's');
  return (s) => {
    const n = fieldSegmentName(s);
    return n !== undefined && glob.test(n);
  };
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

interface Compiled {
  rule: DeliveryWrite;
  tests: SegmentTest[];
}

/** The rules by `<controller>\0<group>\0<kind>`, compiled once. */
const RULES = new Map<string, Compiled[]>();
for (const rule of DELIVERY_WRITES) {
  const compiled = { rule, tests: splitFieldPath(rule.path).map(segmentTest) };
  for (const group of rule.groups) {
    const key = `${rule.controller}\u0000${group}\u0000${rule.kind}`;
    RULES.set(key, [...(RULES.get(key) ?? []), compiled]);
  }
}

function matches({ rule, tests }: Compiled, segments: string[]): boolean {
  if (segments.length < tests.length || (!rule.subtree && segments.length !== tests.length)) return false;
  return tests.every((t, i) => t(segments[i]!));
}

/** The group and kind of an object (`apiVersion` `apps/v1` → `apps`; `v1` → the core group ''). */
export function groupKindOf(obj: unknown): { group: string; kind: string } | undefined {
  if (!obj || typeof obj !== 'object') return undefined;
  const { apiVersion, kind } = obj as { apiVersion?: unknown; kind?: unknown };
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return undefined;
  return { group: splitApiVersion(apiVersion).group, kind };
}

/**
 * The rule under which `manager` writing `path` of `target` (an object of that group and kind, or the object
 * itself) is a progressive-delivery controller's own business, or `undefined`: the manager is no delivery
 * controller, or this is not a field its source writes.
 */
export function deliveryWriteOf(
  manager: string,
  target: { group: string; kind: string } | undefined,
  path: string,
): DeliveryWrite | undefined {
  const controller = deliveryControllerOf(manager);
  if (!controller || !target) return undefined;
  const rules = RULES.get(`${controller}\u0000${target.group}\u0000${target.kind}`);
  if (!rules) return undefined;
  const segments = splitFieldPath(path);
  return rules.find((c) => matches(c, segments))?.rule;
}

/** Whether a manager's ownership of `path` on `target` is a delivery controller's legitimate write. */
export function isDeliveryWrite(
  manager: string,
  target: { group: string; kind: string } | undefined,
  path: string,
): boolean {
  return deliveryWriteOf(manager, target, path) !== undefined;
}
