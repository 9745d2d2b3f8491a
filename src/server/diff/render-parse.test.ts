import { describe, expect, it } from 'vitest';
import { MAX_YAML_DEPTH, parseRendered } from './render.ts';

const obj = (extra = '') => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n${extra}`;

describe('parseRendered limits (attacks on the YAML parser)', () => {
  it('billion laughs: aliases that expand exponentially are refused', () => {
    const lol = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 9; i++)
      lol.push(
        `${'b'.repeat(i)}: &${'b'.repeat(i)} [${Array(9)
          .fill(i === 1 ? '*a' : `*${'b'.repeat(i - 1)}`)
          .join(',')}]`,
      );
    expect(() => parseRendered(obj(`data:\n  ${lol.join('\n  ')}\n`))).toThrow(/alias|Excessive/i);
  });
  it(`nesting deeper than ${MAX_YAML_DEPTH} levels is refused by name`, () => {
    const deep = `data:\n  x: ${'['.repeat(MAX_YAML_DEPTH + 5)}1${']'.repeat(MAX_YAML_DEPTH + 5)}\n`;
    expect(() => parseRendered(obj(deep))).toThrow(`YAML nested deeper than ${MAX_YAML_DEPTH} levels`);
    const ok = `data:\n  x: ${'['.repeat(20)}1${']'.repeat(20)}\n`;
    expect(parseRendered(obj(ok))).toHaveLength(1);
  });
  it('absurd nesting (100,000 levels) is an error, not a crash', () => {
    const deep = `data:\n  x: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`;
    expect(() => parseRendered(obj(deep))).toThrow();
  });
  it('too many objects are refused', () => {
    const many = Array.from(
      { length: 12 },
      (_, i) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c${i}\n`,
    ).join('---\n');
    expect(() => parseRendered(many, 10)).toThrow('more than 10 objects');
  });
});
