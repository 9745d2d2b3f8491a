// The app's desired state: everything a render depends on (the Flux Kustomization with its ConfigMap variables,
// its source; an Argo CD Application's source at the applied revision) and the render made from it.
import type { App } from '../../domain/app.ts';
import {
  renderArgo,
  renderFlux,
  RenderError,
  type ArgoHelmOptions,
  type Obj,
  type RenderResult,
  type RenderTools,
} from './render.ts';
import type { ArgoKustomizeOptions } from './argo-kustomize.ts';
import { composeHelmValues, renderHelmRelease } from './render-helm.ts';

/** What the desired state is read from. */
export interface DesiredDeps {
  tools: RenderTools;
  /** the app's CR and its source object (Flux; a HelmRelease's: the object whose artifact is its chart) */
  appObject: Obj;
  sourceObject?: Obj;
  /** ConfigMap data for postBuild.substituteFrom (never Secrets) */
  configMap(namespace: string, name: string): Obj | undefined;
}

/** Merges substituteFrom ConfigMaps into spec.postBuild.substitute, as kustomize-controller does (inline wins). */
function withSubstitutions(ks: Obj, cm: DesiredDeps['configMap']): Obj {
  const spec = (ks.spec ?? {}) as Obj;
  const post = (spec.postBuild ?? {}) as {
    substitute?: Record<string, string>;
    substituteFrom?: Array<{ kind: string; name: string; optional?: boolean }>;
  };
  if (!post.substituteFrom?.length) return ks;
  const vars: Record<string, string> = {};
  const ns = String(((ks.metadata ?? {}) as Obj).namespace ?? 'default');
  for (const ref of post.substituteFrom) {
    if (ref.kind === 'Secret')
      throw new RenderError(
        `postBuild.substituteFrom Secret/${ref.name}: the console does not read Secrets, so this render cannot be reproduced`,
        'render',
      );
    const c = cm(ns, ref.name);
    if (!c) {
      if (ref.optional) continue;
      throw new RenderError(`postBuild.substituteFrom ConfigMap/${ref.name} not found`, 'render');
    }
    for (const [k, v] of Object.entries((c.data ?? {}) as Record<string, string>))
      vars[k] = String(v).replace(/\n/g, '');
  }
  return {
    ...ks,
    spec: { ...spec, postBuild: { ...post, substitute: { ...vars, ...(post.substitute ?? {}) }, substituteFrom: [] } },
  };
}

/**
 * Everything a render depends on, and nothing else (render-cache.ts keys on exactly this). Flux: the
 * Kustomization with its ConfigMap variables merged, and its source object (the artifact). Argo CD: the source
 * at the revision the controller applied. Throws RenderError (a substituteFrom that cannot be reproduced).
 */
export type RenderInput =
  | { controller: 'flux'; kustomization: Obj; source: Obj | undefined }
  | { controller: 'flux-helm'; helmRelease: Obj; chart: Obj | undefined }
  | {
      controller: 'argocd';
      repoURL: string;
      revision: string;
      path: string;
      namespace: string | undefined;
      helm: ArgoHelmOptions & { appName?: string; kustomize?: ArgoKustomizeOptions };
    };

export function renderInput(app: App, deps: Omit<DesiredDeps, 'tools'>): RenderInput {
  // a HelmRelease: its values composed from valuesFrom and spec.values; its chart's source object (the service
  // passes the HelmChart or OCIRepository, gitops/flux.ts helmChartOf)
  if (app.kind === 'HelmRelease') {
    const spec = (deps.appObject.spec ?? {}) as Obj;
    return {
      controller: 'flux-helm',
      helmRelease: {
        ...deps.appObject,
        spec: { ...spec, values: composeHelmValues(deps.appObject, deps.configMap), valuesFrom: [] },
      },
      chart: deps.sourceObject,
    };
  }
  if (app.controller === 'flux')
    return {
      controller: 'flux',
      kustomization: withSubstitutions(deps.appObject, deps.configMap),
      source: deps.sourceObject,
    };
  const spec = (deps.appObject.spec ?? {}) as {
    source?: {
      repoURL?: string;
      path?: string;
      targetRevision?: string;
      helm?: ArgoHelmOptions;
      kustomize?: ArgoKustomizeOptions;
    };
    destination?: { namespace?: string };
  };
  const src = spec.source ?? {};
  return {
    controller: 'argocd',
    repoURL: src.repoURL ?? '',
    revision: app.source.revisionObserved ?? src.targetRevision ?? 'HEAD',
    path: src.path ?? '.',
    namespace: spec.destination?.namespace,
    helm: {
      ...(spec.source?.helm ?? {}),
      appName: app.name,
      ...(spec.source?.kustomize ? { kustomize: spec.source.kustomize } : {}),
    },
  };
}

/** Renders a RenderInput with the controller's renderer. */
export function renderFrom(input: RenderInput, tools: RenderTools): Promise<RenderResult> {
  if (input.controller === 'flux') return renderFlux(input.kustomization, input.source, tools);
  if (input.controller === 'flux-helm') return renderHelmRelease(input.helmRelease, input.chart, tools);
  return renderArgo(input.repoURL, input.revision, input.path, input.namespace, tools, input.helm);
}

/** The labels kustomize-controller sets on every object it applies (its inventory's tracking labels). */
export function withFluxOwnerLabels(o: Obj, app: Pick<App, 'name' | 'namespace'>): Obj {
  const md = (o.metadata ?? {}) as { labels?: Record<string, string> };
  return {
    ...o,
    metadata: {
      ...md,
      labels: {
        ...(md.labels ?? {}),
        'kustomize.toolkit.fluxcd.io/name': app.name,
        'kustomize.toolkit.fluxcd.io/namespace': app.namespace,
      },
    },
  };
}

/** The app's desired state as its controller renders it. Throws RenderError (never returns an empty guess). */
export async function renderDesired(app: App, deps: DesiredDeps): Promise<RenderResult> {
  return renderFrom(renderInput(app, deps), deps.tools);
}
