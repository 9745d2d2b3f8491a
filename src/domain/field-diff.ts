/**
 * Field-level diff of one object: what Git wants (the server-side dry-run
 * result of applying the rendered object as the controller's field manager),
 * what is live, and who owns each live field. Paths are built with
 * `joinFieldPath`, the format of `ownersByPath`, so every change names its
 * managers and Argo CD jsonPointers match them.
 *
 * Two modes: `server-dry-run` compares the apiserver's prediction with live;
 * `normalized` (the dry-run was forbidden or failed) compares only the fields
 * Git declares, merge keys with their defaults filled in and quantities by
 * value, and calls every live field Git does not set defaulted (never pending:
 * without the apiserver a default cannot be told from a value Git removed).
 *
 * Classes (DESIGN.md): drift (a person's tool changed a field Git owns),
 * pending (Git changed, not applied yet), defaulted (filled by the apiserver,
 * not written in Git), ignored (an ignore rule covers it), conflict (another
 * controller owns a field Git also sets: HPA on spec.replicas, a cloud
 * controller on an annotation), delivery (a progressive-delivery controller's
 * own write, by delivery-writes.ts's rules: Flagger scaling its target to 0,
 * Argo Rollouts pinning a Service to a ReplicaSet — neither drift nor a
 * conflict to fix; what such a manager owns beyond its rules stays a conflict).
 */
import { isQuantityPath, mergeKeyValue, sameQuantity } from './defaults.ts';
import { groupKindOf, isDeliveryWrite } from './delivery-writes.ts';
import { isInteractiveManager } from './field-managers.ts';
import {
  fieldPath,
  fieldSegmentName,
  formatFieldSegment,
  formatKeyFieldsSegment,
  joinFieldPath,
  keyedSegmentFields,
  ownersByPath,
  ownersOfPath,
  splitFieldPath,
  type FieldOwner,
} from './managed-fields.ts';

export const CHANGE_CLASSES = ['drift', 'pending', 'defaulted', 'ignored', 'conflict', 'delivery'] as const;
export type ChangeClass = (typeof CHANGE_CLASSES)[number];

/** How the desired side was obtained: the apiserver's dry-run, or Git as rendered (the fallback). */
export const DIFF_MODES = ['server-dry-run', 'normalized'] as const;
export type DiffMode = (typeof DIFF_MODES)[number];

export interface FieldChange {
  path: string;
  /** the raw value in the rendered Git object (undefined: Git does not set it) */
  desired?: unknown;
  /** the value the apiserver predicts after applying Git (dry-run; in normalized mode Git's value or the default) */
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

/**
 * The segment of item `index` of the list named `list` whose merge keys are
 * `keys`: its key fields with their defaults filled in
 * (`[containerPort=8080,protocol=TCP]` for Git's `{containerPort: 8080}`), or
 * `[<index>]` for an unkeyed item.
 */
function itemSegment(list: string, keys: string[] | undefined, item: unknown, index: number): string {
  if (keys && isObj(item)) {
    const fields = keys.map((k) => [k, mergeKeyValue(list, item, k)] as const).filter(([, v]) => v !== undefined);
    const segment = formatKeyFieldsSegment(fields);
    if (segment) return segment;
  }
  return `[${index}]`;
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
        walk(v[k], fieldPath(path, k), k);
      }
      return;
    }
    if (Array.isArray(v)) {
      const keys = listKeys(field, v);
      if (!keys) {
        out.set(path, v);
        return;
      }
      v.forEach((item: unknown, i) => walk(item, joinFieldPath(path, itemSegment(field, keys, item, i)), ''));
      return;
    }
    out.set(path, v);
  };
  walk(obj, '', '');
  return out;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The diff paths an RFC 6901 pointer (an Argo CD `jsonPointers` entry) names:
 * resolved in each of `objects`, so that a list index names the keyed item
 * (`/spec/template/spec/containers/0/image` →
 * `spec.template.spec.containers[name=render].image`), plus the fields-only
 * reading (`/metadata/annotations/a.b~1c` → `metadata.annotations["a.b/c"]`).
 */
export function pointerPaths(pointer: string, objects: readonly unknown[] = []): string[] {
  if (!pointer.startsWith('/')) return [];
  const tokens = pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
  const out = new Set<string>([
    tokens.reduce((p, t) => joinFieldPath(p, /^\d+$/.test(t) ? `[${t}]` : formatFieldSegment(t)), ''),
  ]);
  for (const obj of objects) {
    let cur: unknown = obj;
    let path: string | undefined = '';
    let field = '';
    for (const t of tokens) {
      if (Array.isArray(cur)) {
        const i = /^\d+$/.test(t) ? Number(t) : -1;
        if (i < 0 || i >= cur.length) {
          path = undefined;
          break;
        }
        const item: unknown = cur[i];
        path = joinFieldPath(path, itemSegment(field, listKeys(field, cur), item, i));
        cur = item;
        field = '';
      } else {
        path = fieldPath(path, t);
        cur = isObj(cur) ? cur[t] : undefined;
        field = t;
      }
    }
    if (path) out.add(path);
  }
  return [...out];
}

/** A leaf that is one of its keyed list item's own keys, e.g. `containers[name=render].name`. */
export function isKeyLeaf(path: string): boolean {
  const segments = splitFieldPath(path);
  const leaf = segments.at(-1);
  const item = segments.at(-2);
  const name = leaf === undefined ? undefined : fieldSegmentName(leaf);
  if (name === undefined || item === undefined) return false;
  return keyedSegmentFields(item)?.includes(name) ?? false;
}

/** Whether Git's value `d` of a field it declares is what live `l` holds, as the apiserver stores it. */
function sameAsDeclared(path: string, d: unknown, l: unknown): boolean {
  if (same(d, l)) return true;
  // null, {} and [] set nothing (the apiserver drops them or fills them in)
  const empty = d === null || (Array.isArray(d) && d.length === 0) || (isObj(d) && Object.keys(d).length === 0);
  if (empty && (l === undefined || l === null)) return true;
  return isQuantityPath(path) && sameQuantity(d, l);
}

export interface FieldDiffInput {
  /** the rendered Git object */
  desired: unknown;
  /** the server-side dry-run result (mode `server-dry-run`); not read in mode `normalized` */
  predicted: unknown;
  live: unknown;
  /** the GitOps controller's field managers (`controllerManagersOf` in field-managers.ts) */
  controllerManagers: readonly string[];
  ignore?: IgnoreRule;
  /** `normalized` when the dry-run is unavailable: compare the fields Git declares, the rest is defaulted */
  mode: DiffMode;
}

export function fieldDiff(input: FieldDiffInput): FieldChange[] {
  const normalized = input.mode === 'normalized';
  const desired = flattenObject(input.desired);
  const predicted = normalized ? desired : flattenObject(input.predicted);
  const live = flattenObject(input.live);
  const owners = ownersByPath(input.live);
  const ignorePaths = (input.ignore?.jsonPointers ?? []).flatMap((ptr) =>
    pointerPaths(ptr, normalized ? [input.desired, input.live] : [input.desired, input.predicted, input.live]),
  );
  const ignoreManagers = new Set(input.ignore?.managedFieldsManagers ?? []);
  // the delivery rules are per kind: the live object's (the desired one's when live has no apiVersion / kind)
  const target = groupKindOf(input.live) ?? groupKindOf(input.desired);
  const isController = (m: string) => input.controllerManagers.includes(m);
  // a leaf may be owned through an ancestor that owns the node as a whole ("."), nearest first
  const ownersOf = (path: string): FieldOwner[] => ownersOfPath(owners, path);
  const isIgnored = (path: string, o: FieldOwner[]) =>
    ignorePaths.some((pre) => path === pre || path.startsWith(`${pre}.`) || path.startsWith(`${pre}[`)) ||
    (o.length > 0 && o.every((x) => ignoreManagers.has(x.manager)));
  /** the class of a field whose desired value differs from live, by who owns it live */
  const classOf = (path: string, o: FieldOwner[]): ChangeClass => {
    if (isIgnored(path, o)) return 'ignored';
    const others = o.filter((x) => !isController(x.manager));
    if (others.some((x) => isInteractiveManager(x.manager))) return 'drift';
    if (others.length === 0) return 'pending';
    // Argo Rollouts / Flagger doing what their source does (Flagger scaling its target to 0) is theirs, never
    // drift; anything else they own (or a field shared with a third manager) stays a conflict
    return others.every((x) => isDeliveryWrite(x.manager, target, path)) ? 'delivery' : 'conflict';
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
    if (normalized) {
      if (d !== undefined) {
        if (!sameAsDeclared(path, d, l)) changes.push({ ...base, class: classOf(path, o) });
        continue;
      }
      // a field Git does not set: the apiserver's default, a person's addition, or another manager's field
      if (l === null || desired.size === 0) continue;
      if (o.some((x) => isInteractiveManager(x.manager)))
        changes.push({ ...base, class: isIgnored(path, o) ? 'ignored' : 'drift' });
      else if (o.every((x) => isController(x.manager))) changes.push({ ...base, predicted: l, class: 'defaulted' });
      continue;
    }
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
      changes.push({ ...rest, class: isIgnored(path, o) ? 'ignored' : 'drift' });
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
    changes.push({ ...base, class: classOf(path, o) });
  }
  return changes;
}
