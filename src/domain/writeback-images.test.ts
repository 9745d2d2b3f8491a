// The image references the write-back reads, and what kustomize `images:` entries make of an image.
import { describe, expect, it } from 'vitest';
import { parseImage } from './image.ts';
import { applyImages } from './writeback-images.ts';

describe('images for the write-back', () => {
  it.each([
    ['registry.example.com/a/b:1.2', { name: 'registry.example.com/a/b', tag: '1.2' }],
    ['localhost:5000/b', { name: 'localhost:5000/b' }],
    ['localhost:5000/b:3@sha256:ab', { name: 'localhost:5000/b', tag: '3', digest: 'sha256:ab' }],
    ['b@sha256:ab', { name: 'b', digest: 'sha256:ab' }],
  ])('parseImage(%j)', (s, want) => expect(parseImage(s)).toEqual(want));

  it.each([
    ['no entries', 'r/a:1', undefined, 'r/a:1'],
    ['no entry of that name', 'r/a:1', [{ name: 'r/b', newTag: '2' }], 'r/a:1'],
    ['newTag', 'r/a:1', [{ name: 'r/a', newTag: '2' }], 'r/a:2'],
    ['a numeric newTag', 'r/a:1', [{ name: 'r/a', newTag: 3 }], 'r/a:3'],
    ['newName, the tag kept', 'r/a:1', [{ name: 'r/a', newName: 'm/a' }], 'm/a:1'],
    ['digest wins over the tag', 'r/a:1', [{ name: 'r/a', newTag: '2', digest: 'sha256:ff' }], 'r/a@sha256:ff'],
  ])('applyImages: %s', (_label, image, entries, want) => expect(applyImages(image, entries)).toBe(want));
});
