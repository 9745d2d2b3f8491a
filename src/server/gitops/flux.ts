// Flux adapter: Kustomization / HelmRelease (+ their sources) → App.
// Pure functions over plain JSON; the informer cache supplies the objects.
import {
  appId,
  type App,
  type AppSource,
  type Condition,
  type HealthStatus,
  type SyncStatus,
} from '../../domain/app.ts';
import { assessHealth } from '../../domain/health.ts';
import { dependsOnOf } from '../../domain/flux-deps.ts';
import { parseFluxInventoryId, type ObjectRef } from '../../domain/refs.ts';
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

export type SourceLookup = (kind: string, namespace: string, name: string) => Obj | undefined;

function sourceInfo(sourceObj: Obj | undefined, kind: string, name: string): AppSource {
  if (!sourceObj) return { kind, name };
  const spec = asObj(sourceObj.spec);
  const status = asObj(sourceObj.status);
  const artifact = asObj(status.artifact);
  const ref = asObj(spec.ref);
  const ready = conditionsOf(sourceObj).find((c) => c.type === 'Ready');
  return {
    kind,
    name,
    url: str(spec.url) ?? str(artifact.url),
    ref:
      str(ref.branch) ??
      str(ref.tag) ??
      str(ref.semver) ??
      str(ref.commit) ??
      str(ref.name) ??
      str(spec.ref as unknown),
    revisionWanted: str(artifact.revision),
    artifactDigest: str(artifact.digest),
    sourceReady: ready ? `${ready.status}${ready.reason ? ` (${ready.reason})` : ''}` : undefined,
  };
}

function fluxSync(status: Obj, wanted: string | undefined, conds: Condition[]): SyncStatus {
  if (!status || Object.keys(status).length === 0 || conds.length === 0) return 'Unknown';
  const applied = str(status.lastAppliedRevision);
  if (!applied) return 'OutOfSync';
  if (wanted && applied !== wanted) return 'OutOfSync';
  const ready = conds.find((c) => c.type === 'Ready');
  if (ready?.status === 'False') return 'OutOfSync';
  return 'Synced';
}

/** status.inventory as kustomize-controller and helm-controller (v1.5+) write it: `<ns>_<name>_<group>_<kind>` ids. */
function inventoryOf(cluster: string, status: Obj, warnings: string[]): ObjectRef[] {
  const inventory: ObjectRef[] = [];
  const entries = asObj(status.inventory).entries;
  if (Array.isArray(entries)) {
    for (const e of entries) {
      const en = asObj(e);
      const ref = parseFluxInventoryId(cluster, String(en.id ?? ''), String(en.v ?? ''));
      if (ref) inventory.push(ref);
      else warnings.push(`unreadable inventory entry ${String(en.id)}`);
    }
  }
  return inventory;
}

export function kustomizationToApp(cluster: string, obj: unknown, lookup: SourceLookup, envSetting: EnvSetting): App {
  const o = asObj(obj);
  const md = asObj(o.metadata);
  const spec = asObj(o.spec);
  const status = asObj(o.status);
  const namespace = str(md.namespace) ?? 'default';
  const name = str(md.name) ?? '?';
  const warnings: string[] = [];
  const sourceRef = asObj(spec.sourceRef);
  const srcKind = str(sourceRef.kind) ?? 'GitRepository';
  const srcName = str(sourceRef.name) ?? '';
  const srcNs = str(sourceRef.namespace) ?? namespace;
  const srcObj = srcName ? lookup(srcKind, srcNs, srcName) : undefined;
  if (!srcName) warnings.push('spec.sourceRef is missing');
  else if (!srcObj) warnings.push(`source ${srcKind} ${srcNs}/${srcName} not found`);
  const source: AppSource = {
    ...sourceInfo(srcObj, srcKind, srcName),
    path: str(spec.path) ?? './',
    revisionObserved: str(status.lastAppliedRevision),
    revisionAttempted: str(status.lastAttemptedRevision),
  };
  const conds = conditionsOf(o);
  if (!md.name || typeof o.spec !== 'object') warnings.push('malformed Kustomization (missing metadata.name or spec)');
  if (!o.status) warnings.push('no status yet: the controller has not reconciled this object');
  const inventory = inventoryOf(cluster, status, warnings);
  const suspended = spec.suspend === true;
  let health: HealthStatus;
  let healthMessage: string;
  if (!o.status || conds.length === 0) {
    health = 'Unknown';
    healthMessage = 'no status reported by kustomize-controller';
  } else {
    const h = assessHealth(o);
    health = h.status;
    healthMessage = h.message;
  }
  return {
    id: appId(cluster, namespace, 'Kustomization', name),
    cluster,
    controller: 'flux',
    kind: 'Kustomization',
    namespace,
    name,
    // where it deploys: spec.targetNamespace (set on every namespaced object it applies) and the namespaces of the
    // objects it applied (its inventory); before its first apply, the Kustomization's own namespace
    ...envFieldsOf(
      envSetting,
      md,
      cluster,
      destinationsOr([str(spec.targetNamespace), ...namespacesOf(inventory)], namespace),
      str(spec.targetNamespace) ?? namespace,
    ),
    source,
    automation: { autoSync: !suspended, selfHeal: !suspended, prune: spec.prune === true, suspended },
    sync: fluxSync(status, source.revisionWanted, conds),
    health,
    healthMessage,
    conditions: conds,
    inventory,
    warnings,
    ...(freezeOf(md) ? { freeze: freezeOf(md) } : {}),
    ...(dependsOnOf(o).length ? { dependsOn: dependsOnOf(o) } : {}),
    generation: typeof md.generation === 'number' ? md.generation : undefined,
    observedGeneration: typeof status.observedGeneration === 'number' ? status.observedGeneration : undefined,
  };
}

export function helmReleaseToApp(cluster: string, obj: unknown, lookup: SourceLookup, envSetting: EnvSetting): App {
  const o = asObj(obj);
  const md = asObj(o.metadata);
  const spec = asObj(o.spec);
  const status = asObj(o.status);
  const namespace = str(md.namespace) ?? 'default';
  const name = str(md.name) ?? '?';
  const warnings: string[] = [];
  // v2: spec.chartRef (OCIRepository / HelmChart) or spec.chart.spec.sourceRef (HelmRepository …)
  const chartRef = asObj(spec.chartRef);
  const chartSpec = asObj(asObj(spec.chart).spec);
  const srcRef = Object.keys(chartRef).length ? chartRef : asObj(chartSpec.sourceRef);
  const srcKind = str(srcRef.kind) ?? 'HelmRepository';
  const srcName = str(srcRef.name) ?? '';
  const srcNs = str(srcRef.namespace) ?? namespace;
  const srcObj = srcName ? lookup(srcKind, srcNs, srcName) : undefined;
  if (srcName && !srcObj) warnings.push(`source ${srcKind} ${srcNs}/${srcName} not found`);
  const history = Array.isArray(status.history) ? (status.history as Obj[]) : [];
  const latest = asObj(history[0]);
  // chart.spec: helm-controller makes a HelmChart (status.helmChart, `<ns>/<name>`) whose artifact is the chart
  // at the version it resolved; chartRef names the artifact's source directly
  const chart = helmChartOf(o);
  const chartObj = chart && chart.kind === 'HelmChart' ? lookup(chart.kind, chart.namespace, chart.name) : undefined;
  const chartArtifact = asObj(asObj(chartObj?.status).artifact);
  const info = sourceInfo(srcObj, srcKind, srcName);
  const source: AppSource = {
    ...info,
    path: str(chartSpec.chart),
    ref: str(chartSpec.version) ?? info.ref,
    ...(str(chartArtifact.revision) ? { revisionWanted: str(chartArtifact.revision) } : {}),
    ...(str(chartArtifact.digest) ? { artifactDigest: str(chartArtifact.digest) } : {}),
    revisionObserved: str(status.lastAppliedRevision) ?? str(latest.chartVersion),
    revisionAttempted: str(status.lastAttemptedRevision),
  };
  const conds = conditionsOf(o);
  if (!o.status) warnings.push('no status yet: the controller has not reconciled this object');
  const suspended = spec.suspend === true;
  const h = conds.length
    ? assessHealth(o)
    : { status: 'Unknown' as const, message: 'no status reported by helm-controller' };
  const ready = conds.find((c) => c.type === 'Ready');
  // the chart version the source offers (an OCI artifact's revision is `<tag>@sha256:…`) against the one installed
  const wanted = source.revisionWanted?.split('@')[0];
  const behind = !!wanted && !!source.revisionObserved && wanted !== source.revisionObserved;
  return {
    id: appId(cluster, namespace, 'HelmRelease', name),
    cluster,
    controller: 'flux',
    kind: 'HelmRelease',
    namespace,
    name,
    // Helm installs into spec.targetNamespace, else the HelmRelease's namespace
    ...envFieldsOf(
      envSetting,
      md,
      cluster,
      [str(spec.targetNamespace) ?? namespace],
      str(spec.targetNamespace) ?? namespace,
    ),
    source,
    automation: { autoSync: !suspended, selfHeal: !suspended, prune: true, suspended },
    sync: !conds.length ? 'Unknown' : ready?.status === 'True' && !behind ? 'Synced' : 'OutOfSync',
    health: h.status,
    healthMessage: h.message,
    conditions: conds,
    inventory: inventoryOf(cluster, status, warnings),
    warnings,
    ...(freezeOf(md) ? { freeze: freezeOf(md) } : {}),
    ...(dependsOnOf(o).length ? { dependsOn: dependsOnOf(o) } : {}),
    generation: typeof md.generation === 'number' ? md.generation : undefined,
    observedGeneration: typeof status.observedGeneration === 'number' ? status.observedGeneration : undefined,
  };
}

/**
 * The object whose artifact is a HelmRelease's chart: spec.chartRef (an OCIRepository or a HelmChart), else the
 * HelmChart helm-controller made for spec.chart (status.helmChart `<namespace>/<name>`; by Flux's naming
 * `<release namespace>-<release name>` in the source's namespace before the first status).
 */
export function helmChartOf(hr: unknown): { kind: string; namespace: string; name: string } | undefined {
  const o = asObj(hr);
  const md = asObj(o.metadata);
  const spec = asObj(o.spec);
  const ns = str(md.namespace) ?? 'default';
  const chartRef = asObj(spec.chartRef);
  if (str(chartRef.name))
    return {
      kind: str(chartRef.kind) ?? 'OCIRepository',
      namespace: str(chartRef.namespace) ?? ns,
      name: String(chartRef.name),
    };
  const hc = str(asObj(o.status).helmChart);
  if (hc && hc.includes('/')) {
    const [namespace = '', name = ''] = hc.split('/');
    return { kind: 'HelmChart', namespace, name };
  }
  const src = asObj(asObj(asObj(spec.chart).spec).sourceRef);
  if (!str(md.name) || !str(src.name)) return undefined;
  return { kind: 'HelmChart', namespace: str(src.namespace) ?? ns, name: `${ns}-${String(md.name)}` };
}
