// No file in src/ grows past ~500 lines without saying why at its top (docs/ARCHITECTURE.md): a room one person
// can hold in their head. The reason is a line in the first 12 that says "over 500 lines".
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const LIMIT = 520;

function* sources(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* sources(p);
    else if (/\.(ts|tsx)$/.test(e.name)) yield p;
  }
}

describe('file size', () => {
  it('no file in src/ is over ~500 lines without a reason at its top', () => {
    const over = [...sources(join(root, 'src'))]
      .map((f) => ({ f: relative(root, f), lines: readFileSync(f, 'utf8').split('\n') }))
      .filter(({ lines }) => lines.length > LIMIT)
      .filter(({ lines }) => !/over 500 lines/i.test(lines.slice(0, 12).join('\n')))
      .map(({ f, lines }) => `${f}: ${lines.length} lines`);
    expect(over).toEqual([]);
  });
});
