// Patches of the app: the app patches (strategic merge or JSON 6902, in a file or inline in the kustomization)
// that already set the changed field of an object, in the order kustomize applies them, with how to edit
// the value in each.
import { fieldPathToPointer } from './managed-fields.ts';
import type { Obj } from './object-meta.ts';
import { joinRepoPath } from './repo-path.ts';
import { resolve, type Segment } from './writeback-field-paths.ts';
import { groupOf, type Kust, type SourceObject } from './writeback-kustomize.ts';
import { editYaml, isObj, readDocs, setAt, str, type YamlPath } from './writeback-yaml.ts';

/** The kustomization lists of patches, in the order kustomize applies them (patchesJson6902 runs last). */
export const PATCH_LISTS = ['patchesStrategicMerge', 'patches', 'patchesJson6902'] as const;
export type PatchList = (typeof PATCH_LISTS)[number];

export interface PatchHit {
  /** the file to edit: the patch file, or the kustomization for an inline patch */
  file: string;
  /** where the kustomization lists the patch: kustomize applies the lists in PATCH_LISTS order, each in order */
  list: PatchList;
  index: number;
  /** the entry's target (a JSON 6902 patch has one) */
  target?: Obj;
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

/** Whether patch `a` is applied after `b` (a later list, or later in the same list). */
export const appliedAfter = (a: { list: PatchList; index: number }, b: { list: PatchList; index: number }): boolean =>
  PATCH_LISTS.indexOf(a.list) > PATCH_LISTS.indexOf(b.list) || (a.list === b.list && a.index > b.index);

/**
 * The app patches (strategic merge or JSON 6902) that set `segments` of `src`, in the order kustomize applies
 * them (the last one's value wins), with how to edit each.
 */
export function findPatches(
  files: Record<string, string>,
  app: Kust,
  src: SourceObject,
  path: string,
  segments: Segment[],
  value: unknown,
): PatchHit[] {
  const jsonPointer = segments.every((s) => 'field' in s) ? fieldPathToPointer(path) : undefined;
  interface Candidate {
    text: string;
    file: string;
    list: PatchList;
    index: number;
    inline?: YamlPath;
    target?: Obj;
    json6902: boolean;
  }
  const candidates: Candidate[] = [];
  const add = (entry: unknown, list: PatchList, index: number) => {
    const inlinePath: YamlPath = [list, index];
    const json6902 = list === 'patchesJson6902';
    const target = isObj(entry) && isObj(entry.target) ? entry.target : undefined;
    const pathRef =
      typeof entry === 'string' && !entry.includes('\n') ? entry : isObj(entry) ? str(entry.path) : undefined;
    const inline =
      typeof entry === 'string' && entry.includes('\n') ? entry : isObj(entry) ? str(entry.patch) : undefined;
    if (pathRef !== undefined) {
      const file = joinRepoPath(app.dir, pathRef);
      if (file !== undefined && files[file] !== undefined)
        candidates.push({ text: files[file]!, file, list, index, ...(target ? { target } : {}), json6902 });
    } else if (inline !== undefined) {
      candidates.push({
        text: inline,
        file: app.file,
        list,
        index,
        inline: typeof entry === 'string' ? inlinePath : [...inlinePath, 'patch'],
        ...(target ? { target } : {}),
        json6902,
      });
    }
  };
  const list = (key: string): unknown[] => (Array.isArray(app.data[key]) ? (app.data[key] as unknown[]) : []);
  for (const key of PATCH_LISTS) list(key).forEach((e, i) => add(e, key, i));

  const hits: PatchHit[] = [];
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
        hits.push(
          hit(c, (d.value[op] as Obj).value, (text) =>
            editYaml(text, d.index, (doc) => setAt(doc, [op, 'value'], value)),
          ),
        );
        continue;
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
      hits.push(hit(c, at.value, (text) => editYaml(text, d.index, (doc) => setAt(doc, at.path, value))));
    }
  }
  return hits;

  function hit(c: Candidate, current: unknown, apply: PatchHit['apply']): PatchHit {
    return {
      file: c.file,
      list: c.list,
      index: c.index,
      current,
      apply,
      ...(c.target ? { target: c.target } : {}),
      ...(c.inline ? { inline: c.inline } : {}),
    };
  }
}
