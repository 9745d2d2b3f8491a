// YAML for the write-back: the documents of a file read as plain data, and edits that keep comments and
// formatting (a scalar replaced in the text where it stands, else only the edited document re-serialised).
import { isScalar, parseAllDocuments, stringify, type Document, type Scalar } from 'yaml';
import type { Obj } from './object-meta.ts';

export type YamlPath = Array<string | number>;

export const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

interface ParsedDoc {
  index: number;
  value: unknown;
}

export function readDocs(text: string): ParsedDoc[] | undefined {
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
export type DocEdit =
  { scalar: Scalar; value: string | number | boolean | null } | { structural: true } | { error: string };

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
export function editYaml(
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
export function setAt(doc: Document.Parsed, path: YamlPath, value: unknown): DocEdit {
  const node = doc.getIn(path, true);
  if (isScalar(node) && isPrimitive(value)) return { scalar: node, value };
  doc.setIn(path, doc.createNode(value));
  return { structural: true };
}
