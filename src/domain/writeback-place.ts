// Placing one live change: the checks that refuse it (Secrets, generators, Helm, list items by index, status,
// identity, transformer-set fields), then kustomize's order — replicas / images entries, an app patch, the
// app's own manifest, a new entry, else a new strategic-merge patch listed under `patches:`. Only files inside
// the app's directory are edited: a value set in a file outside it is placed as if no file set it.
import { isScalar, stringify, type Document } from 'yaml';
import { parseImage } from './image.ts';
import type { Obj } from './object-meta.ts';
import { applyImages, imageEntryEdits, newImageEntry } from './writeback-images.ts';
import { build, parseSegments, resolve, setCreating } from './writeback-field-paths.ts';
import { fieldPathToPointer } from './managed-fields.ts';
import {
  buildTree,
  findSource,
  groupOf,
  inDir,
  relFrom,
  relTo,
  type Kust,
  type SourceObject,
} from './writeback-kustomize.ts';
import { appliedAfter, findPatches, type PatchHit } from './writeback-patches.ts';
import type { PlacementHow, WriteBackChange } from './writeback-types.ts';
import { editYaml, isObj, readDocs, setAt, str, type DocEdit } from './writeback-yaml.ts';

const REPLICA_KINDS = new Set(['Deployment', 'StatefulSet', 'ReplicaSet', 'ReplicationController']);
/** Groups whose list fields strategic merge merges by key (custom resources replace lists whole). */
const BUILTIN_GROUPS = new Set([
  '',
  'apps',
  'batch',
  'autoscaling',
  'policy',
  'networking.k8s.io',
  'rbac.authorization.k8s.io',
  'storage.k8s.io',
  'scheduling.k8s.io',
]);

export interface Working {
  files: Record<string, string>;
  changed: Set<string>;
}

function write(w: Working, file: string, text: string): void {
  if (w.files[file] === text) return;
  w.files[file] = text;
  w.changed.add(file);
}

/** Applies a patch hit (file or inline in the kustomization). */
function applyPatch(w: Working, hit: PatchHit): string | undefined {
  if (!hit.inline) {
    const r = hit.apply(w.files[hit.file]!);
    if ('error' in r) return r.error;
    write(w, hit.file, r.text);
    return undefined;
  }
  const inlinePath = hit.inline;
  let err: string | undefined;
  const r = editYaml(w.files[hit.file]!, 0, (doc) => {
    const node = doc.getIn(inlinePath, true);
    if (!isScalar(node) || typeof node.value !== 'string') return { error: 'the inline patch is not a string' };
    const inner = hit.apply(node.value);
    if ('error' in inner) return inner;
    node.value = inner.text;
    node.type = 'BLOCK_LITERAL';
    return { structural: true };
  });
  if ('error' in r) err = r.error;
  else write(w, hit.file, r.text);
  return err;
}

function editKust(w: Working, app: Kust, fn: (doc: Document.Parsed, data: Obj) => DocEdit): string | undefined {
  const r = editYaml(w.files[app.file]!, 0, (doc) => {
    const data = doc.toJS({ maxAliasCount: 100 }) as unknown;
    return fn(doc, isObj(data) ? data : {});
  });
  if ('error' in r) return r.error;
  write(w, app.file, r.text);
  return undefined;
}

function appendTo(doc: Document.Parsed, data: Obj, key: string, item: Obj): DocEdit {
  if (Array.isArray(data[key])) doc.addIn([key], doc.createNode(item));
  else if (data[key] === undefined || data[key] === null) doc.set(key, doc.createNode([item]));
  else return { error: `${key} in the kustomization is not a list` };
  return { structural: true };
}

const sanitize = (s: string) => s.toLowerCase().replace(/[^a-z0-9.-]+/g, '-');

/** The new patch file for `src`: `freeze-writeback-<name>.yaml`, or with the kind when that name is taken. */
function newPatchFile(w: Working, appDir: string, src: SourceObject): { file: string; docIndex: number | undefined } {
  const base = `${appDir === '' ? '' : `${appDir}/`}freeze-writeback-${sanitize(src.incomingName)}`;
  for (const file of [`${base}.yaml`, `${base}-${sanitize(String(src.obj.kind))}.yaml`]) {
    const text = w.files[file];
    if (text === undefined) return { file, docIndex: undefined };
    const docs = readDocs(text) ?? [];
    const d = docs.find((x) => {
      const v = x.value;
      const md = isObj(v) && isObj(v.metadata) ? v.metadata : {};
      return isObj(v) && v.kind === src.obj.kind && md.name === src.incomingName;
    });
    if (d) return { file, docIndex: d.index };
  }
  return {
    file: `${base}-${sanitize(String(src.obj.kind))}-${sanitize(groupOf(src.obj.apiVersion) || 'core')}.yaml`,
    docIndex: undefined,
  };
}

const NEW_PATCH_HEADER =
  '# Written back from an incident freeze by the GitOps console: live edits kept in Git for this environment.\n';

type Outcome = { file: string; how: PlacementHow; note?: string } | { reason: string };

export function placeOne(w: Working, appPath: string, change: WriteBackChange): Outcome & { src?: SourceObject } {
  const { ref } = change;
  if (ref.kind === 'Secret' && ref.group === '') return { reason: 'Secret values are never written to Git' };
  if (ref.kind === 'HelmRelease')
    return { reason: 'the object is a HelmRelease: set the value in its chart values, not in a rendered field' };
  const tree = buildTree(w.files, appPath);
  if (tree.helmChart) return { reason: `rendered from a Helm chart (${tree.helmChart}): set it in the chart's values` };

  const gen = tree.generated.find(
    (g) =>
      g.kind === ref.kind &&
      ref.group === '' &&
      (ref.name === g.name ||
        (ref.name.startsWith(`${g.name}-`) && /^[a-z0-9]{10}$/.test(ref.name.slice(g.name.length + 1)))),
  );
  if (gen)
    return {
      reason: `generated by ${gen.generator} "${gen.name}" in ${gen.file}: change the generator's literals or files`,
    };

  const segments = parseSegments(change.path);
  const bad = segments.find((s): s is { unsupported: string } => 'unsupported' in s);
  if (bad)
    return {
      reason: /^\[\d+\]$/.test(bad.unsupported)
        ? `the field is a list item addressed by index (${bad.unsupported}): which item it is in Git cannot be known`
        : `the field is a list item addressed by value (${bad.unsupported}): set items are not written back`,
    };
  if (segments.length === 0) return { reason: 'the change has no field path' };
  const first = 'field' in segments[0]! ? (segments[0] as { field: string }).field : '';
  if (first === 'status') return { reason: 'status is reported by controllers, not desired state in Git' };
  if (
    first === 'apiVersion' ||
    first === 'kind' ||
    change.path === 'metadata.name' ||
    change.path === 'metadata.namespace'
  )
    return { reason: 'the identity of an object (apiVersion, kind, name, namespace) is not written back' };

  const src = findSource(tree, ref);
  if (!src) {
    const hashed = /-[a-z0-9]{10}$/.test(ref.name) && (ref.kind === 'ConfigMap' || ref.kind === 'Secret');
    return {
      reason: hashed
        ? 'the name has a generated hash suffix: the object comes from a generator, change its literals or files'
        : `no manifest under ${appPath || 'the repository root'} or its bases declares ${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`,
    };
  }
  // fields a transformer of the chain sets would be overwritten after any patch
  const meta = segments.length === 3 && first === 'metadata' && 'field' in segments[1]! && 'field' in segments[2]!;
  if (meta) {
    const map = (segments[1] as { field: string }).field;
    const key = (segments[2] as { field: string }).field;
    const setter = src.chain.find((k) => {
      if (map === 'labels') {
        if (isObj(k.data.commonLabels) && Object.hasOwn(k.data.commonLabels, key)) return true;
        return (
          Array.isArray(k.data.labels) &&
          k.data.labels.some((l) => isObj(l) && isObj(l.pairs) && Object.hasOwn(l.pairs, key))
        );
      }
      return map === 'annotations' && isObj(k.data.commonAnnotations) && Object.hasOwn(k.data.commonAnnotations, key);
    });
    if (setter) return { reason: `${change.path} is set by the kustomization ${setter.file} for every object`, src };
  }

  const app = tree.app;
  const live = change.liveValue;
  // Only files inside the app's directory are edited: a file outside it (`../shared/cm.yaml`, a patch at
  // `../common/p.yaml`) may be listed by other overlays too, so a value it sets is written into the app's own
  // directory instead, as one no file of the app sets (a replicas: / images: entry, else a new patch).
  const own = (file: string): boolean => inDir(appPath, file);
  const hits = app ? findPatches(w.files, app, src, change.path, segments, live) : [];
  // the last patch kustomize applies wins; the overlay's own patch is edited, a shared one is outdone
  const winning = hits.at(-1);
  const patch = winning && own(winning.file) ? winning : undefined;
  const shared = winning && !patch ? winning : undefined;
  const sharedFile = shared?.file ?? (src.local && !own(src.file) ? src.file : undefined);
  const done = (file: string, how: PlacementHow, as: string): Outcome & { src: SourceObject } => ({
    file,
    how,
    src,
    ...(sharedFile !== undefined
      ? {
          note: `set in ${relFrom(appPath, sharedFile)}, outside ${appPath} and possibly shared with other overlays: written as ${as}`,
        }
      : {}),
  });

  // spec.replicas of a workload: the replicas transformer runs last and wins
  if (app && change.path === 'spec.replicas' && REPLICA_KINDS.has(String(src.obj.kind)) && typeof live === 'number') {
    const entries = Array.isArray(app.data.replicas) ? app.data.replicas : [];
    const i = entries.findIndex((e) => isObj(e) && (e.name === src.incomingName || e.name === src.renderedName));
    if (i >= 0) {
      const err = editKust(w, app, (doc) => setAt(doc, ['replicas', i, 'count'], live));
      return err ? { reason: err, src } : done(app.file, 'kustomize-replicas', `its replicas: entry in ${app.file}`);
    }
  }

  // a container image: the images transformer runs last and wins
  const last = segments.at(-1);
  const container = segments.at(-2);
  const list = segments.at(-3);
  const isImage =
    typeof live === 'string' &&
    last !== undefined &&
    'field' in last &&
    last.field === 'image' &&
    container !== undefined &&
    'keyed' in container &&
    list !== undefined &&
    'field' in list &&
    (list.field === 'containers' || list.field === 'initContainers');
  // the image as the overlay's images transformer sees it: the overlay's last patch, else the base's output
  let seenImage: string | undefined;
  if (app && isImage) {
    let incomingImage = str(resolve(src.obj, segments)?.value);
    if (incomingImage !== undefined)
      for (const k of [...src.chain.slice(1)].reverse()) incomingImage = applyImages(incomingImage, k.data.images);
    seenImage = str(winning?.current) ?? incomingImage;
    const entries = Array.isArray(app.data.images) ? app.data.images : [];
    const seen = seenImage;
    const i = seen === undefined ? -1 : entries.findIndex((e) => isObj(e) && e.name === parseImage(seen).name);
    if (i >= 0) {
      const err = editKust(w, app, (doc) => imageEntryEdits(doc, ['images', i], entries[i] as Obj, parseImage(live)));
      return err ? { reason: err, src } : done(app.file, 'kustomize-images', `its images: entry in ${app.file}`);
    }
  }

  // an app patch that sets the field
  if (patch) {
    const err = applyPatch(w, patch);
    return err ? { reason: err, src } : { file: patch.file, how: 'patch', src };
  }

  // the app's own manifest (a patch that sets the field would override it)
  if (src.local && sharedFile === undefined && !shared) {
    const r = editYaml(w.files[src.file]!, src.docIndex, (doc) => setCreating(doc, segments, live, src.obj));
    if ('error' in r) return { reason: `${src.file}: ${r.error}`, src };
    write(w, src.file, r.text);
    return { file: src.file, how: 'resource', src };
  }
  if (!app) return { reason: `no kustomization in ${appPath} to write an overlay change into`, src };

  if (change.path === 'spec.replicas' && REPLICA_KINDS.has(String(src.obj.kind)) && typeof live === 'number') {
    const err = editKust(w, app, (doc, data) =>
      appendTo(doc, data, 'replicas', { name: src.incomingName, count: live }),
    );
    return err ? { reason: err, src } : done(app.file, 'kustomize-replicas', `a new replicas: entry in ${app.file}`);
  }
  if (isImage && seenImage !== undefined) {
    const entry = newImageEntry(parseImage(seenImage).name, parseImage(live as string));
    const err = editKust(w, app, (doc, data) => appendTo(doc, data, 'images', entry));
    return err ? { reason: err, src } : done(app.file, 'kustomize-images', `a new images: entry in ${app.file}`);
  }

  // a shared JSON 6902 patch under patchesJson6902, which kustomize applies after all others: an entry after it
  if (shared?.list === 'patchesJson6902') {
    const pointer = fieldPathToPointer(change.path);
    if (pointer === undefined) return { reason: `${change.path} has no JSON pointer for a JSON 6902 patch`, src };
    const ops = stringify([{ op: 'add', path: pointer, value: live }], { lineWidth: 0 });
    const entry: Obj = { ...(shared.target ? { target: shared.target } : {}), patch: ops };
    const err = editKust(w, app, (doc, data) => appendTo(doc, data, 'patchesJson6902', entry));
    return err ? { reason: err, src } : done(app.file, 'new-patch', `a JSON 6902 patch after it in ${app.file}`);
  }

  // a new strategic-merge patch of the overlay
  if (segments.some((s) => 'keyed' in s) && !BUILTIN_GROUPS.has(groupOf(src.obj.apiVersion)))
    return {
      reason: `a strategic-merge patch cannot address a list item of ${String(src.obj.kind)} (a custom resource's lists are replaced whole)`,
      src,
    };
  const target = newPatchFile(w, app.dir, src);
  const rel = relTo(app.dir, target.file);
  const listedAt = (['patchesStrategicMerge', 'patches'] as const)
    .map((key) => {
      const entries = Array.isArray(app.data[key]) ? (app.data[key] as unknown[]) : [];
      return { list: key, index: entries.findIndex((e) => (isObj(e) ? e.path === rel : e === rel)) };
    })
    .find((at) => at.index >= 0);
  if (shared && listedAt && !appliedAfter(listedAt, shared))
    return {
      reason: `${target.file} is applied before ${shared.file}, which sets the field: list it after that patch`,
      src,
    };
  if (target.docIndex !== undefined) {
    const r = editYaml(w.files[target.file]!, target.docIndex, (doc) => setCreating(doc, segments, live, src.obj));
    if ('error' in r) return { reason: `${target.file}: ${r.error}`, src };
    write(w, target.file, r.text);
  } else {
    const metadata: Obj = { name: src.incomingName };
    if (src.incomingNamespace !== undefined) metadata.namespace = src.incomingNamespace;
    const body = build(segments, live, src.obj);
    const patch = { apiVersion: src.obj.apiVersion, kind: src.obj.kind, metadata, ...(isObj(body) ? body : {}) };
    if (isObj(body) && isObj(body.metadata)) patch.metadata = { ...metadata, ...body.metadata };
    const text = NEW_PATCH_HEADER + stringify(patch, { lineWidth: 0 });
    const existing = w.files[target.file];
    write(
      w,
      target.file,
      existing === undefined ? text : `${existing.replace(/\n*$/, '\n')}---\n${stringify(patch, { lineWidth: 0 })}`,
    );
  }
  if (!listedAt) {
    const err = editKust(w, app, (doc, data) => appendTo(doc, data, 'patches', { path: rel }));
    if (err) return { reason: err, src };
  }
  return done(target.file, 'new-patch', `a new patch in ${app.dir || 'the repository root'}`);
}
