// docs/reference/api.md is generated (scripts/gen-api-docs.ts) from the route contract
// (src/server/openapi/contract.ts), which src/server/openapi/openapi.test.ts keeps equal to the registered routes:
// the checked-in page must be exactly the generator's output, so a route added without regenerating fails here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiDocs, OUT, renderApiDocs, ROOT } from '../../scripts/gen-api-docs.ts';
import { CONTRACT } from '../../src/server/openapi/contract.ts';

describe('API reference', () => {
  it('the checked-in page is the generator output (npx tsx scripts/gen-api-docs.ts)', async () => {
    const current = readFileSync(join(ROOT, OUT), 'utf8');
    expect(current).toBe(await apiDocs());
  });

  it('lists every route of the contract, in at most 400 lines', async () => {
    const page = await apiDocs();
    expect(page.split('\n').length).toBeLessThanOrEqual(400);
    for (const r of CONTRACT) expect(page, `${r.method} ${r.path}`).toMatch(rowOf(r.method, r.path));
  });

  it('a route the contract gains changes the page (the check can fail)', () => {
    const more = [...CONTRACT, { ...(CONTRACT[0] as (typeof CONTRACT)[number]), path: '/api/new-thing' }];
    expect(renderApiDocs(more)).not.toBe(renderApiDocs());
    expect(renderApiDocs(more)).toContain('`/api/new-thing`');
  });
});

/** a table row of the page: `| GET    | \`/api/apps\`   |` with prettier's padding */
const rowOf = (method: string, path: string) =>
  new RegExp(`^\\| ${method} +\\| \`${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\` +\\|`, 'm');
