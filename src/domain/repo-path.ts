// Paths inside a Git repository: one rule for "stays in the repository", used by the freeze write-back, the
// rollback and the renderer's path checks alike.

/**
 * Normalises a repo-relative POSIX path (`./a/../b/` → `b`, root or `.` → ``); `undefined` when it leaves the
 * repository (more `..` than directories above it). A leading `/` is taken as the repository root.
 */
export function normalizeRepoPath(p: string): string | undefined {
  const out: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length === 0) return undefined;
      out.pop();
    } else out.push(part);
  }
  return out.join('/');
}

/** `rel` resolved against the repo directory `dir`; `undefined` when absolute or when it leaves the repository. */
export const joinRepoPath = (dir: string, rel: string): string | undefined =>
  rel.startsWith('/') ? undefined : normalizeRepoPath(dir === '' ? rel : `${dir}/${rel}`);
