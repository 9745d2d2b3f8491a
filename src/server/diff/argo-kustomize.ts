// An Argo CD Application's kustomize options (spec.source.kustomize), applied as Argo CD applies them: `kustomize
// edit` in the checked-out path before the build. An option the console does not apply fails the render (unknown,
// never a wrong desired state). Found by the held-out comparison on the seeded tenants ApplicationSet (namePrefix).
/** An Argo CD kustomize source's options (spec.source.kustomize): what Argo CD applies with `kustomize edit`. */
export interface ArgoKustomizeOptions {
  namePrefix?: string;
  nameSuffix?: string;
  images?: string[];
  commonLabels?: Record<string, string>;
  commonAnnotations?: Record<string, string>;
  namespace?: string;
  [other: string]: unknown;
}

/** The options the console applies as Argo CD does; any other one makes the render fail (unknown, never wrong). */
const KUSTOMIZE_OPTIONS = new Set([
  'namePrefix',
  'nameSuffix',
  'images',
  'commonLabels',
  'commonAnnotations',
  'namespace',
  'version',
]);

/** The options the console does not apply (the render must fail on them). */
export function unsupportedKustomizeOptions(k: ArgoKustomizeOptions): string[] {
  return Object.keys(k).filter((x) => !KUSTOMIZE_OPTIONS.has(x) && k[x] !== undefined && k[x] !== null);
}

/** The `kustomize edit` commands Argo CD runs for these options, in its order (unsupported ones: none). */
export function kustomizeEdits(k: ArgoKustomizeOptions): string[][] {
  const edits: string[][] = [];
  if (k.namePrefix) edits.push(['edit', 'set', 'nameprefix', '--', k.namePrefix]);
  if (k.nameSuffix) edits.push(['edit', 'set', 'namesuffix', '--', k.nameSuffix]);
  if (k.images?.length) edits.push(['edit', 'set', 'image', ...k.images]);
  const pairs = (m: Record<string, string>) => Object.entries(m).map(([a, b]) => `${a}:${b}`);
  if (k.commonLabels && Object.keys(k.commonLabels).length)
    edits.push(['edit', 'add', 'label', '--force', ...pairs(k.commonLabels)]);
  if (k.commonAnnotations && Object.keys(k.commonAnnotations).length)
    edits.push(['edit', 'add', 'annotation', '--force', ...pairs(k.commonAnnotations)]);
  if (k.namespace) edits.push(['edit', 'set', 'namespace', '--', k.namespace]);
  return edits;
}
