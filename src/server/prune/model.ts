// What a prune preview is (the plan the store keeps, its candidates, the view a user gets) and what the prune
// service is built from (its dependencies and options). Types only.
import type { App } from '../../domain/app.ts';
import type { PruneLimits, PruneState } from '../../domain/prune.ts';
import type { ObjectRef } from '../../domain/refs.ts';
import type { Principal } from '../auth/index.ts';
import type { RenderResult } from '../diff/index.ts';
import type { EvidenceRecorder } from '../evidence/index.ts';
import type { ClusterConnection } from '../kube/connection.ts';
import type { ObjectIndex } from '../kube/object-index.ts';
import type { JournalEntry, PreviewRow, PruneStore } from './store.ts';
import type { SettleOpts } from '../kube/unanswered-write.ts';

export type PropagationPolicy = 'Background' | 'Foreground' | 'Orphan';

export interface PreviewCandidate {
  ref: ObjectRef;
  id: string;
  /** null when the object is not live (nothing to delete) */
  uid: string | null;
  resourceVersion: string | null;
  protectedBy: string | null;
  /**
   * a protected object its deletion would take with it ("its Pod dev/x is protected (…)"): not deleted; absent in
   * previews stored before this existed
   */
  blockedBy?: string | null;
  /** why what its deletion would take with it is not fully known: not deleted; absent in older previews */
  cascadesUnknown?: string | null;
  cascades: ObjectRef[];
  finalizers: string[];
  createdAt: string | null;
  /** the field manager that wrote the object last (managedFields) */
  lastWriter: string | null;
  deletable: boolean;
}

/** What the store keeps of a preview besides its indexed columns. */
export interface PreviewDoc {
  controller: 'flux' | 'argocd';
  revision: string | null;
  renderHash: string | null;
  renderer: string | null;
  planState: PruneState;
  reasons: string[];
  limits: PruneLimits;
  candidates: PreviewCandidate[];
  propagationPolicy: PropagationPolicy;
  batchSize: number;
  /** the text a needs-override approver types */
  confirmation: string | null;
  /**
   * who deletes once approved: the console (the controller does not prune), or the controller's own prune after
   * the console stamped its approval on each object; absent in previews stored before this existed: the console
   */
  deletedBy?: 'console' | 'controller';
  /**
   * a shrink of an Argo CD ApplicationSet (src/server/appsets): the candidates are the Applications its
   * applicationset-controller would delete and the live objects their resources finalizer deletes with them;
   * absent for an app's own prune
   */
  appSet?: { namespace: string; name: string; uid: string };
}

export type StoredPreview = PreviewRow<PreviewDoc>;

/** After a prune its controller performs: what the controller did with the stamped objects (handover.ts). */
export interface Handover {
  state: 'waiting' | 'deleted' | 'lapsed' | 'unknown';
  /** who deletes the stamped objects */
  controller: string;
  /** the stamped objects still live (same uid) */
  live: string[];
  /** how many objects were stamped */
  stamped: number;
  /** what a person is told */
  text: string;
}

export interface PreviewView {
  preview: StoredPreview;
  journal: JournalEntry[];
  /** whether the asking user may approve it now, and why not */
  viewer: { canApprove: boolean; reason: string | null };
  /** a done prune the controller performs: what it did with the stamped objects since (handover.ts) */
  handover?: Handover | undefined;
}

export interface PruneServiceOptions {
  limits?: PruneLimits;
  ttlMs?: number;
  batchSize?: number;
  propagationPolicy?: PropagationPolicy;
  /** a journal idle this long belongs to a dead executor (another replica); recovered at start */
  staleExecutionMs?: number;
  /** how long an app that is Progressing between batches (a routine reconcile) is given to settle (default 30 s) */
  settleMs?: number;
}

export interface PruneServiceDeps {
  /** how a DELETE the cluster never answered is settled (kube/unanswered-write.ts; tests inject time) */
  settle?: SettleOpts;
  recorder: EvidenceRecorder;
  store: PruneStore<PreviewDoc>;
  index: ObjectIndex;
  /** the app as the console knows it now (health between batches) */
  app(id: string): App | undefined;
  /** the console's own connection to a cluster (it deletes as itself: deploy/rbac.yaml grants `delete`) */
  conn(cluster: string): ClusterConnection;
  /** whether the cluster's informers have listed everything (else the live state is unknown) */
  listed(cluster: string): boolean;
  /** the app's desired state at its source revision (the diff's renderer, as `user` or, undefined, the console); throws when it cannot render */
  render(a: App, user: Principal | undefined): Promise<RenderResult>;
  /** the clusters connected now (recovery sweeps their approval lists: approval-params.ts) */
  clusters?(): string[];
  /** the environment the console's mapping gives a namespace (CONSOLE_ENVIRONMENTS); undefined: none */
  envOfNamespace?(cluster: string, namespace: string): string | undefined;
}
