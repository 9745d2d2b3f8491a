import type { Controller } from './controller.ts';
import type { AppDrift } from './drift.ts';
import type { EnvSource } from './environments.ts';
import type { ObjectRef } from './refs.ts';

export const HEALTH_STATES = ['Healthy', 'Progressing', 'Degraded', 'Suspended', 'Missing', 'Unknown'] as const;
export type HealthStatus = (typeof HEALTH_STATES)[number];
export const SYNC_STATES = ['Synced', 'OutOfSync', 'Unknown'] as const;
export type SyncStatus = (typeof SYNC_STATES)[number];
export { CONTROLLERS, type Controller } from './controller.ts';
export const APP_KINDS = ['Kustomization', 'HelmRelease', 'Application'] as const;
export type AppKind = (typeof APP_KINDS)[number];

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface AppSource {
  kind?: string;
  name?: string;
  url?: string;
  path?: string;
  ref?: string;
  /** the revision the controller is asked to reach (Flux: source artifact revision; Argo: targetRevision) */
  revisionWanted?: string;
  /** the revision the controller last applied (Flux lastAppliedRevision; Argo status.sync.revision) */
  revisionObserved?: string;
  revisionAttempted?: string;
  artifactDigest?: string;
  sourceReady?: string;
}

export interface App {
  id: string;
  cluster: string;
  controller: Controller;
  kind: AppKind;
  namespace: string;
  name: string;
  /** the environment every permission check uses (environments.ts: the console's mapping when configured) */
  env: string;
  /** where `env` came from: the console's mapping, the app's label, its namespace, or nowhere (`unknown`) */
  envSource?: EnvSource;
  /** why the environment is flagged: the label disagrees with the mapping, or the mapping does not decide it */
  envConflict?: string;
  source: AppSource;
  automation: { autoSync: boolean; selfHeal: boolean; prune: boolean; suspended: boolean };
  sync: SyncStatus;
  health: HealthStatus;
  healthMessage: string;
  conditions: Condition[];
  inventory: ObjectRef[];
  /** e.g. the ApplicationSet that generated an Argo CD Application */
  owner?: { kind: string; name: string };
  project?: string;
  /** set when the object's status is not written by a real controller (sandbox Argo CD simulation) */
  simulated?: string;
  /** problems reading the custom resource itself (missing status, unknown shape) */
  warnings: string[];
  /** links named by annotations; untrusted text (the SPA links only http(s)) */
  links?: Array<{ title: string; url: string }>;
  generation?: number;
  observedGeneration?: number;
  updatedAt?: string;
  /** open drift episodes seen from managedFields (fast signal; the diff is the precise view) */
  drift?: AppDrift;
  /** Argo CD: its last (or running) sync operation, and why it is not synced yet (domain/argo-sync.ts) */
  syncOperation?: {
    phase: string;
    /** it failed, or it retries after an attempt that failed (domain/argo-sync.ts argoSyncFailing) */
    failing?: boolean;
    revision?: string;
    why?: string;
    finishedAt?: string;
  };
  /** Flux: `spec.dependsOn` (the apps it is applied after; domain/flux-deps.ts) */
  dependsOn?: Array<{ namespace: string; name: string }>;
  /** Flux: the one line of "why isn't it reconciling yet?" while its controller holds it for a dependency */
  waitingOn?: string;
  /** its controller's prune is denied by the console's policy until a preview is approved (prune-hold.ts) */
  pruneHold?: { objects: string[]; count: number; message: string };
  /** set while an incident freeze holds the app (read from its object's annotations, see freeze.ts) */
  freeze?: { id: string; by: string; reason: string; until: string; incident?: string };
}

export function appId(cluster: string, namespace: string, kind: string, name: string): string {
  return `${cluster}/${namespace}/${kind.toLowerCase()}/${name}`;
}

const HEALTH_RANK: Record<HealthStatus, number> = {
  Healthy: 0,
  Suspended: 1,
  Progressing: 2,
  Unknown: 3,
  Missing: 4,
  Degraded: 5,
};

/** The worse of two health states (Degraded > Missing > Unknown > Progressing > Suspended > Healthy). */
export function worseHealth(a: HealthStatus, b: HealthStatus): HealthStatus {
  return HEALTH_RANK[a] >= HEALTH_RANK[b] ? a : b;
}

export function shortRevision(rev: string | undefined): string {
  if (!rev) return '';
  // Flux: "main@sha1:0123abcd…"; Argo: plain sha
  const m = /(?:sha1|sha256):([0-9a-f]+)$/.exec(rev) ?? /^([0-9a-f]{7,64})$/.exec(rev);
  return m?.[1] ? m[1].slice(0, 7) : rev.slice(0, 12);
}
