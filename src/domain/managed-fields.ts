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
 *
 * This is the console's one path format: {@link joinFieldPath} joins every path
 * (the field diff builds its paths with it, so each change finds its owners),
 * {@link splitFieldPath} takes one apart, {@link fieldPathToPointer} turns one
 * into a JSON pointer.
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
 * otherwise `["<name>"]` (JSON string in brackets). Join segments with
 * {@link joinFieldPath}, never by hand: a bracket takes no dot before it.
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
 * The bracket segment of a keyed list item from its key fields in order:
 * `[['containerPort', 8080], ['protocol', 'TCP']]` → `[containerPort=8080,protocol=TCP]`.
 * Empty input gives `undefined` (an item needs at least one key).
 */
export function formatKeyFieldsSegment(keys: ReadonlyArray<readonly [string, unknown]>): string | undefined {
  if (keys.length === 0) return undefined;
  return `[${keys.map(([k, v]) => `${formatKeyValue(k)}=${formatKeyValue(v)}`).join(',')}]`;
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
  return formatKeyFieldsSegment(Object.entries(parsed.value)) ?? `[${keyJson}]`;
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
 * The one joiner of the path format: appends a segment (from
 * {@link formatFieldSegment}, {@link formatKeyFieldsSegment},
 * {@link formatKeyedSegment}, {@link formatSetSegment} or `[<n>]`) to `parent`
 * (`''` for the root). Identifier fields are dot-joined (no dot at the root);
 * bracket segments are appended as they are: `data` + `["api-key"]` →
 * `data["api-key"]`.
 */
export function joinFieldPath(parent: string, segment: string): string {
  if (segment.startsWith('[')) return parent + segment;
  return parent === '' ? segment : `${parent}.${segment}`;
}

/** The path of field `name` of the node at `parent`: `joinFieldPath(parent, formatFieldSegment(name))`. */
export function fieldPath(parent: string, name: string): string {
  return joinFieldPath(parent, formatFieldSegment(name));
}

/** The segment one FieldsV1 key other than `.` stands for; a key with an unknown prefix is a field named by the whole key. */
function segmentOf(key: string): string {
  const rest = key.slice(2);
  switch (key.slice(0, 2)) {
    case 'f:':
      return formatFieldSegment(rest);
    case 'k:':
      return formatKeyedSegment(rest);
    case 'v:':
      return formatSetSegment(rest);
    case 'i:':
      return `[${rest}]`;
    default:
      return formatFieldSegment(key);
  }
}

/**
 * The path of the child reached from `parent` (`''` for the root) through one
 * FieldsV1 key, or `undefined` for `.` (the node itself).
 */
export function childPath(parent: string, key: string): string | undefined {
  return key === '.' ? undefined : joinFieldPath(parent, segmentOf(key));
}

/**
 * The segments of a path, as {@link joinFieldPath} joined them:
 * `metadata.annotations["a.b/c"]` → `['metadata', 'annotations', '["a.b/c"]']`.
 * Dots and brackets inside JSON-quoted names and values do not split.
 */
export function splitFieldPath(path: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < path.length) {
    const c = path[i];
    if (c === '.') {
      i++;
      continue;
    }
    let j = i;
    if (c === '[') {
      // a `"` right after `[`, `=` or `,` opens a JSON string (raw values never start with one)
      let quoted = false;
      for (j = i + 1; j < path.length; j++) {
        const ch = path[j];
        if (quoted) {
          if (ch === '\\') j++;
          else if (ch === '"') quoted = false;
        } else if (ch === '"' && '[=,'.includes(path[j - 1]!)) quoted = true;
        else if (ch === ']') break;
      }
      j++;
    } else {
      while (j < path.length && path[j] !== '.' && path[j] !== '[') j++;
    }
    out.push(path.slice(i, j));
    i = j;
  }
  return out;
}

/** Splits the inside of a bracket at top-level commas (not inside JSON strings). */
export function splitKeyFields(inner: string): string[] {
  const parts: string[] = [];
  let quoted = false;
  let start = 0;
  for (let j = 0; j < inner.length; j++) {
    const ch = inner[j];
    if (quoted) {
      if (ch === '\\') j++;
      else if (ch === '"') quoted = false;
    } else if (ch === '"' && (j === 0 || '=,'.includes(inner[j - 1]!))) quoted = true;
    else if (ch === ',') {
      parts.push(inner.slice(start, j));
      start = j + 1;
    }
  }
  parts.push(inner.slice(start));
  return parts;
}

/** The index just after the JSON string that opens `text`, or -1 when it is not closed. */
function jsonStringEnd(text: string): number {
  for (let j = 1; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '"') return j + 1;
  }
  return -1;
}

/**
 * The key field names of a keyed list item segment (`[name=render]` →
 * `['name']`, `[containerPort=8080,protocol=TCP]` → `['containerPort', 'protocol']`),
 * or `undefined` for any other segment (field, set value, index, raw).
 */
export function keyedSegmentFields(segment: string): string[] | undefined {
  if (!segment.startsWith('[') || !segment.endsWith(']') || fieldSegmentName(segment) !== undefined) return undefined;
  if (segment.startsWith('[=') || /^\[\d+\]$/.test(segment)) return undefined;
  const names: string[] = [];
  for (const part of splitKeyFields(segment.slice(1, -1))) {
    const eq = part.startsWith('"') ? jsonStringEnd(part) : part.indexOf('=');
    if (eq <= 0 || part[eq] !== '=') return undefined;
    const name = part.slice(0, eq);
    if (!name.startsWith('"')) names.push(name);
    else {
      const parsed = parseJson(name);
      if (!parsed.ok || typeof parsed.value !== 'string') return undefined;
      names.push(parsed.value);
    }
  }
  return names;
}

/**
 * The field name a segment stands for (`replicas` → `replicas`, `["api-key"]`
 * → `api-key`), or `undefined` for a list item, set value or index segment.
 */
export function fieldSegmentName(segment: string): string | undefined {
  if (!segment.startsWith('[')) return segment === '' ? undefined : segment;
  const inner = segment.slice(1, -1);
  if (!segment.endsWith(']') || !inner.startsWith('"') || jsonStringEnd(inner) !== inner.length) return undefined;
  const parsed = parseJson(inner);
  return parsed.ok && typeof parsed.value === 'string' ? parsed.value : undefined;
}

/**
 * The RFC 6901 JSON pointer of a path made of fields only
 * (`metadata.annotations["a.b/c"]` → `/metadata/annotations/a.b~1c`), or
 * `undefined` when the path names a list item (a pointer needs its index).
 */
export function fieldPathToPointer(path: string): string | undefined {
  let out = '';
  for (const segment of splitFieldPath(path)) {
    const name = fieldSegmentName(segment);
    if (name === undefined) return undefined;
    out += `/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
  }
  return out;
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
 * The segment a FieldsV1 key other than `.` stands for. Memoised per decode,
 * since keys such as `f:name` or `k:{"name":"render"}` repeat across nodes and
 * entries.
 */
function cachedSegmentOf(key: string, cache: Map<string, string>): string {
  let segment = cache.get(key);
  if (segment === undefined) {
    segment = segmentOf(key);
    cache.set(key, segment);
  }
  return segment;
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
      paths.push(joinFieldPath(path, cachedSegmentOf(key, cache)));
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

/**
 * The owners of one path of {@link ownersByPath}'s result: its own owners, or — for a leaf owned through an
 * ancestor that owns its node as a whole (`.`) — the nearest such ancestor's. `[]` when nobody owns it.
 */
export function ownersOfPath(owners: OwnersByPath, path: string): FieldOwner[] {
  const own = owners[path];
  if (own && own.length) return own;
  const prefixes: string[] = [];
  for (const segment of splitFieldPath(path)) prefixes.push(joinFieldPath(prefixes.at(-1) ?? '', segment));
  for (let i = prefixes.length - 2; i >= 0; i--) {
    const o = owners[prefixes[i]!];
    if (o && o.length) return o;
  }
  return [];
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
