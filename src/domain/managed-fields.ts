/**
 * Decoding of Kubernetes Server-Side-Apply ownership: `metadata.managedFields[]`
 * entries whose `fieldsType` is `FieldsV1`. A FieldsV1 document is a trie of
 * path elements:
 *
 * - `f:<name>`  a field of a map / struct
 * - `k:<json>`  an item of an associative (keyed) list, by the JSON object of its key fields
 * - `v:<json>`  an item of a set (list of scalars), by its JSON value
 * - `i:<n>`     a list item by index (rare; decoded as `[n]`)
 * - `.`         the node itself: the manager owns the parent path as a whole
 *
 * {@link ownersByPath} flattens every entry into human-readable paths such as
 * `spec.template.spec.containers[name=render].env[name=RENDER_QUALITY].value`,
 * `metadata.labels["app.kubernetes.io/name"]` or
 * `metadata.finalizers[=example.com/finalizer]`, each mapped to the managers
 * that own it, in managedFields order. Pure: never throws on malformed input.
 */

export type FieldOperation = 'Apply' | 'Update';

export interface FieldOwner {
  manager: string;
  operation: FieldOperation;
  time?: string;
  subresource?: string;
}

export type OwnersByPath = Record<string, FieldOwner[]>;

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Raw key / set values are JSON-quoted when they contain one of these (or are empty, or start with a quote). */
const NEEDS_QUOTES = /[,\]=\s]/;

// ---------------------------------------------------------------- segments

/**
 * A field name as a path segment: the plain name when it is an identifier,
 * otherwise `["<name>"]` (JSON string in brackets).
 */
export function formatFieldSegment(name: string): string {
  return IDENTIFIER.test(name) ? name : `[${JSON.stringify(name)}]`;
}

/**
 * A key or set value as written inside brackets: strings raw unless they are
 * empty, start with `"`, or contain `,` `]` `=` or whitespace (then JSON-quoted);
 * numbers, booleans and null as JSON; objects and arrays as compact JSON.
 */
export function formatKeyValue(value: unknown): string {
  if (typeof value === 'string') {
    return value === '' || value.startsWith('"') || NEEDS_QUOTES.test(value) ? JSON.stringify(value) : value;
  }
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/**
 * The bracket segment for a `k:` element, given the text after `k:`:
 * `{"containerPort":8080,"protocol":"TCP"}` → `[containerPort=8080,protocol=TCP]`,
 * keys in the order they appear in the JSON. Text that is not a non-empty JSON
 * object is kept raw: `[<text>]`.
 */
export function formatKeyedSegment(keyJson: string): string {
  const parsed = parseJson(keyJson);
  if (!parsed.ok || !isObj(parsed.value)) return `[${keyJson}]`;
  const parts: string[] = [];
  for (const [k, v] of Object.entries(parsed.value)) parts.push(`${formatKeyValue(k)}=${formatKeyValue(v)}`);
  return parts.length > 0 ? `[${parts.join(',')}]` : `[${keyJson}]`;
}

/**
 * The bracket segment for a `v:` element, given the text after `v:`:
 * `"example.com/finalizer"` → `[=example.com/finalizer]`. Invalid JSON is kept
 * raw: `[=<text>]`.
 */
export function formatSetSegment(valueJson: string): string {
  const parsed = parseJson(valueJson);
  return `[=${parsed.ok ? formatKeyValue(parsed.value) : valueJson}]`;
}

/**
 * The path of the child reached from `parent` (`''` for the root) through one
 * FieldsV1 key, or `undefined` for `.` (the node itself). Identifier fields
 * are dot-joined; every other segment is appended as a bracket. A key with an
 * unknown prefix is treated as a field named by the whole key.
 */
export function childPath(parent: string, key: string): string | undefined {
  if (key === '.') return undefined;
  const prefix = key.slice(0, 2);
  const rest = key.slice(2);
  switch (prefix) {
    case 'f:':
      return joinField(parent, rest);
    case 'k:':
      return parent + formatKeyedSegment(rest);
    case 'v:':
      return parent + formatSetSegment(rest);
    case 'i:':
      return parent + `[${rest}]`;
    default:
      return joinField(parent, key);
  }
}

function joinField(parent: string, name: string): string {
  if (!IDENTIFIER.test(name)) return parent + formatFieldSegment(name);
  return parent === '' ? name : `${parent}.${name}`;
}

// ---------------------------------------------------------------- entries

interface Entry {
  owner: FieldOwner;
  fields: Obj;
}

function managedFieldsOf(obj: unknown): unknown[] {
  if (!isObj(obj)) return [];
  const meta = obj.metadata;
  if (!isObj(meta)) return [];
  const mf = meta.managedFields;
  return Array.isArray(mf) ? mf : [];
}

function toEntry(raw: unknown): Entry | undefined {
  if (!isObj(raw)) return undefined;
  const { manager, operation, time, subresource, fieldsType, fieldsV1 } = raw;
  if (typeof manager !== 'string' || manager === '') return undefined;
  if (operation !== 'Apply' && operation !== 'Update') return undefined;
  if (fieldsType !== 'FieldsV1' || !isObj(fieldsV1)) return undefined;
  const owner: FieldOwner = { manager, operation };
  if (typeof time === 'string') owner.time = time;
  if (typeof subresource === 'string' && subresource !== '') owner.subresource = subresource;
  return { owner, fields: fieldsV1 };
}

function entriesOf(obj: unknown): Entry[] {
  const out: Entry[] = [];
  try {
    const raws = managedFieldsOf(obj);
    for (let i = 0; i < raws.length; i++) {
      try {
        const e = toEntry(raws[i]);
        if (e) out.push(e);
      } catch {
        // a hostile getter or proxy in this entry: skip it
      }
    }
  } catch {
    // a hostile getter or proxy above the entries: keep what was read
  }
  return out;
}

/**
 * The suffix a FieldsV1 key other than `.` appends to its parent's path:
 * `.name` for an identifier field (the dot is dropped at the root), a bracket
 * otherwise. Memoised per decode, since keys such as `f:name` or
 * `k:{"name":"render"}` repeat across nodes and entries.
 */
function suffixOf(key: string, cache: Map<string, string>): string {
  let suffix = cache.get(key);
  if (suffix === undefined) {
    const p = childPath('', key)!;
    suffix = p.startsWith('[') ? p : `.${p}`;
    cache.set(key, suffix);
  }
  return suffix;
}

/**
 * The paths one FieldsV1 trie owns, in pre-order (a node's own path before its
 * children's). Iterative, so deep garbage cannot overflow the call stack; a
 * node that is its own ancestor (a cycle, only possible in hand-built input) is
 * skipped. Each path string is built once, from its parent's.
 */
function ownedPaths(fields: Obj, cache: Map<string, string>): string[] {
  const out: string[] = [];
  // parallel stacks of pending nodes; `chain` / `ancestors` hold the current root-to-node chain
  const paths: string[] = [''];
  const nodes: Obj[] = [fields];
  const depths: number[] = [0];
  const chain: Obj[] = [];
  const ancestors = new Set<Obj>();
  while (nodes.length > 0) {
    const path = paths.pop()!;
    const node = nodes.pop()!;
    const depth = depths.pop()!;
    while (chain.length > depth) ancestors.delete(chain.pop()!);
    if (ancestors.has(node)) continue;
    chain.push(node);
    ancestors.add(node);
    const keys = Object.keys(node);
    if (depth > 0 && (keys.length === 0 || Object.hasOwn(node, '.'))) out.push(path);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      const child = node[key];
      if (key === '.' || !isObj(child)) continue;
      const suffix = suffixOf(key, cache);
      paths.push(depth > 0 ? path + suffix : suffix.startsWith('.') ? suffix.slice(1) : suffix);
      nodes.push(child);
      depths.push(depth + 1);
    }
  }
  return out;
}

// ---------------------------------------------------------------- API

/**
 * Every owned path of `obj` (a Kubernetes object with `metadata.managedFields`)
 * mapped to its owners in managedFields order. Leaves (`{}`) and nodes that
 * contain `.` yield a path; intermediate nodes do not. Entries with a missing
 * manager, an operation other than Apply / Update, a fieldsType other than
 * FieldsV1 or a non-object fieldsV1 are skipped. Never throws.
 */
export function ownersByPath(obj: unknown): OwnersByPath {
  const entries = entriesOf(obj);
  // The result doubles as the lookup table (one hash per path instead of a Map's plus the object's).
  // Built without a prototype, so `constructor` or `__proto__` are plain own keys, then given one.
  const out = Object.create(null) as OwnersByPath;
  const cache = new Map<string, string>();
  for (let e = 0; e < entries.length; e++) {
    const owner = entries[e]!.owner;
    // decoded first, so that an entry whose trie throws part-way adds nothing
    let found: string[];
    try {
      found = ownedPaths(entries[e]!.fields, cache);
    } catch {
      continue;
    }
    for (const path of found) {
      const owners = out[path];
      if (owners === undefined) out[path] = [owner];
      // two spellings of one key (e.g. k: JSON with different spacing) in one entry count once
      else if (owners[owners.length - 1] !== owner) owners.push(owner);
    }
  }
  // callers get their own owner objects, not the shared per-entry ones
  for (const path in out) out[path] = out[path]!.map(copyOwner);
  return Object.setPrototypeOf(out, Object.prototype) as OwnersByPath;
}

function copyOwner({ manager, operation, time, subresource }: FieldOwner): FieldOwner {
  const o: FieldOwner = { manager, operation };
  if (time !== undefined) o.time = time;
  if (subresource !== undefined) o.subresource = subresource;
  return o;
}

/** Unique manager names of the valid managedFields entries, in order of first appearance. */
export function managersOf(obj: unknown): string[] {
  return [...new Set(entriesOf(obj).map((e) => e.owner.manager))];
}
