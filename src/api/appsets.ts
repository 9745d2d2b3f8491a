// The ApplicationSet API (src/server/appsets): its list and one ApplicationSet's generators, Applications and shrink.

export interface AppSetCondition {
  type: string;
  status: string;
  reason: string | null;
  message: string | null;
}

export interface AppSetSummary {
  id: string;
  cluster: string;
  namespace: string;
  name: string;
  generators: string[];
  applications: Array<{ name: string; appId: string }>;
  /** the controller's ErrorOccurred condition (a denied deletion reads here) */
  error: string | null;
  /** the console's admission policy holds a deletion of the controller now */
  heldByConsole: boolean;
}

export interface AppSetView extends AppSetSummary {
  uid: string;
  goTemplate: boolean;
  applicationsSync: string;
  preserveResourcesOnDeletion: boolean;
  generatorResults: Array<{
    kind: string;
    detail: string;
    params: Array<Record<string, string>> | null;
    unknown: string | null;
  }>;
  generated: string[] | null;
  unknown: string | null;
  owned: Array<{
    name: string;
    appId: string;
    generated: boolean | null;
    sync: string;
    health: string;
    env: string | null;
    resources: number;
    cascades: boolean;
  }>;
  shrink: {
    state: 'unknown' | 'nothing' | 'shrink';
    reasons: string[];
    removed: Array<{ name: string; resources: number; cascades: boolean }>;
  };
  conditions: AppSetCondition[];
  rollingSync: {
    steps: Array<{ matchExpressions: Array<Record<string, unknown>>; maxUpdate: string | number | null }>;
    applications: Array<{ application: string; status: string; step: string | null; message: string | null }>;
  } | null;
  limits: { maxDeletions: number; maxFraction: number };
}

export interface AppSetsResponse {
  appsets: AppSetSummary[];
  /** clusters whose ApplicationSets could not be listed (unknown, not none) */
  unknown: string[];
}

/** The id of an ApplicationSet (what its prune previews belong to): cluster/namespace/applicationset/name. */
export function appSetOfId(id: string): { cluster: string; namespace: string; name: string } | undefined {
  const parts = id.split('/');
  if (parts.length !== 4 || parts[2] !== 'applicationset') return undefined;
  const [cluster, namespace, , name] = parts as [string, string, string, string];
  return { cluster, namespace, name };
}

export const appSetPath = (s: { cluster: string; namespace: string; name: string }): string =>
  [s.cluster, s.namespace, s.name].map(encodeURIComponent).join('/');
