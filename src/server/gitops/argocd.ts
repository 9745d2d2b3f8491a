// Argo CD adapter: Application (+ ApplicationSet ownership, AppProject) → App.
import { appId, HEALTH_STATES, type App, type HealthStatus, type SyncStatus } from '../../domain/app.ts';
import { argoSyncFailing, argoSyncOperationOf, argoSyncWhy } from '../../domain/argo-sync.ts';
import type { ObjectRef } from '../../domain/refs.ts';
import {
  asObj,
  conditionsOf,
  destinationsOr,
  envFieldsOf,
  freezeOf,
  namespacesOf,
  str,
  type EnvSetting,
  type Obj,
} from './common.ts';

export function applicationToApp(cluster: string, obj: unknown, envSetting: EnvSetting): App {
  const o = asObj(obj);
  const md = asObj(o.metadata);
  const spec = asObj(o.spec);
  const status = asObj(o.status);
  const namespace = str(md.namespace) ?? 'argocd';
  const name = str(md.name) ?? '?';
  const warnings: string[] = [];
  const sources = Array.isArray(spec.sources) ? (spec.sources as Obj[]) : [];
  const src = asObj(spec.source ?? sources[0]);
  if (!spec.source && sources.length === 0) warnings.push('spec.source is missing');
  if (sources.length > 1) warnings.push(`multi-source application: showing the first of ${sources.length} sources`);
  const dest = asObj(spec.destination);
  const sync = asObj(status.sync);
  const healthObj = asObj(status.health);
  const op = asObj(status.operationState);
  const automated =
    spec.syncPolicy && asObj(spec.syncPolicy).automated !== undefined
      ? asObj(asObj(spec.syncPolicy).automated)
      : undefined;
  const autoSync = automated !== undefined && automated.enabled !== false;
  if (!o.status) warnings.push('no status: no Argo CD controller has reconciled this Application');
  const syncStatus: SyncStatus = sync.status === 'Synced' || sync.status === 'OutOfSync' ? sync.status : 'Unknown';
  const hs = str(healthObj.status);
  const health: HealthStatus =
    hs && (HEALTH_STATES as readonly string[]).includes(hs) ? (hs as HealthStatus) : 'Unknown';
  const inventory: ObjectRef[] = [];
  if (Array.isArray(status.resources)) {
    for (const r of status.resources as Obj[]) {
      const name2 = str(r.name);
      const kind = str(r.kind);
      if (!name2 || !kind) continue;
      inventory.push({
        cluster,
        group: str(r.group) ?? '',
        version: str(r.version) ?? '',
        kind,
        ...(str(r.namespace) ? { namespace: str(r.namespace) } : {}),
        name: name2,
      });
    }
  }
  const owner = (Array.isArray(md.ownerReferences) ? (md.ownerReferences as Obj[]) : []).find(
    (r) => r.kind === 'ApplicationSet',
  );
  const opMessage = str(op.message);
  // the sync operation (waves and object health are added where the live objects are: the app route)
  const syncOp = argoSyncOperationOf(o);
  const syncWhy = argoSyncWhy(syncOp);
  return {
    id: appId(cluster, namespace, 'Application', name),
    cluster,
    controller: 'argocd',
    kind: 'Application',
    namespace,
    name,
    // where it deploys: spec.destination.namespace (the default for objects that name none) and the namespaces of
    // the objects it manages (status.resources); with neither, the Application's own namespace
    ...envFieldsOf(
      envSetting,
      md,
      cluster,
      destinationsOr([str(dest.namespace), ...namespacesOf(inventory)], namespace),
      str(dest.namespace) ?? namespace,
    ),
    source: {
      kind: str(src.chart) ? 'Helm' : 'Git',
      url: str(src.repoURL),
      path: str(src.path) ?? str(src.chart),
      ref: str(src.targetRevision) ?? 'HEAD',
      revisionWanted: str(src.targetRevision) ?? 'HEAD',
      revisionObserved: str(sync.revision),
      revisionAttempted: str(asObj(asObj(op.operation).sync).revision),
    },
    automation: {
      autoSync,
      selfHeal: autoSync && automated?.selfHeal === true,
      prune: autoSync && automated?.prune === true,
      suspended: !autoSync,
    },
    sync: syncStatus,
    health,
    healthMessage:
      str(healthObj.message) ??
      (opMessage
        ? `last operation ${String(op.phase ?? '')}: ${opMessage}`
        : hs
          ? `Argo CD reports ${hs}`
          : 'no health reported'),
    conditions: conditionsOf(o),
    inventory,
    ...(owner ? { owner: { kind: 'ApplicationSet', name: String(owner.name) } } : {}),
    project: str(spec.project),
    warnings,
    ...(freezeOf(md) ? { freeze: freezeOf(md) } : {}),
    ...(syncOp
      ? {
          syncOperation: {
            phase: syncOp.phase,
            ...(argoSyncFailing(syncOp) ? { failing: true } : {}),
            ...(syncOp.revision ? { revision: syncOp.revision } : {}),
            ...(syncWhy ? { why: syncWhy } : {}),
            ...(syncOp.finishedAt ? { finishedAt: syncOp.finishedAt } : {}),
          },
        }
      : {}),
    generation: typeof md.generation === 'number' ? md.generation : undefined,
  };
}
