// "Reconcile now": asks the controller to reconcile without waiting for its interval —
// Flux: `reconcile.fluxcd.io/requestedAt` on the app and its source; Argo CD: a refresh.
// It changes no desired state; what is applied still comes from Git.
// The pattern every action follows: intent evidence first (fail closed), act through the kube client,
// outcome evidence after.
import type { App } from '../../domain/app.ts';
import type { EvidenceRecorder } from '../evidence/index.ts';
import { clusterHttpError, HttpError } from '../http/errors.ts';
import type { ClusterConnection } from '../kube/connection.ts';
import { KINDS } from '../kube/kinds.ts';
import { asObj, type Obj } from '../gitops/common.ts';
import { helmChartOf } from '../gitops/flux.ts';

type KnownKind = keyof typeof KINDS;

export interface ReconcileTarget {
  kind: KnownKind;
  namespace: string;
  name: string;
  annotations: Record<string, string>;
}

/**
 * What "reconcile now" patches for an app: the app object and, for Flux, its source too (`flux reconcile
 * --with-source`), in the source's own namespace (`raw`, the app object: spec.sourceRef.namespace); a HelmRelease's
 * source is the HelmChart helm-controller made for it (or its chartRef).
 */
export function reconcileTargets(a: App, now: string, raw?: Obj): ReconcileTarget[] {
  if (a.controller !== 'flux')
    return [
      {
        kind: 'Application',
        namespace: a.namespace,
        name: a.name,
        annotations: { 'argocd.argoproj.io/refresh': 'normal' },
      },
    ];
  const requested = { 'reconcile.fluxcd.io/requestedAt': now };
  const targets: ReconcileTarget[] = [
    { kind: a.kind as KnownKind, namespace: a.namespace, name: a.name, annotations: requested },
  ];
  if (a.kind === 'HelmRelease') {
    const chart = raw ? helmChartOf(raw) : undefined;
    if (chart && chart.kind in KINDS)
      targets.push({
        kind: chart.kind as KnownKind,
        namespace: chart.namespace,
        name: chart.name,
        annotations: requested,
      });
    return targets;
  }
  const sourceNs = (asObj(asObj(raw?.spec).sourceRef).namespace as string | undefined) ?? a.namespace;
  if (a.source.kind && a.source.name && a.source.kind in KINDS)
    targets.push({
      kind: a.source.kind as KnownKind,
      namespace: sourceNs,
      name: a.source.name,
      annotations: requested,
    });
  return targets;
}

export interface ReconcileDeps {
  recorder: EvidenceRecorder;
  /** the connection this user's request goes out on (impersonating in impersonation mode) */
  conn: ClusterConnection;
  /** called when the cluster's RBAC refuses (recorded as a denial) */
  onForbidden?: (message: string) => void;
  /** the app's object as last seen (where its source is) */
  appObject?: Obj;
}

export async function requestReconcile(
  a: App,
  actor: string,
  deps: ReconcileDeps,
): Promise<{ requestedAt: string; objects: string[] }> {
  const now = new Date().toISOString();
  const targets = reconcileTargets(a, now, deps.appObject);
  const names = targets.map((t) => `${t.kind}/${t.namespace}/${t.name}`);
  const done: string[] = [];
  await deps.recorder.act(
    {
      time: now,
      type: 'app.reconcile-requested',
      actor,
      app: a.id,
      cluster: a.cluster,
      env: a.env,
      data: { objects: names, revisionObserved: a.source.revisionObserved ?? null },
    },
    async () => {
      for (const t of targets) {
        const k = KINDS[t.kind];
        const path = `/apis/${k.group}/${k.version}/namespaces/${encodeURIComponent(t.namespace)}/${k.plural}/${encodeURIComponent(t.name)}?fieldManager=gitops-console`;
        try {
          await deps.conn.json('PATCH', path, {
            body: JSON.stringify({ metadata: { annotations: t.annotations } }),
            contentType: 'application/merge-patch+json',
            timeoutMs: 10_000,
          });
        } catch (e) {
          const mapped = clusterHttpError(e, `cannot annotate ${t.kind} ${t.name}`, a.cluster);
          if (mapped instanceof HttpError && mapped.status === 403) deps.onForbidden?.(mapped.message);
          throw mapped;
        }
        done.push(`${t.kind}/${t.namespace}/${t.name}`);
      }
    },
    () => ({ objects: [...done] }),
  );
  return { requestedAt: now, objects: done };
}
