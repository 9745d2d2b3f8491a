// The write-back's shapes: a live change to place, where it was placed (or why not), and the plan.

export interface WriteBackChange {
  /** opaque id of the change */
  id: string;
  ref: { group: string; kind: string; namespace: string | null; name: string };
  /** the console's field path format (see managed-fields.ts), e.g. `spec.template.spec.containers[name=x].image` */
  path: string;
  /** the value to write to Git */
  liveValue: unknown;
  /** what Git renders now (for messages) */
  gitValue?: unknown;
}

export type PlacementHow = 'kustomize-replicas' | 'kustomize-images' | 'patch' | 'resource' | 'new-patch';

export type Placement =
  | {
      changeId: string;
      placed: true;
      file: string;
      how: PlacementHow;
      /** why it went there rather than where Git sets the value now (a file outside the app's directory) */
      note?: string;
    }
  | { changeId: string; placed: false; reason: string; yaml: string };

export interface WriteBackPlan {
  /** only the files that change, with their new content */
  files: Record<string, string>;
  placements: Placement[];
}
