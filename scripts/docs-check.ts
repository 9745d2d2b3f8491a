// The docs check (npm test's static tier): README.md, CHANGELOG.md and docs/**/*.md against the repository.
//
//   - every relative link resolves: the file or folder exists, and a `#anchor` into a markdown file names one of
//     its headings (GitHub's slugs) or an explicit `id`/`name`;
//   - every `npm run X` names a script of package.json, and every `npm X` in code names an npm command (start and
//     test need their script);
//   - every CONSOLE_* variable the docs name is in the configuration table (src/server/config-vars.ts, which a unit
//     test keeps equal to what the code reads), and every variable of the table is named somewhere in the docs;
//   - README.md has at most 150 lines, every other page at most 400.
//
//   npx tsx scripts/docs-check.ts   prints each problem as file:line and exits 1 when there is one
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CONFIG_VARS } from '../src/server/config-vars.ts';

export interface Problem {
  file: string;
  line: number;
  message: string;
}

export interface Doc {
  /** relative to the root, with `/` */
  file: string;
  text: string;
}

/** README.md, CHANGELOG.md and every markdown file under docs/, relative to root. */
export function collectDocs(root: string): Doc[] {
  const files = ['README.md', 'CHANGELOG.md'].filter((f) => existsSync(join(root, f)));
  const walk = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true })
      .sort((a, b) => a.name.localeCompare(b.name))
      .flatMap((e) => {
        const p = `${dir}/${e.name}`;
        if (e.isDirectory()) return walk(p);
        return e.name.endsWith('.md') ? [p] : [];
      });
  if (existsSync(join(root, 'docs'))) files.push(...walk('docs'));
  return files.map((file) => ({ file, text: readFileSync(join(root, file), 'utf8') }));
}

/** Each line of a markdown text with whether it is inside a fenced code block (the fence lines count as inside). */
export function markdownLines(text: string): { text: string; line: number; fenced: boolean }[] {
  let fence: string | undefined;
  return text.split('\n').map((t, i) => {
    const m = /^\s{0,3}(`{3,}|~{3,})/.exec(t);
    if (m) {
      // an opening fence, or the closing one: same character, at least as long, nothing after it
      if (!fence) fence = m[1];
      else if (m[1]![0] === fence[0] && m[1]!.length >= fence.length && !t.trim().slice(m[1]!.length).trim())
        fence = undefined;
      return { text: t, line: i + 1, fenced: true };
    }
    return { text: t, line: i + 1, fenced: fence !== undefined };
  });
}

/** The text with inline code spans blanked (same length, so columns and lines stay). */
function withoutCodeSpans(line: string): string {
  return line.replace(/(`+)(?:(?!\1)[\s\S])*?\1/g, (s) => ' '.repeat(s.length));
}

/** The inline code spans of a line. */
function codeSpans(line: string): string[] {
  return [...line.matchAll(/(`+)((?:(?!\1)[\s\S])*?)\1/g)].map((m) => m[2]!);
}

/** GitHub's anchor for a heading: its text lower-cased, punctuation dropped, spaces to hyphens. */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/`+/g, '') // code spans keep their text
    .replace(/(\*{1,3}|\b_{1,3})(\S(?:.*?\S)?)\1(?!\w)/g, '$2'); // emphasis markers
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a markdown text offers: heading slugs (repeats get -1, -2…) and explicit ids/names. */
export function anchorsOf(text: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  const add = (slug: string) => {
    const n = seen.get(slug);
    seen.set(slug, (n ?? -1) + 1);
    out.add(n === undefined ? slug : `${slug}-${n + 1}`);
  };
  const lines = markdownLines(text);
  lines.forEach((l, i) => {
    if (l.fenced) return;
    const atx = /^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+\s*)?$/.exec(l.text);
    if (atx) add(githubSlug(atx[1]!));
    else {
      const next = lines[i + 1];
      const prev = lines[i - 1];
      // a setext heading: a paragraph line underlined by === or ---
      if (
        next &&
        !next.fenced &&
        /^\s{0,3}(=+|-+)\s*$/.test(next.text) &&
        l.text.trim() &&
        !/^\s*([-*+]|\d+\.)\s/.test(l.text)
      )
        if (!prev || !prev.text.trim() || prev.fenced) add(githubSlug(l.text));
    }
    for (const m of l.text.matchAll(/<[a-z]+\s[^>]*\b(?:id|name)=["']([^"']+)["']/gi)) out.add(m[1]!.toLowerCase());
  });
  return out;
}

/** The link targets of a markdown text, with their lines: inline links and images, definitions, HTML href/src. */
export function linksOf(text: string): { target: string; line: number }[] {
  const out: { target: string; line: number }[] = [];
  for (const l of markdownLines(text)) {
    if (l.fenced) continue;
    const t = withoutCodeSpans(l.text);
    for (const m of t.matchAll(
      /!?\[(?:[^\]\\]|\\.)*\]\(\s*(<[^>]*>|[^\s)]+(?:\([^\s)]*\)[^\s)]*)*)(?:\s+["'(][^)]*)?\)/g,
    ))
      out.push({ target: m[1]!.replace(/^<|>$/g, ''), line: l.line });
    const def = /^\s{0,3}\[[^\]]+\]:\s+(<[^>]*>|\S+)/.exec(t);
    if (def) out.push({ target: def[1]!.replace(/^<|>$/g, ''), line: l.line });
    for (const m of t.matchAll(/<(?:a|img|source)\s[^>]*\b(?:href|src|srcset)=["']([^"']+)["']/gi))
      out.push({ target: m[1]!, line: l.line });
  }
  return out;
}

const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');

/** Relative links and anchors of each doc that do not resolve. */
export function checkLinks(root: string, docs: Doc[]): Problem[] {
  const problems: Problem[] = [];
  const anchorCache = new Map<string, Set<string>>();
  const anchors = (file: string) => {
    let a = anchorCache.get(file);
    if (!a) anchorCache.set(file, (a = anchorsOf(readFileSync(join(root, file), 'utf8'))));
    return a;
  };
  for (const doc of docs) {
    for (const { target, line } of linksOf(doc.text)) {
      if (isExternal(target)) continue;
      const [pathPart = '', hash] = target.split('#', 2) as [string, string | undefined];
      let path: string;
      try {
        path = decodeURIComponent(pathPart.split('?')[0]!);
      } catch {
        path = pathPart;
      }
      const rel = path ? normalize(path.startsWith('/') ? path.slice(1) : join(dirname(doc.file), path)) : doc.file;
      const file = rel.split(sep).join('/');
      if (file === '..' || file.startsWith('../')) {
        problems.push({ file: doc.file, line, message: `link ${target}: outside the repository` });
        continue;
      }
      if (!existsSync(join(root, file))) {
        problems.push({ file: doc.file, line, message: `broken link ${target}: no such file ${file}` });
        continue;
      }
      if (hash === undefined || !hash || !file.endsWith('.md') || statSync(join(root, file)).isDirectory()) continue;
      let anchor = hash;
      try {
        anchor = decodeURIComponent(hash);
      } catch {
        // as written
      }
      if (!anchors(file).has(anchor.toLowerCase()))
        problems.push({ file: doc.file, line, message: `broken anchor ${target}: ${file} has no heading #${anchor}` });
    }
  }
  return problems;
}

/** npm's own commands (`npm ci`, `npm exec`…): not scripts. start, test, stop and restart run their script. */
const NPM_COMMANDS = new Set(
  (
    'access adduser audit bugs cache ci completion config dedupe deprecate diff dist-tag docs doctor edit exec ' +
    'explain explore find-dupes fund help hook i init install install-ci-test install-test link ll login logout ls ' +
    'org outdated owner pack ping pkg prefix profile prune publish query rebuild repo root sbom search shrinkwrap ' +
    'star stars team token uninstall unpublish unstar update version view whoami x'
  ).split(' '),
);
const SCRIPT_SHORTHANDS = new Set(['start', 'test', 't', 'stop', 'restart']);

/** `npm run X` anywhere, and `npm X` in code, that name no script (or no npm command). */
export function checkNpm(docs: Doc[], scripts: ReadonlySet<string>): Problem[] {
  const problems: Problem[] = [];
  for (const doc of docs) {
    for (const l of markdownLines(doc.text)) {
      const code = l.fenced ? [l.text] : codeSpans(l.text);
      for (const m of l.text.matchAll(/\bnpm[ \t]+(?:run|run-script)[ \t]+(?:--?[\w-]+[ \t]+)*([\w:.@/-]+)/g)) {
        const name = m[1]!.replace(/[.:]+$/, '');
        if (!scripts.has(name))
          problems.push({ file: doc.file, line: l.line, message: `npm run ${name}: package.json has no such script` });
      }
      for (const c of code)
        for (const m of c.matchAll(/(?:^|[\s;&|(])npm[ \t]+([a-z][\w:.-]*)/g)) {
          const cmd = m[1]!.replace(/[.:]+$/, '');
          if (cmd === 'run' || cmd === 'run-script' || NPM_COMMANDS.has(cmd)) continue;
          const script = cmd === 't' ? 'test' : cmd;
          if (SCRIPT_SHORTHANDS.has(cmd)) {
            if (!scripts.has(script))
              problems.push({
                file: doc.file,
                line: l.line,
                message: `npm ${cmd}: package.json has no ${script} script`,
              });
          } else
            problems.push({
              file: doc.file,
              line: l.line,
              message: `npm ${cmd}: not an npm command${scripts.has(cmd) ? ` (the script runs as npm run ${cmd})` : ''}`,
            });
        }
    }
  }
  return problems;
}

/**
 * CONSOLE_* names in the docs that the configuration table lacks, and variables of the table no doc names.
 * CHANGELOG.md is history: it may name a variable that was since renamed or removed, so only the docs are held
 * to the table.
 */
export function checkConfigVars(
  docs: Doc[],
  vars: readonly string[],
  tableFile = 'src/server/config-vars.ts',
): Problem[] {
  const problems: Problem[] = [];
  const known = new Set(vars);
  for (const doc of docs) {
    if (doc.file === 'CHANGELOG.md') continue;
    for (const l of markdownLines(doc.text))
      for (const m of l.text.matchAll(/\bCONSOLE_[A-Z0-9_]*/g)) {
        const name = m[0];
        // `CONSOLE_OIDC_*` names a family
        const ok = name.endsWith('_') ? vars.some((v) => v.startsWith(name)) : known.has(name);
        if (!ok)
          problems.push({
            file: doc.file,
            line: l.line,
            message: `${name}: not a variable the console reads (not in ${tableFile})`,
          });
      }
  }
  const all = docs.map((d) => d.text).join('\n');
  for (const v of vars)
    if (!new RegExp(String.raw`(?<![\w])${v}(?![\w])`).test(all))
      problems.push({ file: tableFile, line: 1, message: `${v}: read by the console but named in no doc` });
  return problems;
}

/** The front door stays short and every page stays readable: README ≤ 150 lines, every other page ≤ 400. */
export const MAX_LINES = { readme: 150, page: 400 };

export function checkLengths(docs: Doc[]): Problem[] {
  return docs.flatMap((d) => {
    const max = d.file === 'README.md' ? MAX_LINES.readme : MAX_LINES.page;
    const lines = d.text.split('\n').length - (d.text.endsWith('\n') ? 1 : 0);
    return lines > max
      ? [{ file: d.file, line: max + 1, message: `${lines} lines: at most ${max} (split it, or move detail to docs/)` }]
      : [];
  });
}

/** Every problem of the docs under root. */
export function checkDocs(root: string, opts: { vars?: readonly string[] } = {}): Problem[] {
  const docs = collectDocs(root);
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  const vars = opts.vars ?? CONFIG_VARS.map((v) => v.name);
  return [
    ...checkLinks(root, docs),
    ...checkNpm(docs, new Set(Object.keys(pkg.scripts ?? {}))),
    ...checkConfigVars(docs, vars),
    ...checkLengths(docs),
  ];
}

export function formatProblems(problems: Problem[]): string {
  return problems.map((p) => `${p.file}:${p.line}: ${p.message}`).join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const root = join(import.meta.dirname, '..');
  const problems = checkDocs(root);
  if (problems.length) {
    console.error(formatProblems(problems));
    console.error(`\ndocs check: ${problems.length} problem(s)`);
    process.exit(1);
  }
  console.log(`docs check: ${collectDocs(root).length} files, no problems (${relative(process.cwd(), root) || '.'})`);
}
