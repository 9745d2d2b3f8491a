// The kustomize tree of an app: its kustomization and the chain of bases and components, every object
// they declare (with its name and namespace as each level sees it), generators and Helm charts met on the way.
import type { Obj } from './object-meta.ts';
import { joinRepoPath } from './repo-path.ts';
import type { WriteBackChange } from './writeback-types.ts';
import { isObj, readDocs, str } from './writeback-yaml.ts';

/** The API group of an apiVersion (`apps/v1` → `apps`, `v1` → the core group ``). */
export const groupOf = (apiVersion: unknown): string => {
  const s = str(apiVersion) ?? '';
  const i = s.indexOf('/');
  return i < 0 ? '' : s.slice(0, i);
};

/** Whether the repo path `file` lies inside the repo directory `dir` (both normalised; `` is the root). */
export const inDir = (dir: string, file: string): boolean => dir === '' || file.startsWith(`${dir}/`);
export const relTo = (dir: string, file: string): string => (dir === '' ? file : file.slice(dir.length + 1));
/** The repo path `file` as seen from the repo directory `dir`: `overlays/prod`, `overlays/shared/cm.yaml` → `../shared/cm.yaml`. */
export function relFrom(dir: string, file: string): string {
  const from = dir === '' ? [] : dir.split('/');
  const to = file.split('/');
  let common = 0;
  while (common < from.length && common < to.length - 1 && from[common] === to[common]) common++;
  return [...from.slice(common).map(() => '..'), ...to.slice(common)].join('/');
}
const isYamlName = (p: string): boolean => /\.(ya?ml|json)$/i.test(p);
const KUSTOMIZATION_NAMES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];

export interface Kust {
  dir: string;
  file: string;
  data: Obj;
}

export interface SourceObject {
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

export const stringList = (v: unknown): string[] =>
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

export function buildTree(files: Record<string, string>, appPath: string): Tree {
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
      const p = joinRepoPath(dir, entry);
      if (p === undefined) continue;
      if (files[p] !== undefined) tree.objects.push(...objectsOfFile(files, p, chain, outer.length === 0));
      else if (allFiles.some((f) => inDir(p, f))) visit(p, chain, depth + 1);
    }
  };
  visit(appPath, [], 0);
  return tree;
}

export function findSource(tree: Tree, ref: WriteBackChange['ref']): SourceObject | undefined {
  return tree.objects.find(
    (o) =>
      o.obj.kind === ref.kind &&
      groupOf(o.obj.apiVersion) === ref.group &&
      o.renderedName === ref.name &&
      (ref.namespace === null || o.renderedNamespace === undefined || o.renderedNamespace === ref.namespace),
  );
}
