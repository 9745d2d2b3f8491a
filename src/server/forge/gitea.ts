// A Forge over the Gitea API v1 (its shapes follow GitHub's REST v3: pulls, reviews, statuses,
// `user.login`, `merge_commit_sha`), plain fetch. The token lives only in this object's closure
// and in the Authorization header; messages carry the forge's own error text, never the token.
// Every request passes the one URL policy first (git/url-policy.ts: no private or metadata address
// unless allow-listed, the token over https only unless to an allow-listed loopback address), and a
// redirect is never followed.
import {
  failure,
  type Approval,
  type CommitState,
  type CommitStatus,
  type Forge,
  type ForgeResult,
  type MergedPullRequest,
  type OpenedPullRequest,
  type OpenPullRequest,
  type ProposedChange,
  type RepoRef,
} from './forge.ts';
import {
  assertTokenTransport,
  checkUrl,
  currentUrlPolicy,
  UnfetchableUrlError,
  type UrlPolicy,
} from '../git/url-policy.ts';

import { mergedPullRequestFields, obj, s, type Json } from './gitea-json.ts';
import { fetchCauseCode } from '../http/fetch-failure.ts';

export interface GiteaForgeOptions {
  /** e.g. http://127.0.0.1:3000/api/v1 */
  apiUrl: string;
  token: string;
  /** reads; default 10 s */
  timeoutMs?: number;
  /** writes (a commit runs Git hooks on the forge); default 30 s */
  writeTimeoutMs?: number;
  fetch?: typeof fetch;
  /** the URL policy (tests); default the console's, read at each request */
  policy?: UrlPolicy;
  /** pauses before a read is asked again (5xx, 429, reset); default 0.5 s, 2 s */
  retryDelaysMs?: number[];
}

function retryable(f: { status?: number; message: string }): boolean {
  return (f.status ?? 0) >= 500 || f.status === 429 || /ECONNRESET|UND_ERR_SOCKET|EPIPE/.test(f.message);
}

type Answer = { ok: true; status: number; body: unknown } | { ok: false; result: ForgeResult<never> };

export function giteaForge(opts: GiteaForgeOptions): Forge {
  const base = opts.apiUrl.replace(/\/+$/, '');
  const token = opts.token;
  const doFetch = opts.fetch ?? fetch;
  const readTimeoutMs = opts.timeoutMs ?? 10_000;
  const writeTimeoutMs = opts.writeTimeoutMs ?? 30_000;
  const retryDelaysMs = opts.retryDelaysMs ?? [500, 2_000];

  // reads are observations: a busy forge (5xx, 429, a reset connection) is asked again, twice, before it
  // counts as unreachable; not after a timeout (it had its time) nor a refused connection (it is down);
  // writes are not repeated (a failed write may have happened)
  async function call(method: string, path: string, body?: unknown, okStatuses = [200, 201, 204]): Promise<Answer> {
    let a = await callOnce(method, path, body, okStatuses);
    for (const delayMs of method === 'GET' ? retryDelaysMs : []) {
      if (a.ok || a.result.ok || a.result.state !== 'forge-unreachable' || !retryable(a.result)) break;
      await new Promise((r) => setTimeout(r, delayMs));
      a = await callOnce(method, path, body, okStatuses);
    }
    return a;
  }

  async function callOnce(method: string, path: string, body: unknown, okStatuses: number[]): Promise<Answer> {
    const timeoutMs = method === 'GET' ? readTimeoutMs : writeTimeoutMs;
    let target: string;
    try {
      const checked = await checkUrl(`${base}${path}`, 'http', opts.policy ?? currentUrlPolicy());
      assertTokenTransport(checked);
      target = checked.href;
    } catch (e) {
      if (!(e instanceof UnfetchableUrlError)) throw e;
      const why = e.message.replace(/^refusing /, '');
      return {
        ok: false,
        result: e.reason === 'unresolved' ? failure('forge-unreachable', why) : failure('url-refused', why),
      };
    }
    let r: Response;
    try {
      r = await doFetch(target, {
        method,
        redirect: 'manual',
        headers: {
          accept: 'application/json',
          authorization: `token ${token}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (e) {
      const cause = fetchCauseCode(e);
      const name = (e as Error).name;
      return {
        ok: false,
        result: failure(
          'forge-unreachable',
          name === 'TimeoutError' ? `no answer in ${timeoutMs} ms` : (cause ?? name),
        ),
      };
    }
    if (r.status >= 300 && r.status < 400) {
      await r.body?.cancel().catch(() => undefined);
      return {
        ok: false,
        result: failure(
          'url-refused',
          `the forge answered HTTP ${r.status} (a redirect), which is not followed`,
          r.status,
        ),
      };
    }
    const text = await r.text().catch(() => '');
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    if (okStatuses.includes(r.status)) return { ok: true, status: r.status, body: parsed };
    const msg = s(obj(parsed).message).slice(0, 300) || `HTTP ${r.status}`;
    if (r.status >= 500 || r.status === 429) return { ok: false, result: failure('forge-unreachable', msg, r.status) };
    if (r.status === 404) return { ok: false, result: failure('not-found', msg, r.status) };
    return { ok: false, result: failure('refused', msg, r.status) };
  }

  const repoPath = (repo: RepoRef) => `/repos/${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.name)}`;

  async function approvers(repo: RepoRef, number: number): Promise<ForgeResult<Approval[]>> {
    const r = await call('GET', `${repoPath(repo)}/pulls/${number}/reviews?limit=100`);
    if (!r.ok) return r.result;
    const latest = new Map<string, Json>();
    for (const rv of Array.isArray(r.body) ? r.body.map(obj) : []) {
      const state = s(rv.state).toUpperCase();
      // comments do not change a reviewer's verdict (as on GitHub)
      if (state === 'COMMENT' || state === 'COMMENTED' || state === 'PENDING' || state === 'REQUEST_REVIEW') continue;
      const login = s(obj(rv.user).login);
      if (login) latest.set(login, rv);
    }
    const out: Approval[] = [];
    for (const [login, rv] of latest) {
      if (s(rv.state).toUpperCase() !== 'APPROVED' || rv.dismissed === true) continue;
      out.push({
        login,
        ...(s(rv.submitted_at) ? { at: s(rv.submitted_at) } : {}),
        ...(s(rv.commit_id) ? { commit: s(rv.commit_id) } : {}),
      });
    }
    return { ok: true, value: out };
  }

  return {
    kind: 'gitea',

    async getJson(path) {
      if (!/^\/[^?#]*(\?[^#]*)?$/.test(path) || /(^|\/)\.\.?(\/|\?|$)/.test(path))
        return failure('refused', 'not an API path');
      const r = await call('GET', path);
      return r.ok ? { ok: true, value: r.body } : r.result;
    },

    async mergedPullRequest(repo, sha) {
      if (!/^[0-9a-f]{7,64}$/i.test(sha)) return failure('refused', 'not a commit id');
      const r = await call('GET', `${repoPath(repo)}/commits/${sha}/pull`);
      if (!r.ok) return r.result.ok === false && r.result.state === 'not-found' ? { ok: true, value: null } : r.result;
      const pr = obj(r.body);
      if (pr.merged !== true) return { ok: true, value: null };
      const number = Number(pr.number);
      const a = await approvers(repo, number);
      if (!a.ok) return a;
      const value: MergedPullRequest = { ...mergedPullRequestFields(pr, number, sha), approvers: a.value };
      return { ok: true, value };
    },

    async openPullRequest(repo, change: ProposedChange) {
      if (!change.files.length) return failure('refused', 'a change needs at least one file');
      // the current blob of each file on the base branch: update it, or create it when absent
      const files: Json[] = [];
      for (const f of change.files) {
        const cur = await call(
          'GET',
          `${repoPath(repo)}/contents/${f.path.split('/').map(encodeURIComponent).join('/')}?ref=${encodeURIComponent(change.baseBranch)}`,
        );
        if (!cur.ok && cur.result.ok === false && cur.result.state !== 'not-found') return cur.result;
        const sha = cur.ok ? s(obj(cur.body).sha) : '';
        if (f.delete) {
          // already absent on the base branch: nothing to delete
          if (sha) files.push({ operation: 'delete', path: f.path, sha });
          continue;
        }
        files.push({
          operation: sha ? 'update' : 'create',
          path: f.path,
          content: Buffer.from(f.content, 'utf8').toString('base64'),
          ...(sha ? { sha } : {}),
        });
      }
      if (!files.length) return failure('refused', 'the change is already on the base branch');
      const commit = await call('POST', `${repoPath(repo)}/contents`, {
        branch: change.baseBranch,
        new_branch: change.branch,
        message: change.commitMessage,
        files,
      });
      if (!commit.ok) return commit.result;
      const headCommit = s(obj(obj(commit.body).commit).sha);
      const pr = await call('POST', `${repoPath(repo)}/pulls`, {
        base: change.baseBranch,
        head: change.branch,
        title: change.title,
        body: change.body ?? '',
      });
      if (!pr.ok) return pr.result;
      const p = obj(pr.body);
      const value: OpenedPullRequest = {
        number: Number(p.number),
        url: s(p.html_url),
        branch: change.branch,
        headCommit: headCommit || s(obj(p.head).sha),
      };
      return { ok: true, value };
    },

    async openPullRequests(repo, baseBranch, headPrefix) {
      const r = await call('GET', `${repoPath(repo)}/pulls?state=open&sort=newest&limit=50`);
      if (!r.ok) return r.result;
      const value: OpenPullRequest[] = (Array.isArray(r.body) ? r.body.map(obj) : [])
        .filter((p) => s(obj(p.base).ref) === baseBranch && s(obj(p.head).ref).startsWith(headPrefix))
        .map((p) => ({
          number: Number(p.number),
          url: s(p.html_url),
          branch: s(obj(p.head).ref),
          headCommit: s(obj(p.head).sha),
          body: s(p.body),
        }));
      return { ok: true, value };
    },

    async setCommitStatus(repo, sha, st: CommitStatus) {
      if (!/^[0-9a-f]{7,64}$/i.test(sha)) return failure('refused', 'not a commit id');
      const r = await call('POST', `${repoPath(repo)}/statuses/${sha}`, {
        state: st.state,
        context: st.context,
        description: st.description ?? '',
        ...(st.targetUrl ? { target_url: st.targetUrl } : {}),
      });
      return r.ok ? { ok: true, value: undefined } : r.result;
    },

    async commitStatuses(repo, sha) {
      if (!/^[0-9a-f]{7,64}$/i.test(sha)) return failure('refused', 'not a commit id');
      const r = await call('GET', `${repoPath(repo)}/commits/${sha}/statuses?limit=100`);
      if (!r.ok) return r.result;
      // newest first per context, as both Gitea and GitHub list them
      const seen = new Set<string>();
      const out: CommitStatus[] = [];
      const list = (Array.isArray(r.body) ? r.body.map(obj) : []).sort((a, b) =>
        s(b.updated_at || b.created_at).localeCompare(s(a.updated_at || a.created_at)),
      );
      for (const x of list) {
        const context = s(x.context);
        if (seen.has(context)) continue;
        seen.add(context);
        out.push({
          state: (s(x.status) || s(x.state)) as CommitState,
          context,
          ...(s(x.description) ? { description: s(x.description) } : {}),
          ...(s(x.target_url) ? { targetUrl: s(x.target_url) } : {}),
          ...(s(obj(x.creator).login) ? { creator: s(obj(x.creator).login) } : {}),
          ...(s(x.updated_at) ? { updatedAt: s(x.updated_at) } : {}),
        });
      }
      return { ok: true, value: out };
    },
  };
}
