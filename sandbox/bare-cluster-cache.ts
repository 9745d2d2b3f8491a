// The bare cluster's cache (sandbox/bare-cluster.ts): a pristine, fully set-up bare cluster — etcd's data directory,
// cleanly stopped after the CRDs, namespaces, RBAC and prune policy were applied and every custom resource could be
// watched, and the PKI that matches it (the CA, the serving and client certs, the service-account signing key) —
// under ~/.cache/gitops-console/bare-cluster/<key>/. The key is a hash of everything that made it: the etcd and
// kube-apiserver binaries, every file applied, the topology and the set-up's version. Nothing in it names a port or
// a path (the apiserver reconciles the one object that names its port, the `kubernetes` Service, when it starts),
// so a copy starts on fresh ports in a directory of its own.
//
// An entry is written whole into a temporary directory and renamed into place, so a concurrent run sees either no
// entry or a complete one; a run that loses the race throws its copy away.
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { alive } from './procs.ts';

/** Bump when what startBareCluster writes into a fresh cluster changes in code (not in a file the key hashes). */
export const BARE_SETUP_VERSION = 1;

/** What a cache entry holds: directories of a bare cluster's directory. */
const CACHED = ['etcd', 'pki'];

export const CACHE_ROOT = join(
  process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'),
  'gitops-console',
  'bare-cluster',
);

/**
 * The cache key: a hash of the binaries, every file applied (a directory: every file in it, as `kubectl -f <dir>`
 * reads it; each named by its folder and file name, so the checkout's location is not in it), the topology and
 * BARE_SETUP_VERSION.
 */
export function bareCacheKey(binaries: string[], files: string[], topology: Record<string, string[]>): string {
  const h = createHash('sha256');
  h.update(JSON.stringify({ version: BARE_SETUP_VERSION, topology }));
  for (const b of binaries) h.update(`\0bin ${basename(b)} ${binaryHash(b)}`);
  for (const f of files) {
    const paths = statSync(f).isDirectory()
      ? readdirSync(f)
          .sort()
          .map((n) => join(f, n))
          .filter((p) => statSync(p).isFile())
      : [f];
    // each file by its folder and name, not its absolute path: a fresh clone elsewhere (CI's) hits the same entry
    for (const p of paths) h.update(`\0file ${basename(dirname(p))}/${basename(p)}\0`).update(readFileSync(p));
  }
  return h.digest('hex').slice(0, 20);
}

/**
 * A binary's content hash, remembered by its real path, size and modification time (hashing ~130 MB costs seconds on
 * a loaded machine; a rebuilt binary has a new mtime).
 */
function binaryHash(path: string): string {
  const real = realpathSync(path);
  const st = statSync(real);
  const id = `${real} ${st.size} ${st.mtimeMs}`;
  const memo = join(CACHE_ROOT, 'binaries.json');
  let known: Record<string, string> = {};
  try {
    known = JSON.parse(readFileSync(memo, 'utf8')) as Record<string, string>;
  } catch {
    /* none yet */
  }
  const hit = known[id];
  if (hit) return hit;
  const hash = createHash('sha256').update(readFileSync(real)).digest('hex');
  mkdirSync(CACHE_ROOT, { recursive: true });
  const tmp = `${memo}.${process.pid}`;
  writeFileSync(tmp, JSON.stringify({ ...known, [id]: hash }, null, 1));
  renameSync(tmp, memo);
  return hash;
}

/** Copies a cached entry's directories into `dir`; false (with the reason) when there is none or the copy fails. */
export function restoreBareCache(key: string, dir: string): { ok: true } | { ok: false; why: string } {
  const entry = join(CACHE_ROOT, key);
  if (!existsSync(entry)) return { ok: false, why: 'no cached cluster' };
  try {
    for (const d of CACHED) cpSync(join(entry, d), join(dir, d), { recursive: true, errorOnExist: true, force: false });
    return { ok: true };
  } catch (e) {
    for (const d of CACHED) rmSync(join(dir, d), { recursive: true, force: true });
    return { ok: false, why: `copy failed: ${(e as Error).message}` };
  }
}

/** Stores `dir`'s etcd data (etcd stopped cleanly) and PKI as entry `key`: copied aside, then renamed into place. */
export function saveBareCache(key: string, dir: string): void {
  mkdirSync(CACHE_ROOT, { recursive: true });
  clearAbandoned();
  const tmp = join(CACHE_ROOT, `.tmp-${process.pid}-${Date.now().toString(36)}`);
  try {
    for (const d of CACHED) cpSync(join(dir, d), join(tmp, d), { recursive: true });
    writeFileSync(join(tmp, 'cached.json'), JSON.stringify({ key, at: new Date().toISOString() }) + '\n');
    renameSync(tmp, join(CACHE_ROOT, key));
  } catch (e) {
    // another run stored the same key first: its entry is as good as ours
    if (!existsSync(join(CACHE_ROOT, key))) throw e;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Removes an entry that did not start (renamed away first, so no run copies half of it). */
export function dropBareCache(key: string): void {
  const gone = join(CACHE_ROOT, `.tmp-${process.pid}-drop-${Date.now().toString(36)}`);
  try {
    renameSync(join(CACHE_ROOT, key), gone);
  } catch {
    return;
  }
  rmSync(gone, { recursive: true, force: true });
}

/** Temporary directories of runs that died while writing. */
function clearAbandoned(): void {
  for (const n of readdirSync(CACHE_ROOT)) {
    const pid = /^\.tmp-(\d+)-/.exec(n)?.[1];
    if (pid && !alive(Number(pid))) rmSync(join(CACHE_ROOT, n), { recursive: true, force: true });
  }
}
