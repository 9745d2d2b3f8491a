/**
 * "Write back to Git" for incident freezes: where in the repository a live field change belongs, and the
 * edited file contents that put it there. Pure: the caller hands in the repository's files and gets back
 * only the files that change.
 *
 * Placement follows kustomize's own order (patches, then the overlay's `replicas:` and `images:`
 * transformers, which run last):
 *
 * - `spec.replicas` of a Deployment / StatefulSet / ReplicaSet / ReplicationController: the app
 *   kustomization's `replicas:` entry → a patch of the app that sets it → the resource file when the app
 *   itself lists it → else a new `replicas:` entry in the app's kustomization (a shared base is never edited).
 * - a container image: the app kustomization's `images:` entry for the image → a patch of the app that
 *   sets it → the resource file when the app lists it → else a new `images:` entry.
 * - any other field: a patch of the app that sets it → the resource file when the app lists it → else a
 *   new strategic-merge patch `<app>/freeze-writeback-<name>.yaml`, listed under `patches:`.
 *
 * Only files inside the app's directory are edited. A value set in a file outside it — a resource the app's
 * kustomization lists as `../shared/cm.yaml`, a patch at `../common/p.yaml` — may be shared with other overlays,
 * so it is placed as if no file set it (a replicas: / images: entry, else a new patch in the app's directory,
 * applied after the shared patch), and the placement's note says why.
 *
 * Never placed (reported with the reason and a YAML snippet to paste): Secrets, generated ConfigMaps /
 * Secrets, Helm-rendered objects, list items by index or set values, fields a kustomize transformer of the
 * chain sets (labels, annotations, names, namespace), status, and objects whose source cannot be found.
 *
 * Edits keep comments and formatting: a scalar is replaced in the text where it stands; anything else is
 * edited through the `yaml` Document API and only the edited document of the file is re-serialised.
 *
 * This file is the plan (and the snippet of what is not placed); one change is placed by writeback-place.ts,
 * on the kustomize tree (writeback-kustomize.ts), the app's patches (writeback-patches.ts), kustomize
 * `images:` (writeback-images.ts), field paths (writeback-field-paths.ts) and YAML (writeback-yaml.ts).
 */
import { stringify } from 'yaml';
import type { Obj } from './object-meta.ts';
import { normalizeRepoPath } from './repo-path.ts';
import { build, parseSegments } from './writeback-field-paths.ts';
import { inDir, type SourceObject } from './writeback-kustomize.ts';
import { placeOne, type Working } from './writeback-place.ts';
import type { Placement, WriteBackChange, WriteBackPlan } from './writeback-types.ts';
import { isObj, str } from './writeback-yaml.ts';

export type { Placement, PlacementHow, WriteBackChange, WriteBackPlan } from './writeback-types.ts';

const WELL_KNOWN_VERSIONS: Record<string, string> = {
  '': 'v1',
  apps: 'apps/v1',
  batch: 'batch/v1',
  autoscaling: 'autoscaling/v2',
  policy: 'policy/v1',
  'networking.k8s.io': 'networking.k8s.io/v1',
  'rbac.authorization.k8s.io': 'rbac.authorization.k8s.io/v1',
};

/** The YAML to paste for a change that is not placed (a Secret's value redacted by the caller). */
function snippet(change: WriteBackChange, src: SourceObject | undefined, value: unknown): string {
  const segs = parseSegments(change.path);
  const apiVersion = str(src?.obj.apiVersion) ?? WELL_KNOWN_VERSIONS[change.ref.group] ?? `${change.ref.group}/VERSION`;
  const metadata: Obj = { name: change.ref.name };
  if (change.ref.namespace) metadata.namespace = change.ref.namespace;
  const body = build(segs, value, src?.obj);
  const merged = isObj(body) ? body : {};
  const head = segs.some((s) => 'unsupported' in s)
    ? `# ${change.path}: a list item addressed by index or by value; a patch replaces the whole list\n`
    : '';
  const { metadata: bodyMeta, ...rest } = merged;
  const md = isObj(bodyMeta) ? { ...metadata, ...bodyMeta } : metadata;
  return head + stringify({ apiVersion, kind: change.ref.kind, metadata: md, ...rest }, { lineWidth: 0 });
}

/**
 * Where each change belongs in Git and the edited files that put it there. Changes are placed one after the
 * other on the evolving files, so two changes of one object share one new patch, and a file edited twice
 * is returned once.
 */
export function planWriteBack(input: {
  appPath: string;
  files: Record<string, string>;
  changes: WriteBackChange[];
}): WriteBackPlan {
  const w: Working = { files: { ...input.files }, changed: new Set() };
  const appPath = normalizeRepoPath(input.appPath);
  const placements: Placement[] = [];
  for (const change of input.changes) {
    const secret = change.ref.kind === 'Secret' && change.ref.group === '';
    const value = secret ? '<redacted: Secret values are never written to Git>' : change.liveValue;
    if (appPath === undefined) {
      placements.push({
        changeId: change.id,
        placed: false,
        reason: `the app path ${input.appPath} leaves the repository`,
        yaml: snippet(change, undefined, value),
      });
      continue;
    }
    let out: ReturnType<typeof placeOne>;
    const before = { files: { ...w.files }, changed: new Set(w.changed) };
    try {
      out = placeOne(w, appPath, change);
    } catch (e) {
      out = { reason: `could not edit the files: ${e instanceof Error ? e.message : String(e)}` };
    }
    // the rule of the placement, checked on its result: nothing outside the app's directory is edited
    const outside = 'reason' in out ? undefined : [...w.changed].find((f) => !inDir(appPath, f));
    if (outside !== undefined)
      out = { reason: `the placement would edit ${outside}, outside ${appPath}`, src: out.src };
    if ('reason' in out) {
      // a change that fails half-way leaves no partial edit behind
      w.files = before.files;
      w.changed = before.changed;
      placements.push({
        changeId: change.id,
        placed: false,
        reason: out.reason,
        yaml: snippet(change, out.src, value),
      });
    } else
      placements.push({
        changeId: change.id,
        placed: true,
        file: out.file,
        how: out.how,
        ...(out.note !== undefined ? { note: out.note } : {}),
      });
  }
  const files: Record<string, string> = {};
  for (const f of [...w.changed].sort()) if (w.files[f] !== input.files[f]) files[f] = w.files[f]!;
  return { files, placements };
}
