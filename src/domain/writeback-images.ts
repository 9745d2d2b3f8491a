// Container images in kustomize `images:` entries: what an image becomes after them, and the entry edits
// (newName, newTag, digest) that make kustomize render a live image.
import { isScalar, type Document } from 'yaml';
import { parseImage, type ParsedImage } from './image.ts';
import type { Obj } from './object-meta.ts';
import { isObj, str, type DocEdit, type YamlPath } from './writeback-yaml.ts';

/** The image after kustomize `images:` entries (newName, newTag, digest). */
export function applyImages(image: string, entries: unknown): string {
  if (!Array.isArray(entries)) return image;
  const img = parseImage(image);
  const e = entries.find((x) => isObj(x) && x.name === img.name);
  if (!isObj(e)) return image;
  const name = str(e.newName) ?? img.name;
  if (typeof e.digest === 'string') return `${name}@${e.digest}`;
  const tag = typeof e.newTag === 'string' || typeof e.newTag === 'number' ? String(e.newTag) : img.tag;
  return `${name}${tag !== undefined ? `:${tag}` : ''}${img.digest ? `@${img.digest}` : ''}`;
}

/** The image entry edits that make kustomize render `live` for an entry named `name`. */
export function imageEntryEdits(doc: Document.Parsed, at: YamlPath, entry: Obj, live: ParsedImage): DocEdit {
  const set = (k: string, v: string) => {
    const node = doc.getIn([...at, k], true);
    if (isScalar(node)) node.value = v;
    else doc.setIn([...at, k], v);
  };
  if (live.name !== entry.name) set('newName', live.name);
  else if (entry.newName !== undefined) doc.deleteIn([...at, 'newName']);
  if (live.digest !== undefined) {
    set('digest', live.digest);
    if (entry.newTag !== undefined) doc.deleteIn([...at, 'newTag']);
  } else {
    if (live.tag !== undefined) set('newTag', live.tag);
    else if (entry.newTag !== undefined) doc.deleteIn([...at, 'newTag']);
    if (entry.digest !== undefined) doc.deleteIn([...at, 'digest']);
  }
  return { structural: true };
}

export function newImageEntry(name: string, live: ParsedImage): Obj {
  const e: Obj = { name };
  if (live.name !== name) e.newName = live.name;
  if (live.digest !== undefined) e.digest = live.digest;
  else if (live.tag !== undefined) e.newTag = live.tag;
  return e;
}
