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
 * Never placed (reported with the reason and a YAML snippet to paste): Secrets, generated ConfigMaps /
 * Secrets, Helm-rendered objects, list items by index or set values, fields a kustomize transformer of the
 * chain sets (labels, annotations, names, namespace), status, and objects whose source cannot be found.
 *
 * Edits keep comments and formatting: a scalar is replaced in the text where it stands; anything else is
 * edited through the `yaml` Document API and only the edited document of the file is re-serialised.
 */
import { isScalar, parseAllDocuments, stringify, type Document, type Scalar } from 'yaml';
import {
  fieldPathToPointer,
  fieldSegmentName,
  formatKeyValue,
  keyedSegmentFields,
  splitFieldPath,
  splitKeyFields,
} from './managed-fields.ts';

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
  | { changeId: string; placed: true; file: string; how: PlacementHow }
  | { changeId: string; placed: false; reason: string; yaml: string };

export interface WriteBackPlan {
  /** only the files that change, with their new content */
  files: Record<string, string>;
  placements: Placement[];
}

type Obj = Record<string, unknown>;
type YamlPath = Array<string | number>;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const groupOf = (apiVersion: unknown): string => {
  const s = str(apiVersion) ?? '';
  const i = s.indexOf('/');
  return i < 0 ? '' : s.slice(0, i);
};

// ---------------------------------------------------------------- paths in the repository

/** Normalises a repo-relative POSIX path (`./a/../b/` → `b`, root → ``); `undefined` when it leaves the repo. */
export function normalizeRepoPath(p: string): string | undefined {
  const out: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length === 0) return undefined;
      out.pop();
    } else out.push(part);
  }
  return out.join('/');
}

const joinRepo = (dir: string, rel: string): string | undefined =>
  rel.startsWith('/') ? undefined : normalizeRepoPath(dir === '' ? rel : `${dir}/${rel}`);
const inDir = (dir: string, file: string): boolean => dir === '' || file.startsWith(`${dir}/`);
const relTo = (dir: string, file: string): string => (dir === '' ? file : file.slice(dir.length + 1));
const isYamlName = (p: string): boolean => /\.(ya?ml|json)$/i.test(p);
const KUSTOMIZATION_NAMES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];

// ---------------------------------------------------------------- YAML reading

interface ParsedDoc {
  index: number;
  value: unknown;
}

function readDocs(text: string): ParsedDoc[] | undefined {
  try {
    const docs = parseAllDocuments(text);
    if (!Array.isArray(docs)) return [];
    const out: ParsedDoc[] = [];
    for (let i = 0; i < docs.length; i++) {
      const d = docs[i]!;
      if (d.errors.length) return undefined;
      out.push({ index: i, value: d.toJS({ maxAliasCount: 100 }) as unknown });
    }
    return out;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------- YAML editing

/** How a document edit went: a scalar to replace in the text, a structural change made to the document, or why not. */
type DocEdit = { scalar: Scalar; value: string | number | boolean | null } | { structural: true } | { error: string };

const isPrimitive = (v: unknown): v is string | number | boolean | null =>
  v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/** The text of a single-line scalar, in the quoting style the old one had where that keeps its type. */
function scalarText(value: string | number | boolean | null, oldType: Scalar['type']): string | undefined {
  if (value === null) return 'null';
  if (typeof value !== 'string')
    return Number.isFinite(value) || typeof value === 'boolean' ? String(value) : undefined;
  if (value.includes('\n') || value.includes('\r')) return undefined;
  if (oldType === 'QUOTE_SINGLE') return `'${value.replace(/'/g, "''")}'`;
  if (oldType === 'QUOTE_DOUBLE') return JSON.stringify(value);
  const plain = stringify(value, { lineWidth: 0 }).trimEnd();
  return plain.includes('\n') || /[,[\]{}]/.test(plain) ? JSON.stringify(value) : plain;
}

/** Non-indented block sequences (`key:\n- item`) in the source: keep them that way when re-serialising. */
const usesCompactSeqs = (text: string): boolean => /^( *)[^\s#-][^\n]*:[ \t]*\r?\n\1- /m.test(text);

/**
 * Applies `edit` to document `docIndex` of `text`; the new text, or the reason it failed. Only the edited
 * document changes: a scalar is replaced where it stands, a structural edit re-serialises that one document.
 */
function editYaml(
  text: string,
  docIndex: number,
  edit: (doc: Document.Parsed) => DocEdit,
): { text: string } | { error: string } {
  let docs: Document.Parsed[];
  try {
    const parsed = parseAllDocuments(text);
    docs = Array.isArray(parsed) ? parsed : [];
  } catch {
    return { error: 'the file is not valid YAML' };
  }
  const doc = docs[docIndex];
  if (!doc || doc.errors.length) return { error: 'the file is not valid YAML' };
  const result = edit(doc);
  if ('error' in result) return result;
  if ('scalar' in result) {
    const [start, end] = result.scalar.range ?? [];
    const repl = scalarText(result.value, result.scalar.type);
    if (start !== undefined && end !== undefined && repl !== undefined)
      return { text: text.slice(0, start) + repl + text.slice(end) };
    result.scalar.value = result.value;
  }
  const start = docIndex === 0 ? 0 : doc.range[0];
  const end = docIndex + 1 < docs.length ? docs[docIndex + 1]!.range[0] : text.length;
  let out: string;
  try {
    out = doc.toString({ lineWidth: 0, indentSeq: !usesCompactSeqs(text) });
  } catch {
    return { error: 'the file could not be re-serialised' };
  }
  return { text: text.slice(0, start) + out + text.slice(end) };
}

/** Sets `path` of `doc` to `value`: the existing scalar in place, else through the Document API. */
function setAt(doc: Document.Parsed, path: YamlPath, value: unknown): DocEdit {
  const node = doc.getIn(path, true);
  if (isScalar(node) && isPrimitive(value)) return { scalar: node, value };
  doc.setIn(path, doc.createNode(value));
  return { structural: true };
}

// ---------------------------------------------------------------- the console's field paths

interface KeyedPart {
  name: string;
  /** the value as written in the segment (raw or JSON-quoted) */
  raw: string;
}

/** The key fields of a keyed list item segment with their values as written, or `undefined`. */
function keyedParts(segment: string): KeyedPart[] | undefined {
  const names = keyedSegmentFields(segment);
  if (!names) return undefined;
  const parts = splitKeyFields(segment.slice(1, -1));
  if (parts.length !== names.length) return undefined;
  return names.map((name, i) => ({ name, raw: parts[i]!.slice(formatKeyValue(name).length + 1) }));
}

/** The defaults the apiserver fills into key fields that Git usually leaves out. */
const KEY_DEFAULTS: Record<string, string> = { protocol: 'TCP' };

function itemMatches(item: unknown, parts: KeyedPart[]): boolean {
  if (!isObj(item)) return false;
  return parts.every(({ name, raw }) =>
    item[name] === undefined ? KEY_DEFAULTS[name] === raw : formatKeyValue(item[name]) === raw,
  );
}

/** A key value from its text when no existing item says its type: JSON strings, integers, booleans, else raw. */
function keyValueOf(raw: string): unknown {
  if (raw.startsWith('"')) {
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      return raw;
    }
  }
  if (/^-?\d+$/.test(raw)) return Number(raw);
  if (raw === 'true' || raw === 'false') return raw === 'true';
  return raw;
}

type Segment = { field: string } | { keyed: KeyedPart[]; text: string } | { unsupported: string };

function parseSegments(path: string): Segment[] {
  return splitFieldPath(path).map((s): Segment => {
    const field = fieldSegmentName(s);
    if (field !== undefined) return { field };
    const keyed = keyedParts(s);
    return keyed ? { keyed, text: s } : { unsupported: s };
  });
}

/** Walks JSON `root` along `segments`: the YAML path and the value there, or `undefined` when absent. */
function resolve(root: unknown, segments: Segment[]): { path: YamlPath; value: unknown } | undefined {
  const path: YamlPath = [];
  let cur = root;
  for (const s of segments) {
    if ('field' in s) {
      if (!isObj(cur) || !Object.hasOwn(cur, s.field)) return undefined;
      path.push(s.field);
      cur = cur[s.field];
    } else if ('keyed' in s) {
      if (!Array.isArray(cur)) return undefined;
      const i = cur.findIndex((item) => itemMatches(item, s.keyed));
      if (i < 0) return undefined;
      path.push(i);
      cur = cur[i];
    } else return undefined;
  }
  return { path, value: cur };
}

/**
 * The JSON value that sets `segments` to `value` from an empty parent; keyed items carry their key fields,
 * typed as in `reference` (the same place in the source object) when it has the item.
 */
function build(segments: Segment[], value: unknown, reference: unknown): unknown {
  if (segments.length === 0) return value;
  const [s, ...rest] = segments as [Segment, ...Segment[]];
  if ('field' in s) return { [s.field]: build(rest, value, isObj(reference) ? reference[s.field] : undefined) };
  if ('keyed' in s) {
    const refItem = Array.isArray(reference) ? reference.find((item) => itemMatches(item, s.keyed)) : undefined;
    const item: Obj = {};
    for (const k of s.keyed)
      item[k.name] = isObj(refItem) && refItem[k.name] !== undefined ? refItem[k.name] : keyValueOf(k.raw);
    const inner = build(rest, value, refItem);
    return [isObj(inner) ? { ...item, ...inner } : item];
  }
  return [build(rest, value, undefined)];
}

/**
 * Sets `segments` of `doc` to `value`, creating what is missing (maps, keyed list items with their keys).
 * `reference` is the source object, to type the key fields of a new list item.
 */
function setCreating(doc: Document.Parsed, segments: Segment[], value: unknown, reference: unknown): DocEdit {
  const path: YamlPath = [];
  let cur: unknown = doc.toJS({ maxAliasCount: 100 });
  let ref = reference;
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!;
    if ('field' in s) {
      if (!isObj(cur)) return { error: `${path.join('.') || 'the document'} is not a mapping` };
      if (!Object.hasOwn(cur, s.field) || cur[s.field] === null) {
        doc.setIn(
          [...path, s.field],
          doc.createNode(build(segments.slice(i + 1), value, isObj(ref) ? ref[s.field] : undefined)),
        );
        return { structural: true };
      }
      path.push(s.field);
      cur = cur[s.field];
      ref = isObj(ref) ? ref[s.field] : undefined;
    } else if ('keyed' in s) {
      if (!Array.isArray(cur)) return { error: `${path.join('.')} is not a list` };
      const at = cur.findIndex((item) => itemMatches(item, s.keyed));
      if (at < 0) {
        const item = (build(segments.slice(i), value, ref) as unknown[])[0];
        doc.addIn(path, doc.createNode(item));
        return { structural: true };
      }
      path.push(at);
      cur = cur[at];
      ref = Array.isArray(ref) ? ref.find((item) => itemMatches(item, s.keyed)) : undefined;
    } else return { error: `cannot address ${s.unsupported}` };
  }
  return setAt(doc, path, value);
}

// ---------------------------------------------------------------- the kustomize tree

interface Kust {
  dir: string;
  file: string;
  data: Obj;
}

interface SourceObject {
  file: string;
  docIndex: number;
  obj: Obj;
  /** kustomizations from the app's (outermost) to the one that lists the file; empty for a plain directory */
  chain: Kust[];
  /** listed by the app's own kustomization, or a file of the app's plain directory */
  local: boolean;
  /** name and namespace as the app's kustomization receives the object (after its bases' transformers) */
  incomingName: string;
  incomingNamespace: string | undefined;
  renderedName: string;
  renderedNamespace: string | undefined;
}

interface Generated {
  kind: 'ConfigMap' | 'Secret';
  generator: string;
  name: string;
  file: string;
}

interface Tree {
  app: Kust | undefined;
  objects: SourceObject[];
  generated: Generated[];
  /** every kustomization reached, with its chain (outermost first, itself last) */
  kusts: Kust[][];
  helmChart: string | undefined;
}

function kustAt(files: Record<string, string>, dir: string): Kust | undefined {
  for (const name of KUSTOMIZATION_NAMES) {
    const file = dir === '' ? name : `${dir}/${name}`;
    const text = files[file];
    if (text === undefined) continue;
    const docs = readDocs(text);
    const data = docs?.[0]?.value;
    return { dir, file, data: isObj(data) ? data : {} };
  }
  return undefined;
}

const stringList = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];

function affixes(chain: Kust[]): { prefix: string; suffix: string } {
  let prefix = '';
  let suffix = '';
  for (const k of chain) {
    prefix += str(k.data.namePrefix) ?? '';
    suffix = (str(k.data.nameSuffix) ?? '') + suffix;
  }
  return { prefix, suffix };
}

const namespaceOf = (chain: Kust[], own: string | undefined): string | undefined =>
  chain.map((k) => str(k.data.namespace)).find((n) => n !== undefined && n !== '') ?? own;

function objectsOfFile(files: Record<string, string>, file: string, chain: Kust[], local: boolean): SourceObject[] {
  const text = files[file];
  if (text === undefined) return [];
  const docs = readDocs(text) ?? [];
  const out: SourceObject[] = [];
  const inner = chain.slice(1);
  for (const d of docs) {
    if (!isObj(d.value) || typeof d.value.kind !== 'string') continue;
    const md = isObj(d.value.metadata) ? d.value.metadata : {};
    const name = str(md.name) ?? '';
    const ns = str(md.namespace);
    const all = affixes(chain);
    const before = affixes(inner);
    out.push({
      file,
      docIndex: d.index,
      obj: d.value,
      chain,
      local,
      incomingName: before.prefix + name + before.suffix,
      incomingNamespace: namespaceOf(inner, ns),
      renderedName: all.prefix + name + all.suffix,
      renderedNamespace: namespaceOf(chain, ns),
    });
  }
  return out;
}

function buildTree(files: Record<string, string>, appPath: string): Tree {
  const tree: Tree = { app: undefined, objects: [], generated: [], kusts: [], helmChart: undefined };
  const allFiles = Object.keys(files);
  const visit = (dir: string, outer: Kust[], depth: number) => {
    if (depth > 20 || outer.some((k) => k.dir === dir)) return;
    if (files[dir === '' ? 'Chart.yaml' : `${dir}/Chart.yaml`] !== undefined) {
      tree.helmChart ??= dir === '' ? 'Chart.yaml' : `${dir}/Chart.yaml`;
      return;
    }
    const k = kustAt(files, dir);
    if (!k) {
      // a plain directory (Argo CD directory source, Flux without a kustomization): every manifest in it
      for (const f of allFiles.filter((f) => inDir(dir, f) && isYamlName(f)).sort())
        tree.objects.push(...objectsOfFile(files, f, outer, outer.length === 0));
      return;
    }
    const chain = [...outer, k];
    if (outer.length === 0) tree.app = k;
    tree.kusts.push(chain);
    if (Array.isArray(k.data.helmCharts) && k.data.helmCharts.length) tree.helmChart ??= k.file;
    const { prefix, suffix } = affixes(chain);
    for (const key of ['configMapGenerator', 'secretGenerator'] as const) {
      const gens = k.data[key];
      if (!Array.isArray(gens)) continue;
      for (const g of gens) {
        const name = isObj(g) ? str(g.name) : undefined;
        if (name)
          tree.generated.push({
            kind: key === 'configMapGenerator' ? 'ConfigMap' : 'Secret',
            generator: key,
            name: prefix + name + suffix,
            file: k.file,
          });
      }
    }
    for (const entry of [
      ...stringList(k.data.resources),
      ...stringList(k.data.bases),
      ...stringList(k.data.components),
    ]) {
      if (/^[a-z][a-z0-9+.-]*:\/\//i.test(entry) || /^(git@|github\.com\/)/.test(entry)) continue; // remote
      const p = joinRepo(dir, entry);
      if (p === undefined) continue;
      if (files[p] !== undefined) tree.objects.push(...objectsOfFile(files, p, chain, outer.length === 0));
      else if (allFiles.some((f) => inDir(p, f))) visit(p, chain, depth + 1);
    }
  };
  visit(appPath, [], 0);
  return tree;
}

function findSource(tree: Tree, ref: WriteBackChange['ref']): SourceObject | undefined {
  return tree.objects.find(
    (o) =>
      o.obj.kind === ref.kind &&
      groupOf(o.obj.apiVersion) === ref.group &&
      o.renderedName === ref.name &&
      (ref.namespace === null || o.renderedNamespace === undefined || o.renderedNamespace === ref.namespace),
  );
}

// ---------------------------------------------------------------- patches of the app

interface PatchHit {
  /** the file to edit: the patch file, or the kustomization for an inline patch */
  file: string;
  /** the value the patch sets now */
  current: unknown;
  /** edits the patch's own YAML text */
  apply: (patchText: string) => { text: string } | { error: string };
  /** for an inline patch: where its text lives in the kustomization */
  inline?: YamlPath;
}

function anchored(pattern: string, value: string): boolean {
  try {
    return new RegExp(`^(?:${pattern})$`).test(value);
  } catch {
    return pattern === value;
  }
}

function selectorMatches(selector: string, labels: unknown): boolean {
  const l = isObj(labels) ? labels : {};
  return selector.split(',').every((term) => {
    const m = /^\s*([^=!\s]+)\s*(==|=|!=)\s*(\S*)\s*$/.exec(term);
    if (!m) return false;
    const v = l[m[1]!];
    return m[2] === '!=' ? v !== m[3] : v === m[3];
  });
}

function targetMatches(t: Obj, src: SourceObject): boolean {
  const md = isObj(src.obj.metadata) ? src.obj.metadata : {};
  const checks: Array<[unknown, string]> = [
    [t.group, groupOf(src.obj.apiVersion)],
    [t.kind, String(src.obj.kind)],
    [t.namespace, src.incomingNamespace ?? ''],
  ];
  for (const [want, have] of checks) if (typeof want === 'string' && !anchored(want, have)) return false;
  if (typeof t.name === 'string' && !anchored(t.name, src.incomingName) && !anchored(t.name, src.renderedName))
    return false;
  if (typeof t.labelSelector === 'string' && !selectorMatches(t.labelSelector, md.labels)) return false;
  if (typeof t.annotationSelector === 'string' && !selectorMatches(t.annotationSelector, md.annotations)) return false;
  return true;
}

/** An app patch (strategic merge or JSON 6902) that already sets `segments` of `src`, with how to edit it. */
function findPatch(
  files: Record<string, string>,
  app: Kust,
  src: SourceObject,
  path: string,
  segments: Segment[],
  value: unknown,
): PatchHit | undefined {
  const jsonPointer = segments.every((s) => 'field' in s) ? fieldPathToPointer(path) : undefined;
  const candidates: Array<{ text: string; file: string; inline?: YamlPath; target?: Obj; json6902: boolean }> = [];
  const add = (entry: unknown, inlinePath: YamlPath, json6902: boolean) => {
    const target = isObj(entry) && isObj(entry.target) ? entry.target : undefined;
    const pathRef =
      typeof entry === 'string' && !entry.includes('\n') ? entry : isObj(entry) ? str(entry.path) : undefined;
    const inline =
      typeof entry === 'string' && entry.includes('\n') ? entry : isObj(entry) ? str(entry.patch) : undefined;
    if (pathRef !== undefined) {
      const file = joinRepo(app.dir, pathRef);
      if (file !== undefined && files[file] !== undefined)
        candidates.push({ text: files[file]!, file, ...(target ? { target } : {}), json6902 });
    } else if (inline !== undefined) {
      candidates.push({
        text: inline,
        file: app.file,
        inline: typeof entry === 'string' ? inlinePath : [...inlinePath, 'patch'],
        ...(target ? { target } : {}),
        json6902,
      });
    }
  };
  const list = (key: string): unknown[] => (Array.isArray(app.data[key]) ? (app.data[key] as unknown[]) : []);
  list('patchesStrategicMerge').forEach((e, i) => add(e, ['patchesStrategicMerge', i], false));
  list('patches').forEach((e, i) => add(e, ['patches', i], false));
  list('patchesJson6902').forEach((e, i) => add(e, ['patchesJson6902', i], true));

  for (const c of candidates) {
    const docs = readDocs(c.text);
    if (!docs) continue;
    for (const d of docs) {
      if (Array.isArray(d.value)) {
        // JSON 6902: an add / replace of exactly this pointer
        if (!c.target || !targetMatches(c.target, src) || jsonPointer === undefined) continue;
        const op = d.value.findIndex(
          (o) => isObj(o) && (o.op === 'replace' || o.op === 'add') && o.path === jsonPointer,
        );
        if (op < 0) continue;
        return hit(c, (d.value[op] as Obj).value, (text) =>
          editYaml(text, d.index, (doc) => setAt(doc, [op, 'value'], value)),
        );
      }
      if (!isObj(d.value) || c.json6902) continue;
      const md = isObj(d.value.metadata) ? d.value.metadata : {};
      const applies = c.target
        ? targetMatches(c.target, src)
        : d.value.kind === src.obj.kind &&
          (d.value.apiVersion === undefined || groupOf(d.value.apiVersion) === groupOf(src.obj.apiVersion)) &&
          (md.name === src.incomingName || md.name === src.renderedName);
      if (!applies) continue;
      const at = resolve(d.value, segments);
      if (!at) continue;
      return hit(c, at.value, (text) => editYaml(text, d.index, (doc) => setAt(doc, at.path, value)));
    }
  }
  return undefined;

  function hit(c: { file: string; inline?: YamlPath }, current: unknown, apply: PatchHit['apply']): PatchHit {
    return { file: c.file, current, apply, ...(c.inline ? { inline: c.inline } : {}) };
  }
}

// ---------------------------------------------------------------- images

interface ImageRef {
  name: string;
  tag?: string;
  digest?: string;
}

export function parseImage(image: string): ImageRef {
  let rest = image;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  const colon = rest.lastIndexOf(':');
  const tag = colon > rest.lastIndexOf('/') ? rest.slice(colon + 1) : undefined;
  const name = tag !== undefined ? rest.slice(0, colon) : rest;
  return { name, ...(tag !== undefined ? { tag } : {}), ...(digest !== undefined ? { digest } : {}) };
}

/** The image after kustomize `images:` entries (newName, newTag, digest). */
function applyImages(image: string, entries: unknown): string {
  if (!Array.isArray(entries)) return image;
  const img = parseImage(image);
  const e = entries.find((x) => isObj(x) && x.name === img.name);
  if (!isObj(e)) return image;
  const name = str(e.newName) ?? img.name;
  if (typeof e.digest === 'string') return `${name}@${e.digest}`;
  const tag = typeof e.newTag === 'string' || typeof e.newTag === 'number' ? String(e.newTag) : img.tag;
  return `${name}${tag !== undefined ? `:${tag}` : ''}${img.digest ? `@${img.digest}` : ''}`;
}

// ---------------------------------------------------------------- the plan

const REPLICA_KINDS = new Set(['Deployment', 'StatefulSet', 'ReplicaSet', 'ReplicationController']);
const WELL_KNOWN_VERSIONS: Record<string, string> = {
  '': 'v1',
  apps: 'apps/v1',
  batch: 'batch/v1',
  autoscaling: 'autoscaling/v2',
  policy: 'policy/v1',
  'networking.k8s.io': 'networking.k8s.io/v1',
  'rbac.authorization.k8s.io': 'rbac.authorization.k8s.io/v1',
};
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

interface Working {
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

/** The image entry edits that make kustomize render `live` for an entry named `name`. */
function imageEntryEdits(doc: Document.Parsed, at: YamlPath, entry: Obj, live: ImageRef): DocEdit {
  const set = (k: string, v: string) => {
    const node = doc.getIn([...at, k], true);
    if (isScalar(node)) node.value = v;
    else doc.setIn([...at, k], v);
  };
  if (live.name !== entry.name) set('newName', live.name);
  else if (entry.newName !== undefined) doc.deleteIn([...at, 'newName']);
  if (live.digest !== undefined) {
    set('digest', live.digest);
    if (entry.newTag !== undefined) doc.deleteIn([...at, 'newTag']);
  } else {
    if (live.tag !== undefined) set('newTag', live.tag);
    else if (entry.newTag !== undefined) doc.deleteIn([...at, 'newTag']);
    if (entry.digest !== undefined) doc.deleteIn([...at, 'digest']);
  }
  return { structural: true };
}

function newImageEntry(name: string, live: ImageRef): Obj {
  const e: Obj = { name };
  if (live.name !== name) e.newName = live.name;
  if (live.digest !== undefined) e.digest = live.digest;
  else if (live.tag !== undefined) e.newTag = live.tag;
  return e;
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

type Outcome = { file: string; how: PlacementHow } | { reason: string };

function placeOne(w: Working, appPath: string, change: WriteBackChange): Outcome & { src?: SourceObject } {
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

  // spec.replicas of a workload: the replicas transformer runs last and wins
  if (app && change.path === 'spec.replicas' && REPLICA_KINDS.has(String(src.obj.kind)) && typeof live === 'number') {
    const entries = Array.isArray(app.data.replicas) ? app.data.replicas : [];
    const i = entries.findIndex((e) => isObj(e) && (e.name === src.incomingName || e.name === src.renderedName));
    if (i >= 0) {
      const err = editKust(w, app, (doc) => setAt(doc, ['replicas', i, 'count'], live));
      return err ? { reason: err, src } : { file: app.file, how: 'kustomize-replicas', src };
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
  let incomingImage: string | undefined;
  const patch = app ? findPatch(w.files, app, src, change.path, segments, live) : undefined;
  if (app && isImage) {
    // the image as the overlay's images transformer sees it: the overlay's patch, else the base's output
    const sourceImage = str(resolve(src.obj, segments)?.value);
    if (sourceImage !== undefined) {
      incomingImage = sourceImage;
      for (const k of [...src.chain.slice(1)].reverse()) incomingImage = applyImages(incomingImage, k.data.images);
    }
    const seen = str(patch?.current) ?? incomingImage;
    const entries = Array.isArray(app.data.images) ? app.data.images : [];
    const i = seen === undefined ? -1 : entries.findIndex((e) => isObj(e) && e.name === parseImage(seen).name);
    if (i >= 0) {
      const err = editKust(w, app, (doc) => imageEntryEdits(doc, ['images', i], entries[i] as Obj, parseImage(live)));
      return err ? { reason: err, src } : { file: app.file, how: 'kustomize-images', src };
    }
  }

  // an app patch that sets the field
  if (patch) {
    const err = applyPatch(w, patch);
    return err ? { reason: err, src } : { file: patch.file, how: 'patch', src };
  }

  // the app's own manifest
  if (src.local) {
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
    return err ? { reason: err, src } : { file: app.file, how: 'kustomize-replicas', src };
  }
  if (isImage && incomingImage !== undefined) {
    const entry = newImageEntry(parseImage(incomingImage).name, parseImage(live as string));
    const err = editKust(w, app, (doc, data) => appendTo(doc, data, 'images', entry));
    return err ? { reason: err, src } : { file: app.file, how: 'kustomize-images', src };
  }

  // a new strategic-merge patch of the overlay
  if (segments.some((s) => 'keyed' in s) && !BUILTIN_GROUPS.has(groupOf(src.obj.apiVersion)))
    return {
      reason: `a strategic-merge patch cannot address a list item of ${String(src.obj.kind)} (a custom resource's lists are replaced whole)`,
      src,
    };
  const target = newPatchFile(w, app.dir, src);
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
  const rel = relTo(app.dir, target.file);
  const listed = [
    ...(Array.isArray(app.data.patches) ? app.data.patches : []),
    ...stringList(app.data.patchesStrategicMerge),
  ].some((e) => (isObj(e) ? e.path === rel : e === rel));
  if (!listed) {
    const err = editKust(w, app, (doc, data) => appendTo(doc, data, 'patches', { path: rel }));
    if (err) return { reason: err, src };
  }
  return { file: target.file, how: 'new-patch', src };
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
    } else placements.push({ changeId: change.id, placed: true, file: out.file, how: out.how });
  }
  const files: Record<string, string> = {};
  for (const f of [...w.changed].sort()) if (w.files[f] !== input.files[f]) files[f] = w.files[f]!;
  return { files, placements };
}
