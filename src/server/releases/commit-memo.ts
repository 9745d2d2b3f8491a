// What a commit says (author, committer, signature, parents, message) does not change: the recorder reads each
// (repository, commit id) once. In a monorepo every app's release is the same commit, so a console that starts with
// N apps on one repository read it N times (two git processes each: 100 of the 150 git runs an e2e journey caused,
// 2026-12-06). Reads in flight are shared; failures are not kept (the next release read tries again); a branch or
// tag name is never kept (only a full commit id names one commit). The signature's status (%G?) is judged with this
// process's git configuration, which does not change while it runs.

import { Lru } from '../diff/index.ts';

const FULL_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

export class CommitMemo<T> {
  private readonly kept: Lru<string, Promise<T>>;

  constructor(
    private readonly load: (url: string, sha: string) => Promise<T>,
    /** the commits kept, the least recently read dropped first */
    max = 1000,
  ) {
    this.kept = new Lru({ maxEntries: max });
  }

  read(url: string, sha: string): Promise<T> {
    if (!FULL_ID.test(sha)) return this.load(url, sha);
    const key = `${sha} ${url}`;
    const hit = this.kept.get(key);
    if (hit) return hit;
    const p = this.load(url, sha);
    this.kept.set(key, p);
    p.catch(() => {
      if (this.kept.get(key) === p) this.kept.delete(key);
    });
    return p;
  }

  get size(): number {
    return this.kept.size;
  }
}
