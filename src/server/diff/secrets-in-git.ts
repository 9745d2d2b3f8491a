// Where a render's Secrets come from in Git (issue 26, part 2): the file of each Secret document and of each
// kustomize secretGenerator, found by a bounded walk of the source tree (.git and symlinks skipped), and how
// Git holds each value (SOPS-encrypted or plaintext). Values are never kept: only names, files and keys.
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { secretKeysInGit, sopsMetaOf, type SecretInGit } from '../../domain/secrets-in-git.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);
const strs = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** The keys a secretGenerator entry makes: literals `K=v`, files `K=path` or `path`, and env files' keys. */
function generatorKeys(g: Obj, read: (p: string) => string | undefined): string[] {
  const keys = strs(g.literals).map((l) => l.slice(0, Math.max(0, l.indexOf('='))) || l);
  for (const f of strs(g.files)) keys.push(f.includes('=') ? f.slice(0, f.indexOf('=')) : (f.split('/').pop() ?? f));
  for (const env of [...strs(g.envs), ...(typeof g.env === 'string' ? [g.env] : [])])
    for (const line of (read(env) ?? '').split('\n'))
      if (line.includes('=') && !line.trimStart().startsWith('#')) keys.push(line.slice(0, line.indexOf('=')).trim());
  return [...new Set(keys.filter(Boolean))].sort();
}

function inFile(root: string, path: string, text: string): SecretInGit[] {
  const out: SecretInGit[] = [];
  let docs: ReturnType<typeof parseAllDocuments>;
  try {
    docs = parseAllDocuments(text);
  } catch {
    return out;
  }
  const file = relative(root, path);
  const read = (p: string) => readInTree(root, path, p);
  for (const d of Array.isArray(docs) ? docs : [docs]) {
    let v: unknown;
    try {
      v = d.toJS({ maxAliasCount: 100 }) as unknown;
    } catch {
      continue;
    }
    if (!isObj(v)) continue;
    if (v.kind === 'Secret' && isObj(v.metadata) && typeof v.metadata.name === 'string') {
      const sops = sopsMetaOf(v);
      out.push({
        name: v.metadata.name,
        namespace: typeof v.metadata.namespace === 'string' ? v.metadata.namespace : null,
        file,
        keys: secretKeysInGit(v),
        sops: sops ?? null,
      });
    }
    if (Array.isArray(v.secretGenerator))
      for (const g of v.secretGenerator.filter(isObj))
        if (typeof g.name === 'string')
          out.push({
            name: g.name,
            namespace: typeof g.namespace === 'string' ? g.namespace : null,
            file,
            generator: true,
            keys: generatorKeys(g, read).map((key) => ({ key, git: 'plaintext' as const })),
            sops: null,
          });
  }
  return out;
}

/**
 * Calls `visit` with every YAML/JSON file of a source tree (and kustomize's extension-less `kustomization`): a
 * bounded walk (5,000 entries, 32 MiB read, 1 MiB a file), .git and symlinks skipped, unreadable entries ignored.
 */
export function forEachYamlFile(root: string, visit: (path: string, text: string) => void): void {
  const stack = [root];
  let visited = 0;
  let bytes = 0;
  while (stack.length && visited < 5000 && bytes < 32 << 20) {
    const p = stack.pop() as string;
    visited++;
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(p);
    } catch {
      continue;
    }
    if (st.isDirectory()) {
      try {
        for (const e of readdirSync(p)) if (e !== '.git') stack.push(join(p, e));
      } catch {
        /* unreadable: skip */
      }
    } else if (
      st.isFile() &&
      st.size <= 1 << 20 &&
      /\.(ya?ml|json)$|^kustomization$/i.test(p.split('/').at(-1) ?? '')
    ) {
      bytes += st.size;
      try {
        visit(p, readFileSync(p, 'utf8'));
      } catch {
        /* unreadable: skip */
      }
    }
  }
}

/**
 * A file a kustomization names, relative to the file that names it: read only inside the tree and only a regular
 * file of at most 1 MiB (never a symlink out of the tree, a FIFO or /dev/zero); undefined otherwise.
 */
export function readInTree(root: string, from: string, p: string): string | undefined {
  const abs = resolve(dirname(from), p);
  if (relative(root, abs).startsWith('..')) return undefined;
  try {
    const st = lstatSync(abs);
    return st.isFile() && st.size <= 1 << 20 ? readFileSync(abs, 'utf8') : undefined;
  } catch {
    return undefined;
  }
}

/** Every Secret document and secretGenerator in a source tree. */
export function secretsInGitTree(root: string): SecretInGit[] {
  const out: SecretInGit[] = [];
  forEachYamlFile(root, (p, text) => {
    if (/\bkind:\s*Secret\b|"kind":\s*"Secret"|secretGenerator/.test(text)) out.push(...inFile(root, p, text));
  });
  return out;
}

/**
 * The rendered Secrets with where Git holds them: each matched to its document (same name, and namespace when the
 * document sets one) or generator (the name plus kustomize's hash suffix); keys and encryption from the render.
 */
export function renderedSecretsInGit(rendered: Obj[], tree: SecretInGit[]): SecretInGit[] {
  const out: SecretInGit[] = [];
  for (const o of rendered) {
    if (o.kind !== 'Secret' || !isObj(o.metadata) || typeof o.metadata.name !== 'string') continue;
    const name = o.metadata.name;
    const namespace = typeof o.metadata.namespace === 'string' ? o.metadata.namespace : null;
    const fits = (s: SecretInGit) => !s.namespace || !namespace || s.namespace === namespace;
    const doc =
      tree.find((s) => !s.generator && s.name === name && fits(s)) ??
      tree.find((s) => s.generator && (s.name === name || name.startsWith(`${s.name}-`)) && fits(s));
    const sops = sopsMetaOf(o) ?? doc?.sops ?? null;
    out.push({
      name,
      namespace,
      file: doc?.file ?? null,
      ...(doc?.generator ? { generator: true } : {}),
      // a generator's values are Git's plaintext whatever the render shows (base64 is not encryption)
      keys: doc?.generator ? doc.keys : secretKeysInGit(o),
      sops,
    });
  }
  return out;
}
