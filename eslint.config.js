// Lint: typescript-eslint (type-aware off for speed), React hooks rules, and
// import boundaries: web and server never import each other; domain imports
// nothing of ours but domain; api imports only domain; no import cycles
// anywhere; SPA features never import each other (shared code lives in
// src/web/components or src/web/lib).
import { readdirSync } from 'node:fs';
import { URL } from 'node:url';
import js from '@eslint/js';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

const features = readdirSync(new URL('./src/web/features', import.meta.url), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);

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
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,tsx,js,mjs}'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.tsx', '.js', '.mjs'] })],
      // dependencies are parsed to follow their imports: TypeScript files with the TypeScript parser
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
      'import-x/extensions': ['.ts', '.tsx', '.js', '.mjs'],
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
    },
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
