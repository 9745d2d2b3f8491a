// The docs check (scripts/docs-check.ts) on small repositories in a temp dir: a good one passes; a broken link, a
// broken anchor, an unknown npm script and a variable the table lacks (or one no doc names) each fail with file:line.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { anchorsOf, checkDocs, formatProblems, githubSlug } from '../../scripts/docs-check.ts';

const VARS = ['CONSOLE_PORT', 'CONSOLE_OIDC_ISSUER', 'DATABASE_URL'];
const dirs: string[] = [];

/** A repository: package.json with `build` and `test`, and the given files. */
function repo(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'docs-check-'));
  dirs.push(root);
  const all: Record<string, string> = {
    'package.json': JSON.stringify({ scripts: { build: 'vite build', test: 'node t.mjs', 'test:fast': 'x' } }),
    ...files,
  };
  for (const [f, text] of Object.entries(all)) {
    mkdirSync(dirname(join(root, f)), { recursive: true });
    writeFileSync(join(root, f), text);
  }
  return root;
}

const GOOD = {
  'README.md': [
    '# The console',
    '',
    'See [the guide](docs/guide.md), [its set-up](docs/guide.md#set-up-the-console-once), [below](#two-words),',
    'the [source](src/) and ![a picture](docs/pic.png "title").',
    '',
    '## Two `words`',
    '',
    '`npm ci && npm run build`, then `npm test` or `npm run test:fast`; `CONSOLE_PORT` sets the port.',
    '',
    '```sh',
    'npm start   # not a script here, but a link in a fence is not a link: [x](nowhere.md)',
    'CONSOLE_OIDC_ISSUER=https://idp DATABASE_URL=postgres://db npm run build',
    '```',
  ].join('\n'),
  'docs/guide.md': '# Guide\n\n## Set up the console (once)\n\nBack to the [README](../README.md#the-console).\n',
  'docs/pic.png': '',
  'src/main.ts': '',
};

afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('docs check', () => {
  it('passes a repository whose links, anchors, scripts and variables are all right', () => {
    const good = {
      ...GOOD,
      'package.json': JSON.stringify({ scripts: { build: 'b', test: 't', 'test:fast': 'f', start: 's' } }),
    };
    expect(formatProblems(checkDocs(repo(good), { vars: VARS }))).toBe('');
  });

  it('fails a link to a file that does not exist, naming file and line', () => {
    const root = repo({
      ...GOOD,
      'docs/guide.md': '# Guide\n\n## Set up the console (once)\n\nSee [it](./missing.md).\n',
    });
    expect(formatProblems(checkDocs(root, { vars: VARS }))).toContain(
      'docs/guide.md:5: broken link ./missing.md: no such file docs/missing.md',
    );
  });

  it('fails an anchor that names no heading, in another file or its own', () => {
    const readme = GOOD['README.md'].replace('#set-up-the-console-once', '#setup').replace('(#two-words)', '(#three)');
    const out = formatProblems(checkDocs(repo({ ...GOOD, 'README.md': readme }), { vars: VARS }));
    expect(out).toContain('README.md:3: broken anchor docs/guide.md#setup: docs/guide.md has no heading #setup');
    expect(out).toContain('README.md:3: broken anchor #three: README.md has no heading #three');
  });

  it('fails an npm script package.json does not have, and a script run without `run`', () => {
    const readme = GOOD['README.md'].replace('npm run test:fast', 'npm run test:slow').replace('npm test', 'npm build');
    const out = formatProblems(checkDocs(repo({ ...GOOD, 'README.md': readme }), { vars: VARS }));
    expect(out).toContain('README.md:8: npm run test:slow: package.json has no such script');
    expect(out).toContain('README.md:8: npm build: not an npm command (the script runs as npm run build)');
    // npm start needs a start script, which this package.json lacks
    expect(out).toContain('README.md:11: npm start: package.json has no start script');
  });

  it('fails a variable the configuration table lacks, and a table variable no doc names', () => {
    const readme = GOOD['README.md'].replace('`CONSOLE_PORT` sets', '`CONSOLE_PROT` sets');
    const out = formatProblems(checkDocs(repo({ ...GOOD, 'README.md': readme }), { vars: VARS }));
    expect(out).toContain('README.md:8: CONSOLE_PROT: not a variable the console reads');
    expect(out).toContain('src/server/config-vars.ts:1: CONSOLE_PORT: read by the console but named in no doc');
  });

  it('fails a README over 150 lines and a page over 400', () => {
    const long = (n: number) => Array.from({ length: n }, (_, i) => `line ${i}`).join('\n') + '\n';
    const ok = checkDocs(repo({ ...GOOD, 'README.md': GOOD['README.md'] + long(130) }), { vars: VARS });
    expect(formatProblems(ok)).not.toMatch(/lines: at most/);
    const problems = formatProblems(
      checkDocs(
        repo({
          ...GOOD,
          'README.md': GOOD['README.md'] + long(140),
          'docs/guide.md': GOOD['docs/guide.md'] + long(400),
        }),
        {
          vars: VARS,
        },
      ),
    );
    expect(problems).toMatch(/^README\.md:151: \d+ lines: at most 150/m);
    expect(problems).toMatch(/^docs\/guide\.md:401: \d+ lines: at most 400/m);
  });

  it('slugs headings as GitHub does, repeats numbered', () => {
    expect(githubSlug('Set up the console (once)')).toBe('set-up-the-console-once');
    expect(githubSlug('`CONSOLE_PORT` and [links](x.md): **bold**, café!')).toBe('console_port-and-links-bold-café');
    expect(githubSlug('RBAC: the rules are deploy/rbac.yaml’s')).toBe('rbac-the-rules-are-deployrbacyamls');
    expect([...anchorsOf('# A\n\n## A\n\n```\n# not a heading\n```\n\nB\n---\n')]).toEqual(['a', 'a-1', 'b']);
  });
});
