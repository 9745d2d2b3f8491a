// Patches of the app: an app patch (strategic merge or JSON 6902, in a file or inline in the kustomization)
// that already sets the changed field of an object, with how to edit its value there.
import { fieldPathToPointer } from './managed-fields.ts';
import type { Obj } from './object-meta.ts';
import { joinRepoPath } from './repo-path.ts';
import { resolve, type Segment } from './writeback-field-paths.ts';
import { groupOf, type Kust, type SourceObject } from './writeback-kustomize.ts';
import { editYaml, isObj, readDocs, setAt, str, type YamlPath } from './writeback-yaml.ts';

export interface PatchHit {
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
export function findPatch(
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
      const file = joinRepoPath(app.dir, pathRef);
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
