// The BFF's layering and the no-circles rule are enforced by the lint (eslint.config.js); these fixtures prove
// that the lint really refuses what docs/develop/ARCHITECTURE.md forbids, and accepts the allowed twin.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const fixture = (name: string) => readFileSync(join(root, 'test/fixtures/layering', name), 'utf8');

async function lintAs(text: string, filePath: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: root });
  const [res] = await eslint.lintText(text, { filePath: join(root, filePath) });
  return (res?.messages ?? []).map((m) => `${m.ruleId}: ${m.message}`);
}

// a cold ESLint with the type-aware config takes seconds on a busy 2-core machine
describe('layering lint', { timeout: 60_000 }, () => {
  it("refuses a capability importing another capability's internals", async () => {
    const msgs = await lintAs(fixture('reaches-into-evidence.ts.txt'), 'src/server/prune/fixture.ts');
    expect(msgs.some((m) => m.startsWith('import-x/no-restricted-paths') && m.includes('index.ts'))).toBe(true);
  });

  it("accepts the same import through the other capability's index.ts", async () => {
    expect(await lintAs(fixture('through-index.ts.txt'), 'src/server/prune/fixture.ts')).toEqual([]);
  });

  it('refuses the platform importing a capability', async () => {
    const msgs = await lintAs(fixture('platform-imports-capability.ts.txt'), 'src/server/kube/fixture.ts');
    expect(msgs.some((m) => m.startsWith('import-x/no-restricted-paths') && m.includes('platform'))).toBe(true);
  });

  it('refuses an import circle, type-only imports included', async () => {
    const eslint = new ESLint({ cwd: root, ignore: false });
    const results = await eslint.lintFiles([join(root, 'test/fixtures/import-cycle/a.ts')]);
    const msgs = results.flatMap((r) => r.messages.map((m) => m.ruleId));
    expect(msgs).toContain('local/no-import-cycle');
  });
});
