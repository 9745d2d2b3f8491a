import type { ResourceKind } from './informer.ts';

const k = (group: string, version: string, kind: string, plural: string, namespaced = true): ResourceKind => ({
  group,
  version,
  kind,
  plural,
  namespaced,
});

export const KINDS = {
  Kustomization: k('kustomize.toolkit.fluxcd.io', 'v1', 'Kustomization', 'kustomizations'),
  HelmRelease: k('helm.toolkit.fluxcd.io', 'v2', 'HelmRelease', 'helmreleases'),
  GitRepository: k('source.toolkit.fluxcd.io', 'v1', 'GitRepository', 'gitrepositories'),
  OCIRepository: k('source.toolkit.fluxcd.io', 'v1', 'OCIRepository', 'ocirepositories'),
  HelmRepository: k('source.toolkit.fluxcd.io', 'v1', 'HelmRepository', 'helmrepositories'),
  HelmChart: k('source.toolkit.fluxcd.io', 'v1', 'HelmChart', 'helmcharts'),
  Bucket: k('source.toolkit.fluxcd.io', 'v1', 'Bucket', 'buckets'),
  Application: k('argoproj.io', 'v1alpha1', 'Application', 'applications'),
  ApplicationSet: k('argoproj.io', 'v1alpha1', 'ApplicationSet', 'applicationsets'),
  AppProject: k('argoproj.io', 'v1alpha1', 'AppProject', 'appprojects'),
  // Flux image automation (issue 26): what chooses image tags and who writes them to Git
  ImageRepository: k('image.toolkit.fluxcd.io', 'v1', 'ImageRepository', 'imagerepositories'),
  ImagePolicy: k('image.toolkit.fluxcd.io', 'v1', 'ImagePolicy', 'imagepolicies'),
  ImageUpdateAutomation: k('image.toolkit.fluxcd.io', 'v1', 'ImageUpdateAutomation', 'imageupdateautomations'),
} as const;

export const APP_WATCH_KINDS: ResourceKind[] = Object.values(KINDS);

export const SOURCE_KINDS = new Set(['GitRepository', 'OCIRepository', 'HelmRepository', 'HelmChart', 'Bucket']);

export function kindKey(kind: string): string | undefined {
  const r = (KINDS as Record<string, ResourceKind>)[kind];
  return r ? `${r.group}/${r.kind}` : undefined;
}
