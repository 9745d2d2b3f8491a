// The configuration table (config-vars.ts) and the code that reads the environment are the same set of names: a
// variable read by the server code but missing from the table, or listed but read nowhere, fails here. So
// docs/operate/configuration.md, generated from the table, cannot drift from the code.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { AMBIENT_ENV, CONFIG_GROUPS, CONFIG_VARS } from './config-vars.ts';

const root = join(import.meta.dirname, '..', '..');
const serverDir = join(root, 'src/server');

function* serverSources(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* serverSources(p);
    else if (/\.ts$/.test(e.name) && !/\.test\.ts$/.test(e.name) && e.name !== 'test-fixture.ts') yield p;
  }
}

/**
 * The environment variables a source reads: `env.NAME` / `env?.NAME` (process.env or an injected ProcessEnv),
 * `process.env.name` in any case, and `env['NAME']`. An assignment (`env.NAME = …`, the git child's environment)
 * is a write, not a read.
 */
function envReads(source: string): string[] {
  const names = new Set<string>();
  const notWrite = String.raw`(?!\s*=(?!=))`;
  const patterns = [
    new RegExp(String.raw`\benv\??\.([A-Z][A-Z0-9_]*)\b${notWrite}`, 'g'),
    new RegExp(String.raw`\bprocess\.env\??\.([A-Za-z_][A-Za-z0-9_]*)\b${notWrite}`, 'g'),
    new RegExp(String.raw`\benv\??\.?\[\s*['"]([A-Za-z_][A-Za-z0-9_]*)['"]\s*\]${notWrite}`, 'g'),
  ];
  for (const re of patterns) for (const m of source.matchAll(re)) names.add(m[1]!);
  return [...names];
}

/** Reads the scan cannot see: `env[someVariable]`, or destructuring of the environment. */
function opaqueReads(source: string): string[] {
  const found = [...source.matchAll(/\benv\??\.?\[\s*(?!['"])[^\]]*\]/g)].map((m) => m[0]);
  const destructured = [...source.matchAll(/\}\s*=\s*(?:process\.)?env\b/g)].map((m) => m[0]);
  return [...found, ...destructured];
}

function readsByFile(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const f of serverSources(serverDir)) {
    const text = readFileSync(f, 'utf8');
    for (const name of envReads(text)) out.set(name, [...(out.get(name) ?? []), relative(root, f)]);
  }
  return out;
}

describe('configuration table (config-vars.ts)', () => {
  it('the scan finds reads in their usual spellings and skips writes', () => {
    const src = [
      'const a = env.CONSOLE_A?.trim();',
      'if (process.env.CONSOLE_B === "off") x();',
      'const c = env?.CONSOLE_C ?? 1;',
      "const d = process.env['CONSOLE_D'];",
      'const v = process.env.npm_package_version;',
      'env.GIT_AUTHOR_NAME = author;',
      'const n = env.length;',
    ].join('\n');
    expect(envReads(src).sort()).toEqual(['CONSOLE_A', 'CONSOLE_B', 'CONSOLE_C', 'CONSOLE_D', 'npm_package_version']);
  });

  it('every variable the server code reads is in the table (or named as ambient), and every entry is read', () => {
    const reads = readsByFile();
    const table = new Set(CONFIG_VARS.map((v) => v.name));
    const undocumented = [...reads.keys()].filter((n) => !table.has(n) && !(n in AMBIENT_ENV));
    expect(undocumented.map((n) => `${n} (${reads.get(n)!.join(', ')})`)).toEqual([]);
    const unread = [...table, ...Object.keys(AMBIENT_ENV)].filter((n) => !reads.has(n));
    expect(unread).toEqual([]);
  });

  it('no server source reads the environment in a way the scan cannot see', () => {
    const opaque = [...serverSources(serverDir)].flatMap((f) =>
      opaqueReads(readFileSync(f, 'utf8')).map((m) => `${relative(root, f)}: ${m}`),
    );
    expect(opaque).toEqual([]);
  });

  it('names each variable once, with a description and a known group', () => {
    const names = CONFIG_VARS.map((v) => v.name);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
    for (const v of CONFIG_VARS) {
      expect(v.description.length, v.name).toBeGreaterThan(10);
      expect(Object.keys(CONFIG_GROUPS), v.name).toContain(v.group);
    }
  });

  it("every chart value an entry names exists in the chart's values.yaml", () => {
    const values = parse(readFileSync(join(root, 'deploy/chart/values.yaml'), 'utf8')) as Record<string, unknown>;
    const has = (path: string) =>
      path
        .split('.')
        .reduce<unknown>(
          (o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined),
          values,
        ) !== undefined;
    const missing = CONFIG_VARS.flatMap((v) =>
      [...(v.chart ?? '').matchAll(/`([a-zA-Z][\w.]*)`/g)].map((m) => m[1]!).filter((p) => !has(p)),
    );
    expect(missing).toEqual([]);
  });

  it("every variable the chart's and the kustomize base's manifests set is in the table", () => {
    const dirs = ['deploy/chart/templates', 'deploy/kustomize'];
    const table = new Set(CONFIG_VARS.map((v) => v.name));
    const set = dirs.flatMap((d) =>
      readdirSync(join(root, d)).flatMap((f) => [
        ...readFileSync(join(root, d, f), 'utf8').matchAll(/\b(CONSOLE_[A-Z0-9_]+|DATABASE_URL|KUBECONFIG)\b/g),
      ]),
    );
    // the chart builds the OIDC names from a suffix (`CONSOLE_OIDC_{{ $env }}`): the prefix alone is not a name
    const names = [...new Set(set.map((m) => m[1]!))].filter((n) => n !== 'CONSOLE_OIDC_');
    expect(names.filter((n) => !table.has(n))).toEqual([]);
  });
});
