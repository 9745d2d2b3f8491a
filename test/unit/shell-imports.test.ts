// The SPA's shell (what main.tsx imports statically, as Vite bundles it) must not reach zod or the API schemas:
// they are a chunk of their own (src/web/lib/lazy-parsers.ts), and the shell's budget (bench/assets.ts, < 120 KB
// brotli) depends on it. A static `import { X } from '…/api/schemas.ts'` in any shell module fails this test.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

/** value imports (not `import type`, not dynamic import()) of a module, resolved to files or package names */
function staticImports(file: string): string[] {
  const src = readFileSync(file, 'utf8');
  const out: string[] = [];
  const re = /^\s*(import|export)\s+(?!type\b)([^'";]*?\bfrom\s+)?['"]([^'"]+)['"]/gm;
  for (let m = re.exec(src); m; m = re.exec(src)) {
    const clause = (m[2] ?? '').replace(/\s*from\s+$/, '');
    const named = /\{([^}]*)\}/.exec(clause)?.[1];
    const outside = clause
      .replace(/\{[^}]*\}/, '')
      .replace(/,/g, '')
      .trim(); // a default or `* as X`
    const typeOnly =
      named !== undefined && outside === '' && named.split(',').every((n) => !n.trim() || /^\s*type\s/.test(n));
    if (typeOnly) continue;
    const spec = m[3] ?? '';
    if (spec.startsWith('.')) out.push(resolve(dirname(file), spec));
    else out.push(spec);
  }
  return out;
}

function shellModules(): Map<string, string> {
  const seen = new Map<string, string>(); // module → the module that imported it
  const todo = [join(ROOT, 'src/web/main.tsx')];
  seen.set(todo[0] ?? '', '(entry)');
  while (todo.length) {
    const f = todo.pop() ?? '';
    if (!f.startsWith('/') || !existsSync(f) || /\.css$/.test(f)) continue;
    for (const dep of staticImports(f)) {
      if (seen.has(dep)) continue;
      seen.set(dep, f);
      todo.push(dep);
    }
  }
  return seen;
}

describe('the SPA shell', () => {
  const mods = shellModules();
  const rel = (f: string) => f.replace(`${ROOT}/`, '');

  it('is found (the walk reaches the router, the layout and the sign-in page)', () => {
    const files = [...mods.keys()].map(rel);
    expect(files).toEqual(
      expect.arrayContaining([
        'src/web/app/router.tsx',
        'src/web/app/layout.tsx',
        'src/web/features/auth/components/sign-in-page.tsx',
        'src/web/lib/api-client.ts',
      ]),
    );
  });

  it('reaches neither zod nor the API schemas (they load with the first request, not with the shell)', () => {
    const bad = [...mods.entries()]
      .filter(([m]) => m === 'zod' || m.startsWith('zod/') || /\/src\/api\/(?!plain\.ts$)[^/]+\.ts$/.test(m))
      .map(([m, by]) => `${rel(m)} (imported by ${rel(by)})`);
    expect(bad).toEqual([]);
  });
});
