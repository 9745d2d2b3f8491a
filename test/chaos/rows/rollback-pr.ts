// Chaos row: admin rolls the row's Flux app back to an earlier recorded release — the console opens a pull request
// on the forge whose branch has the app's path as it was (src/server/releases/rollback.ts; never a push to main).
// The estate's main is at the newer of two releases the acting console recorded. Invariants, from the forge and Git:
// main never moves; every open rollback PR and branch names an intent of the cell (the PR body's `evidence #N`, the
// commit's `Evidence: #N`), at most one PR per intent; `completed` ⇒ exactly one PR, the one the outcome names, whose
// branch has the app's path exactly as at the older release and changes nothing outside it; `failed` ⇒ no PR, and a
// branch without a PR only if the failure record names it; no intent ⇒ nothing on the forge and an error answer;
// `interrupted` ⇒ a second request through the survivor succeeds and does not open a duplicate PR beside the first
// (rollback.ts opens a new branch per request, so it must at least name the first: it does not, and this says so).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../../../sandbox/procs.ts';
import {
  changedBetween,
  closePullRequest,
  deleteBranch,
  forgeApi,
  forgeBranchHead,
  readRepoFile,
  repoHead,
  writeRepoFile,
} from '../../../sandbox/scenario.ts';
import { as } from '../../support/auth.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../../support/own-estate.ts';
import { describeAnswer } from '../cell.ts';
import { exportChain, type Record as EvidenceRecord } from '../invariants.ts';
import type { ActionRow, Answer, Replica } from '../types.ts';
import { answered } from './freeze-start.ts';

const PATH = 'overlays/dev';
const OVERLAY = `${PATH}/kustomization.yaml`;
const TTS = /(- name: tts-gateway\n\s+count: )(\d+)/;

export interface RollbackState {
  estate: Estate;
  /** the tts-gateway replicas in the overlay at each commit of main (the releases' one difference) */
  count: Map<string, number>;
  /** the release rolled back to, and main's (both recorded by the acting console): set by prepare() */
  older: string;
  newer: string;
}

/** a rollback branch (and, for a PR, its number, head commit and body), with the intent its text names */
type Branch = { name: string; intent?: number };
type Pr = Branch & { number: number; head: string; body: string };
const named = (re: RegExp, text: string) => {
  const m = re.exec(text);
  return m ? { intent: Number(m[1]) } : {};
};

async function listed(e: Estate, what: string): Promise<Array<{ [k: string]: unknown }>> {
  const r = await forgeApi(
    'developer',
    'GET',
    `/repos/${e.forge.repo.owner}/${e.forge.repo.name}/${what}`,
    undefined,
    e.forge,
  );
  if (r.status !== 200) throw new Error(`forge ${what}: HTTP ${r.status}`);
  return r.json;
}

/** The open rollback PRs on the estate's repo (the body names the intent: `evidence #N`). */
const rollbackPrs = async (e: Estate): Promise<Pr[]> =>
  (await listed(e, 'pulls?state=open&limit=50'))
    .map((p) => {
      const head = (p.head ?? {}) as { ref?: string; sha?: string };
      const body = String(p.body ?? '');
      return {
        number: Number(p.number),
        name: head.ref ?? '',
        head: head.sha ?? '',
        body,
        ...named(/evidence #(\d+)\)/, body),
      };
    })
    .filter((p) => p.name.startsWith('rollback/'));

/** The rollback branches on the estate's repo (the head commit's message names the intent: `Evidence: #N`). */
const rollbackBranches = async (e: Estate): Promise<Branch[]> =>
  (await listed(e, 'branches?limit=50'))
    .map((b) => ({
      name: String(b.name),
      ...named(/Evidence: #(\d+)/, String((b.commit as { message?: string })?.message)),
    }))
    .filter((b) => b.name.startsWith('rollback/'));

/** The releases of the app `r` lists with a recorded change state (what a rollback may target), newest first. */
async function recorded(r: Replica, e: Estate): Promise<string[]> {
  const res = await as(r.admin, r.base, `/api/apps/${e.appId()}/releases`);
  if (res.status !== 200) throw new Error(`releases: ${res.status} ${res.text.slice(0, 120)}`);
  const rel = res.body.releases as Array<{ sha: string; states: Array<{ name: string; seq?: number }> }>;
  return rel.filter((x) => x.states.some((st) => st.name === 'change' && st.seq !== undefined)).map((x) => x.sha);
}

const waitRecorded = (r: Replica, e: Estate, sha: string) =>
  waitFor(`release ${sha.slice(0, 8)} recorded by ${r.name}`, async () => (await recorded(r, e)).includes(sha), {
    timeoutMs: 60_000,
    intervalMs: 1000,
  });

function pushCount(s: RollbackState, n: number): string {
  const sha = s.estate.push(`chaos: ${n} TTS gateways`, (w) =>
    writeRepoFile(w, OVERLAY, readFileSync(join(w, OVERLAY), 'utf8').replace(TTS, `$1${n}`)),
  );
  s.count.set(sha, n);
  return sha;
}

/** What is wrong with a rollback PR's branch: the app's path not as at `older`, or anything outside it changed. */
function branchProblems(s: RollbackState, pr: Pr): string[] {
  const under = (f: string) => f === PATH || f.startsWith(`${PATH}/`);
  const out: string[] = [];
  const inPath = changedBetween(s.older, pr.head, s.estate.state).filter(under);
  if (inPath.length)
    out.push(`PR #${pr.number}'s ${PATH} differs from release ${s.older.slice(0, 8)}: ${inPath.join(', ')}`);
  const outside = changedBetween(s.newer, pr.head, s.estate.state).filter((f) => !under(f));
  if (outside.length) out.push(`PR #${pr.number} changes files outside ${PATH}: ${outside.join(', ')}`);
  return out;
}

const nums = (ps: Pr[]) => ps.map((p) => `#${p.number}`).join(', ') || 'none';
const ok = (a: Answer): a is { status: number; body: unknown; text: string } => !('error' in a) && a.status < 400;
const request = (s: RollbackState, r: Replica) =>
  answered(r, `/api/apps/${s.estate.appId()}/releases/${s.older}/rollback`, { reason: 'chaos: rollback PR' });

export const rollbackPr: ActionRow<RollbackState> = {
  id: 'rollback-pr',
  label: 'rollback PR',
  intentType: 'release.rollback-requested',
  points: ['after-intent', 'after-act'],
  cluster: (s) => s.estate.cluster,
  async setup() {
    const estate = await ownEstate({ name: 'chaos-rbk', env: 'dev', files: digitalHumanTemplate('dev') });
    const s: RollbackState = { estate, count: new Map([[estate.seedCommit, 1]]), older: '', newer: '' };
    try {
      // two releases of the app (a replica already running records them; one started later records the newer)
      for (const n of [2, 3]) await estate.waitApplied(pushCount(s, n), undefined, 60_000);
    } catch (e) {
      await estate.teardown().catch(() => undefined);
      throw e;
    }
    return s;
  },
  teardown: (s) => s.estate.teardown(),
  async prepare(s, c) {
    const e = s.estate;
    // no rollback PR or branch left by the last cell: whatever is there at check() is this cell's
    for (const pr of await rollbackPrs(e)) await closePullRequest(pr.number, e.forge);
    for (const b of await rollbackBranches(e)) deleteBranch(b.name, e.state);
    // main at a release the actor's store recorded, and an older recorded release that differs under the path
    let head = repoHead(e.state);
    if (!s.count.has(head)) s.count.set(head, Number(TTS.exec(readRepoFile(OVERLAY, 'main', e.state))?.[2] ?? 0));
    await waitRecorded(c.actor, e, head);
    const differs = (sha: string) => s.count.has(sha) && s.count.get(sha) !== s.count.get(head);
    let older = (await recorded(c.actor, e)).find((sha) => sha !== head && differs(sha));
    if (!older) {
      // a console whose store saw only main's release (started after setup, or a new SQLite replica): one more
      older = head;
      head = pushCount(s, s.count.get(head) === 2 ? 3 : 2);
      await e.waitApplied(head, undefined, 60_000);
      await waitRecorded(c.actor, e, head);
    }
    s.older = older;
    s.newer = head;
  },
  perform: (s, c) => request(s, c.actor),
  async check(s, c, run) {
    const e = s.estate;
    const broken: string[] = [];
    const reader = c.reader();
    const { records } = await exportChain(reader);
    const outcome = (seq: number): EvidenceRecord | undefined =>
      records.find((r) => r.type.startsWith('action.') && r.type !== 'action.refused' && r.data.intentSeq === seq);
    const prs = await rollbackPrs(e);
    const branches = await rollbackBranches(e);
    const main = await forgeBranchHead('main', e.forge);
    if (main !== s.newer)
      broken.push(`main moved from ${s.newer.slice(0, 8)} to ${main.slice(0, 8)}: a rollback pushed to it`);
    for (const p of prs)
      if (p.intent === undefined || !run.intents.includes(p.intent))
        broken.push(`rollback PR #${p.number} names no intent of this cell (evidence #${p.intent ?? '?'})`);
    for (const b of branches)
      if (b.intent === undefined || !run.intents.includes(b.intent))
        broken.push(`rollback branch ${b.name} names no intent of this cell`);
    if (run.intents.length === 0) {
      if (prs.length || branches.length)
        broken.push(`no intent, yet ${prs.length} PRs and ${branches.length} branches`);
      if (ok(run.answer)) broken.push(`no intent recorded, yet the console answered ${run.answer.status}`);
      // a refusal means the start state was wrong (no recorded older release, nothing to roll back), not the fault
      if (!('error' in run.answer) && [404, 409].includes(run.answer.status))
        broken.push(`refused before any fault could matter: ${run.answer.text.slice(0, 120)}`);
    }
    if (ok(run.answer)) {
      const said = run.answer.body as { intentSeq?: number; pullRequest?: { number?: number } };
      const type = said.intentSeq === undefined ? undefined : outcome(said.intentSeq)?.type;
      if (type !== 'action.completed')
        broken.push(`the console answered ${run.answer.status}, but its intent's outcome is ${type}`);
      if (!prs.some((p) => p.number === said.pullRequest?.number && p.intent === said.intentSeq))
        broken.push(
          `the answer names PR #${said.pullRequest?.number}, not open on the forge for intent ${said.intentSeq}`,
        );
    }
    for (const seq of run.intents) {
      const o = outcome(seq);
      const mine = prs.filter((p) => p.intent === seq);
      const loose = branches.filter((b) => b.intent === seq && !mine.some((p) => p.name === b.name));
      if (mine.length > 1) broken.push(`intent ${seq}: ${mine.length} rollback PRs (${nums(mine)})`);
      // a branch pushed without its PR is acceptable only where the outcome's record names it
      if (o && o.type !== 'action.interrupted')
        for (const b of loose)
          if (!JSON.stringify(o.data).includes(b.name))
            broken.push(`intent ${seq}: branch ${b.name} has no PR, unrecorded`);
      for (const p of mine) broken.push(...branchProblems(s, p));
      if (o?.type === 'action.completed') {
        const prNo = (o.data.pullRequest as { number?: number } | undefined)?.number;
        if (mine.length !== 1 || mine[0]?.number !== prNo)
          broken.push(`intent ${seq} completed naming PR #${prNo}, but the forge has ${nums(mine)}`);
        if (!('error' in run.answer) && run.answer.status >= 400)
          broken.push(`intent ${seq} completed, but the console answered ${run.answer.status}`);
      } else if ((o?.type === 'action.failed' || o?.type === 'action.voided') && mine.length) {
        broken.push(`intent ${seq} ${o.type}, yet PR ${nums(mine)} is open`);
      } else if (o?.type === 'action.interrupted') {
        // what the dead replica left is on the forge; the survivor must be able to finish the job without doubling it
        const retry = await request(s, reader);
        if (!ok(retry)) {
          broken.push(`after interrupted intent ${seq}, the retry through ${reader.name}: ${describeAnswer(retry)}`);
          continue;
        }
        const r = retry.body as { intentSeq: number; pullRequest: { number: number } };
        const now = await rollbackPrs(e);
        const second = now.find((p) => p.number === r.pullRequest.number);
        if (!second) broken.push(`the retry's PR #${r.pullRequest.number} is not open on the forge`);
        else broken.push(...branchProblems(s, second));
        if (now.filter((p) => p.intent === r.intentSeq).length !== 1)
          broken.push(`the retry (intent ${r.intentSeq}) has not exactly one PR`);
        for (const first of mine)
          if (
            first.number !== r.pullRequest.number &&
            !new RegExp(`#${first.number}\\b`).test(`${retry.text}\n${second?.body ?? ''}`)
          )
            broken.push(
              `after interrupted intent ${seq} (its PR #${first.number} open), the retry opened a duplicate PR #${r.pullRequest.number} that does not name it`,
            );
      }
    }
    return broken;
  },
};
