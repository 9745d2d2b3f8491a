// The checked-out tree of an Argo CD source at a commit, fetched once per commit and repository.
//
// Every Application of an ApplicationSet usually renders the same repository at the same commit with its own path
// and kustomize options (a name prefix per tenant), and each render fetched that commit again: a `git init`,
// `fetch --depth 1` and `checkout` per render (0.2 core-seconds on the console and the forge's pack each). A
// commit is immutable, so when the revision is a full commit id the tree is fetched once into a private cache and
// each render works on a copy (kustomize edits change it). A branch, tag or HEAD is fetched every time, as before:
// what it names moves.
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';

/** trees kept; the oldest used goes first */
export const ARGO_TREE_CACHE_ENTRIES = 32;

const filling = new Map<string, Promise<void>>();

/**
 * Puts the tree of `repoURL` at `revision` into `work` (an empty directory) and returns its commit id. `fetchInto`
 * fetches and checks out into a given empty directory, returning the commit id (the uncached way).
 */
export async function checkoutTree(
  repoURL: string,
  revision: string,
  work: string,
  cacheDir: string,
  fetchInto: (dir: string) => Promise<string>,
): Promise<string> {
  if (!/^[0-9a-f]{40}$/.test(revision)) return fetchInto(work);
  const key = `${createHash('sha256').update(repoURL).digest('hex').slice(0, 16)}-${revision}`;
  const dir = join(cacheDir, key);
  if (!existsSync(dir)) {
    let p = filling.get(key);
    if (!p) {
      p = fill(dir, fetchInto).finally(() => filling.delete(key));
      filling.set(key, p);
    }
    await p;
  }
  cpSync(dir, work, { recursive: true });
  const now = new Date();
  utimesSync(dir, now, now);
  return revision;
}

async function fill(dir: string, fetchInto: (dir: string) => Promise<string>): Promise<void> {
  const cacheDir = join(dir, '..');
  const tmp = mkdtempSync(join(cacheDir, '.fill-'));
  try {
    await fetchInto(tmp);
    rmSync(join(tmp, '.git'), { recursive: true, force: true });
    // another console process sharing the cache may have filled it meanwhile: either copy is the commit's tree
    if (existsSync(dir)) rmSync(tmp, { recursive: true, force: true });
    else {
      evict(cacheDir, ARGO_TREE_CACHE_ENTRIES - 1);
      renameSync(tmp, dir);
    }
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
}

/** removes all but the `keep` trees used last */
function evict(cacheDir: string, keep: number): void {
  const entries = readdirSync(cacheDir)
    .filter((e) => !e.startsWith('.'))
    .map((e) => ({ e, t: statSync(join(cacheDir, e)).mtimeMs }))
    .sort((a, b) => b.t - a.t);
  for (const { e } of entries.slice(keep)) rmSync(join(cacheDir, e), { recursive: true, force: true });
}
