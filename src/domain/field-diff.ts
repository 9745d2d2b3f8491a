/**
 * Field-level diff of one object: what Git wants (the server-side dry-run
 * result of applying the rendered object as the controller's field manager),
 * what is live, and who owns each live field. Paths use the same format as
 * `ownersByPath` so every change can name its managers.
 *
 * Classes (DESIGN.md): drift (a person's tool changed a field Git owns),
 * pending (Git changed, not applied yet), defaulted (filled by the apiserver,
 * not written in Git), ignored (an ignore rule covers it), conflict (another
 * controller owns a field Git also sets: HPA on spec.replicas, a cloud
 * controller on an annotation).
 */
import { formatFieldSegment, formatKeyValue, ownersByPath, type FieldOwner } from './managed-fields.ts';

export const CHANGE_CLASSES = ['drift', 'pending', 'defaulted', 'ignored', 'conflict'] as const;
export type ChangeClass = (typeof CHANGE_CLASSES)[number];

export interface FieldChange {
  path: string;
  /** the raw value in the rendered Git object (undefined: Git does not set it) */
  desired?: unknown;
  /** the value the apiserver predicts after applying Git (dry-run) */
  predicted?: unknown;
  live?: unknown;
  owners: FieldOwner[];
  class: ChangeClass;
}

export interface IgnoreRule {
  /** RFC 6901 pointers, e.g. /spec/replicas (Argo CD jsonPointers) */
  jsonPointers?: string[];
  /** managers whose fields are ignored (Argo CD managedFieldsManagers) */
  managedFieldsManagers?: string[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Merge keys of well-known associative lists (as the Kubernetes OpenAPI declares them). */
function listKeys(field: string, items: unknown[]): string[] | undefined {
  if (items.length === 0 || !items.every(isObj)) return undefined;
  const all = (k: string) => items.every((i) => (i as Obj)[k] !== undefined);
  if (field === 'ports') {
    if (all('containerPort')) return ['containerPort', 'protocol'];
    if (all('port')) return ['port', 'protocol'];
  }
  if (field === 'volumeMounts' && all('mountPath')) return ['mountPath'];
  if (field === 'conditions' && all('type')) return ['type'];
  if (field === 'hostAliases' && all('ip')) return ['ip'];
  if (field === 'topologySpreadConstraints' && all('topologyKey')) return ['topologyKey', 'whenUnsatisfiable'];
  if (all('name')) return ['name'];
  return undefined;
}

const SKIP_ROOT = new Set(['status']);
const SKIP_META = new Set([
  'managedFields',
  'resourceVersion',
  'uid',
  'generation',
  'creationTimestamp',
  'selfLink',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
]);

/** Leaves of an object by path; keyed lists by their merge keys, other lists as one (atomic) value. */
export function flattenObject(obj: unknown): Map<string, unknown> {
  const out = new Map<string, unknown>();
  const walk = (v: unknown, path: string, field: string) => {
    if (isObj(v)) {
      const keys = Object.keys(v);
      if (keys.length === 0 && path) out.set(path, {});
      for (const k of keys) {
        if (!path && SKIP_ROOT.has(k)) continue;
        if (path === 'metadata' && SKIP_META.has(k)) continue;
        walk(v[k], path ? `${path}.${formatFieldSegment(k)}` : formatFieldSegment(k), k);
      }
      return;
    }
    if (Array.isArray(v)) {
      const keys = listKeys(field, v);
      if (!keys) {
        out.set(path, v);
        return;
      }
      for (const item of v as Obj[]) {
        const seg = keys
          .filter((k) => item[k] !== undefined)
          .map((k) => `${k}=${formatKeyValue(item[k])}`)
          .join(',');
        walk(item, `${path}[${seg}]`, '');
      }
      return;
    }
    out.set(path, v);
  };
  walk(obj, '', '');
  return out;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Interactive tools: a field they own against Git is drift; anything else owning it is a controller conflict. */
export function isInteractiveManager(m: string): boolean {
  return /^kubectl/.test(m) || /^(k9s|Mozilla|lens|headlamp|rancher)/i.test(m);
}

function pointerToPathPrefix(ptr: string): string {
  return ptr
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? `[${s}]` : formatFieldSegment(s)))
    .join('.')
    .replace(/\.\[/g, '[');
}

/** A leaf that is one of its keyed list item's own keys, e.g. `containers[name=render].name`. */
export function isKeyLeaf(path: string): boolean {
  const m = /\[([^\]]*)\]\.([A-Za-z_][A-Za-z0-9_]*)$/.exec(path);
  if (!m || !m[1] || m[1].startsWith('=')) return false;
  return m[1].split(',').some((kv) => kv.split('=')[0] === m[2]);
}

export interface FieldDiffInput {
  desired: unknown;
  predicted: unknown;
  live: unknown;
  /** the GitOps controller's field managers, e.g. ['kustomize-controller'] or ['argocd-controller'] */
  controllerManagers: string[];
  ignore?: IgnoreRule;
}

export function fieldDiff(input: FieldDiffInput): FieldChange[] {
  const desired = flattenObject(input.desired);
  const predicted = flattenObject(input.predicted);
  const live = flattenObject(input.live);
  const owners = ownersByPath(input.live);
  const ignorePrefixes = (input.ignore?.jsonPointers ?? []).map(pointerToPathPrefix);
  const ignoreManagers = new Set(input.ignore?.managedFieldsManagers ?? []);
  const isController = (m: string) => input.controllerManagers.includes(m);
  const ownersOf = (path: string): FieldOwner[] => {
    // a leaf may be owned through an ancestor that owns the node as a whole (".")
    let p = path;
    for (;;) {
      const o = owners[p];
      if (o && o.length) return o;
      const cut = Math.max(p.lastIndexOf('.'), p.lastIndexOf('['));
      if (cut <= 0) return [];
      p = p.slice(0, cut);
    }
  };
  const changes: FieldChange[] = [];
  const paths = new Set([...predicted.keys(), ...live.keys()]);
  for (const path of [...paths].sort()) {
    if (isKeyLeaf(path)) continue; // `env[name=X].name` repeats the item's key
    const p = predicted.get(path);
    const l = live.get(path);
    const d = desired.get(path);
    const o = ownersOf(path);
    const base = {
      path,
      ...(d !== undefined ? { desired: d } : {}),
      ...(p !== undefined ? { predicted: p } : {}),
      ...(l !== undefined ? { live: l } : {}),
      owners: o,
    };
    if (
      same(p, l) &&
      l !== undefined &&
      d === undefined &&
      desired.size > 0 &&
      o.some((x) => isInteractiveManager(x.manager))
    ) {
      // added by hand and absent from Git: the dry-run keeps another manager's field, but it is not Git's
      // (Flux hands kubectl's fields to itself and removes them on its next apply)
      const { predicted: _p, ...rest } = base;
      changes.push({ ...rest, class: 'drift' });
      continue;
    }
    if (same(p, l)) {
      // equal after the apiserver's defaulting: report only what Git did not write itself
      if (p !== undefined && d === undefined && desired.size > 0 && o.every((x) => isController(x.manager)))
        changes.push({ ...base, class: 'defaulted' });
      continue;
    }
    // a field Git never declared: another controller's business, unless a person added it by hand (Flux
    // hands kubectl's fields to itself and removes them on the next apply: that is drift)
    if (p === undefined && !o.some((x) => isController(x.manager) || isInteractiveManager(x.manager))) continue;
    let cls: ChangeClass;
    if (ignorePrefixes.some((pre) => path === pre || path.startsWith(`${pre}.`) || path.startsWith(`${pre}[`)))
      cls = 'ignored';
    else if (o.length > 0 && o.every((x) => ignoreManagers.has(x.manager))) cls = 'ignored';
    else {
      const others = o.filter((x) => !isController(x.manager));
      if (others.some((x) => isInteractiveManager(x.manager))) cls = 'drift';
      else if (others.length > 0) cls = 'conflict';
      else cls = 'pending';
    }
    changes.push({ ...base, class: cls });
  }
  return changes;
}
