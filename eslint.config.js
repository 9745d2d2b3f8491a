// Lint: typescript-eslint (type-aware off for speed), React hooks rules, and
// import boundaries: web and server never import each other; domain imports
// nothing of ours but domain; api imports only domain; no import cycles
// anywhere (type-only imports count); SPA features never import each other
// (shared code lives in src/web/components or src/web/lib); in the BFF a
// capability imports another only through its index.ts, the platform never
// imports a capability or the composition root (docs/develop/ARCHITECTURE.md).
import { readdirSync } from 'node:fs';
import { URL } from 'node:url';
import js from '@eslint/js';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';
import noImportCycle from './eslint-rules/no-import-cycle.js';

const features = readdirSync(new URL('./src/web/features', import.meta.url), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);

// The BFF's floors (docs/develop/ARCHITECTURE.md): capabilities, the platform beneath them, the composition root above.
const serverDir = new URL('./src/server/', import.meta.url);
export const CAPABILITIES = [
  'apps',
  'tree',
  'diff',
  'drift',
  'prune',
  'freeze',
  'releases',
  'evidence',
  'auth',
  'tryit',
  'sinks',
];
export const PLATFORM = ['kube', 'git', 'forge', 'http', 'store', 'gitops', 'config.ts'];
const serverEntries = readdirSync(serverDir, { withFileTypes: true });
// the composition root: every file or folder of src/server that is neither a capability nor platform
const ROOT = serverEntries
  .map((d) => d.name)
  .filter((n) => !CAPABILITIES.includes(n) && !PLATFORM.includes(n) && !n.endsWith('.test.ts'));
const routesOf = (cap) =>
  readdirSync(new URL(`${cap}/`, serverDir)).filter((f) => f === 'routes.ts' || f.endsWith('-routes.ts'));
const s = (p) => `./src/server/${p}`;
const serverZones = [
  // a capability reaches another only through its index.ts
  ...CAPABILITIES.flatMap((cap) =>
    CAPABILITIES.filter((other) => other !== cap).map((other) => ({
      target: s(cap),
      from: s(other),
      except: ['./index.ts'],
      message: `a capability imports another only through its index.ts (src/server/${other}/index.ts)`,
    })),
  ),
  // capabilities see the composition root's wiring contract (deps.ts) and nothing else of it
  ...CAPABILITIES.flatMap((cap) =>
    ROOT.filter((r) => r !== 'deps.ts').map((r) => ({
      target: s(cap),
      from: s(r),
      message: 'a capability never imports the composition root (only the deps.ts contract)',
    })),
  ),
  // the platform never imports a capability or the composition root
  ...PLATFORM.flatMap((p) =>
    [...CAPABILITIES, ...ROOT].map((up) => ({
      target: s(p),
      from: s(up),
      message: 'the platform (kube, git, forge, http, store, gitops, config) never imports a capability or the root',
    })),
  ),
  // the root wires capabilities by their index.ts and registers their routes files
  ...ROOT.flatMap((r) =>
    CAPABILITIES.map((cap) => ({
      target: s(r),
      from: s(cap),
      except: ['./index.ts', ...routesOf(cap).map((f) => `./${f}`)],
      message: `the composition root uses a capability through its index.ts and its routes files`,
    })),
  ),
];

const restrict = (patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });

export default tseslint.config(
  {
    ignores: [
      'node_modules',
      'dist',
      '.sandbox',
      '.data',
      'sandbox/go',
      'public/mockServiceWorker.js',
      'test-results',
      'playwright-report',
      // an import circle on purpose: test/unit/layering.test.ts proves the lint refuses it
      'test/fixtures/import-cycle',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,tsx,js,mjs}'],
    settings: {
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.tsx', '.js', '.mjs'] })],
      // dependencies are parsed to follow their imports: TypeScript files with the TypeScript parser
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
      'import-x/extensions': ['.ts', '.tsx', '.js', '.mjs'],
    },
    plugins: { 'import-x': importX, local: { rules: { 'no-import-cycle': noImportCycle } } },
    rules: {
      // our own rule, not import-x/no-cycle: that one skips type-only imports (a circle of types is still a circle)
      // and took 38 % of the lint's time (TIMING=20 npx eslint ., 2026-12-06: 8.9 s of 23 s) for a subset of ours
      'local/no-import-cycle': 'error',
    },
  },
  {
    // tests may reach into any room to set it up; production code may not
    files: ['src/server/**/*.ts'],
    ignores: ['src/server/**/*.test.ts', 'src/server/**/test-fixture.ts'],
    plugins: { 'import-x': importX },
    rules: { 'import-x/no-restricted-paths': ['error', { zones: serverZones }] },
  },
  {
    files: ['src/web/features/**/*.{ts,tsx}'],
    plugins: { 'import-x': importX },
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: features.map((f) => ({
            target: `./src/web/features/${f}`,
            from: './src/web/features',
            except: [`./${f}`],
            message: 'features never import each other: move shared code to src/web/components or src/web/lib',
          })),
        },
      ],
    },
  },
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  {
    files: ['src/web/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      ...restrict([
        { group: ['**/server/**', '**/sandbox/**', 'node:*'], message: 'the SPA never imports BFF or Node code' },
      ]),
    },
  },
  {
    files: ['src/server/**/*.ts'],
    rules: restrict([{ group: ['**/web/**', '**/mocks/**'], message: 'the BFF never imports SPA code or mocks' }]),
  },
  {
    files: ['src/domain/**/*.ts'],
    ignores: ['src/domain/**/*.test.ts'],
    rules: restrict([
      {
        group: ['**/server/**', '**/web/**', '**/api/**', '**/sandbox/**', 'node:*'],
        message: 'domain is pure: no I/O, no outer layers',
      },
    ]),
  },
  {
    files: ['src/api/**/*.ts'],
    rules: restrict([{ group: ['**/server/**', '**/web/**', '**/sandbox/**'], message: 'api depends only on domain' }]),
  },
  {
    files: ['scripts/**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
