// The console's field paths (managed-fields.ts format) on YAML: split into segments, resolved on an object,
// built from an empty parent, or set in a document creating what is missing (keyed list items with their keys).
import type { Document } from 'yaml';
import {
  fieldSegmentName,
  formatKeyValue,
  keyedSegmentFields,
  splitFieldPath,
  splitKeyFields,
} from './managed-fields.ts';
import type { Obj } from './object-meta.ts';
import { isObj, setAt, type DocEdit, type YamlPath } from './writeback-yaml.ts';

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

export function itemMatches(item: unknown, parts: KeyedPart[]): boolean {
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

export type Segment = { field: string } | { keyed: KeyedPart[]; text: string } | { unsupported: string };

export function parseSegments(path: string): Segment[] {
  return splitFieldPath(path).map((s): Segment => {
    const field = fieldSegmentName(s);
    if (field !== undefined) return { field };
    const keyed = keyedParts(s);
    return keyed ? { keyed, text: s } : { unsupported: s };
  });
}

/** Walks JSON `root` along `segments`: the YAML path and the value there, or `undefined` when absent. */
export function resolve(root: unknown, segments: Segment[]): { path: YamlPath; value: unknown } | undefined {
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
export function build(segments: Segment[], value: unknown, reference: unknown): unknown {
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
export function setCreating(doc: Document.Parsed, segments: Segment[], value: unknown, reference: unknown): DocEdit {
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
