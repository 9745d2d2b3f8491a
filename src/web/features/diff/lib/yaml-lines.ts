import { isMap, isScalar, isSeq, parseDocument } from 'yaml';

// Finds the line of a field path (managed-fields path format) in YAML printed by the `yaml` package,
// so the diff editor can put an owner badge on it. Walks the path segment by segment: a field is a
// `key:` line deeper than its parent; a keyed list item is the `- ` entry whose key fields match.

interface Seg {
  field?: string;
  keys?: Array<[string, string]>;
}

export function parsePath(path: string): Seg[] {
  const segs: Seg[] = [];
  const re = /\.?(?:\["((?:[^"\\]|\\.)*)"\]|([A-Za-z_][A-Za-z0-9_]*))|\[([^\]]*)\]/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(path))) {
    if (m[1] !== undefined) segs.push({ field: JSON.parse(`"${m[1]}"`) as string });
    else if (m[2] !== undefined) segs.push({ field: m[2] });
    else if (m[3] !== undefined && !m[3].startsWith('=') && !/^\d+$/.test(m[3])) {
      segs.push({
        keys: m[3]
          .split(',')
          .map(
            (kv) =>
              [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1).replace(/^"|"$/g, '')] as [string, string],
          ),
      });
    }
  }
  return segs;
}

function lineAt(text: string, offset: number): number {
  let n = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

/** 1-based line number of the deepest path segment found in the YAML text, or 0. Uses the YAML AST. */
export function lineOfPath(yamlText: string, path: string): number {
  const doc = parseDocument(yamlText);
  let node: unknown = doc.contents;
  let found = 0;
  for (const seg of parsePath(path)) {
    if (seg.field !== undefined && isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === seg.field);
      if (!pair) break;
      const r = (isScalar(pair.key) ? pair.key.range : undefined) ?? undefined;
      if (r) found = lineAt(yamlText, r[0]);
      node = pair.value;
    } else if (seg.keys && isSeq(node)) {
      const item = node.items.find(
        (it) =>
          isMap(it) &&
          (seg.keys ?? []).every(([k, v]) => {
            const val = it.get(k, true);
            return val === undefined ? k === 'protocol' : isScalar(val) && String(val.value) === v;
          }),
      );
      if (!item || !isMap(item) || !item.range) break;
      found = lineAt(yamlText, item.range[0]);
      node = item;
    } else break;
  }
  return found;
}
