// docs/operate/configuration.md is generated (scripts/gen-config-docs.ts) from the configuration table
// (src/server/config-vars.ts) and the chart's values.yaml: the checked-in page must be exactly the generator's
// output, so a change to either that is not regenerated fails here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configDocs, OUT, parseValues, ROOT } from '../../scripts/gen-config-docs.ts';
import { CONFIG_VARS } from '../../src/server/config-vars.ts';

describe('configuration reference', () => {
  it('the checked-in page is the generator output (npx tsx scripts/gen-config-docs.ts)', async () => {
    const current = readFileSync(join(ROOT, OUT), 'utf8');
    expect(current).toBe(await configDocs());
  });

  it('names every variable of the table and every value of the chart, in at most 400 lines', async () => {
    const page = await configDocs();
    expect(page.split('\n').length).toBeLessThanOrEqual(400);
    expect(CONFIG_VARS.filter((v) => !page.includes(`| \`${v.name}\``)).map((v) => v.name)).toEqual([]);
    const { values } = parseValues(readFileSync(join(ROOT, 'deploy/chart/values.yaml'), 'utf8'));
    // a value is on the page as its own row, or inside its map's row (`secrets.maskKey`: `{ name: '', key: … }`)
    const missing = values
      .filter((v) => v.value !== undefined)
      .filter((v) => {
        const parts = v.path.split('.');
        return !parts.some((_, i) => page.includes(`| \`${parts.slice(0, i + 1).join('.')}\``));
      });
    expect(missing.map((v) => v.path)).toEqual([]);
  });

  it('reads values.yaml: nested keys, comments, sections; refuses a line it does not understand', () => {
    const { intro, values } = parseValues(
      ['# the file', '', '# --- one ---', '# a', 'a:', '  # b', '  b: 1', 'c: []'].join('\n'),
    );
    expect(intro).toEqual(['the file']);
    expect(values).toEqual([
      { path: 'a', comment: ['a'], section: 'one' },
      { path: 'a.b', value: '1', comment: ['b'], section: 'one' },
      { path: 'c', value: '[]', comment: [], section: 'one' },
    ]);
    expect(() => parseValues('a:\n  - item\n')).toThrow(/not a "key: value" line/);
  });
});
