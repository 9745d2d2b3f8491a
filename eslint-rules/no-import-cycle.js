// A local lint rule: no import circles among our own files, type-only imports INCLUDED (import-x/no-cycle skips
// `import type`, so a circle made of types passes it; ours does not). Static imports and re-exports count;
// dynamic `import()` does not (it is how a circle is broken on purpose, e.g. lazy CLI commands).
// Each file's imports are read once per process with a light scan of its text (our files are Prettier-formatted:
// one statement per `;`), resolved relative to the file; bare package names are ignored.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';

const STATIC_IMPORT =
  /^\s*(?:import|export)\b[^;'"]*?\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]|^\s*import\s*['"](\.{1,2}\/[^'"]+)['"]/gm;
const BLOCK_COMMENT = /\/\*[\s\S]*?\*\//g;
const LINE_COMMENT = /^\s*\/\/.*$/gm;

const edges = new Map();

function resolveSpec(from, spec) {
  const base = resolve(dirname(from), spec);
  for (const c of [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`]) {
    try {
      if (existsSync(c) && statSync(c).isFile()) return c;
    } catch {
      /* unreadable: not an edge */
    }
  }
  return undefined;
}

function importsOf(file, text) {
  const known = edges.get(file);
  if (known) return known;
  let src = text;
  if (src === undefined) {
    try {
      src = readFileSync(file, 'utf8');
    } catch {
      src = '';
    }
  }
  const code = src.replace(BLOCK_COMMENT, '').replace(LINE_COMMENT, '');
  const out = [];
  for (const m of code.matchAll(STATIC_IMPORT)) {
    const target = resolveSpec(file, m[1] ?? m[2]);
    if (target && /\.(ts|tsx|js|mjs)$/.test(target)) out.push({ spec: m[1] ?? m[2], target });
  }
  edges.set(file, out);
  return out;
}

/** A path of files from `start` back to `goal`, or undefined. */
function pathBack(start, goal) {
  const seen = new Set();
  const stack = [[start, [start]]];
  while (stack.length) {
    const [f, trail] = stack.pop();
    if (seen.has(f)) continue;
    seen.add(f);
    for (const { target } of importsOf(f)) {
      if (target === goal) return trail;
      if (!seen.has(target) && !target.includes('/node_modules/')) stack.push([target, [...trail, target]]);
    }
  }
  return undefined;
}

export default {
  meta: {
    type: 'problem',
    docs: { description: 'no import circles among our files, type-only imports included' },
    schema: [],
    messages: { cycle: 'import circle: {{chain}}' },
  },
  create(context) {
    const file = context.filename;
    const cwd = context.cwd;
    return {
      Program(node) {
        // this file's edges from the text being linted (it may differ from the disk in an editor)
        edges.delete(file);
        for (const { spec, target } of importsOf(file, context.sourceCode.text)) {
          const back = pathBack(target, file);
          if (back) {
            const chain = [file, ...back, file].map((f) => relative(cwd, f)).join(' → ');
            context.report({ node, messageId: 'cycle', data: { chain: `${spec}: ${chain}` } });
          }
        }
      },
    };
  },
};
