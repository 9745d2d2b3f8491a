// Chaos row: release recording, each state (issue 16). The release recorder (src/server/releases/recorder.ts; one
// replica records, under CONSOLE_RECORDER_LEASE) observes a new commit of a Flux app of the row's own estate and
// records its states (change, review, artifact, render, validation, reconcile, health, verification) as evidence
// observations, not through recorder.act: no intent, so the matrix injects each fault once, in place while the
// commit is fetched, applied and recorded. prepare() pushes the commit (before the fault: a stopped forge takes no
// push); perform() makes Flux fetch and apply it while the fault lasts. Invariants, from outside: once the fault
// healed, the survivor (c.reader()) shows the release of that commit with every state recorded (none pending, the
// review read again once the forge answers, the reconcile `ok` when Flux — read as admin — applied it); each state
// the console shows is a record of the exported chain; no state of that commit is recorded twice (the same status
// and reason twice: two replicas recording, or a recorder that forgot what it recorded); the chain verifies.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { waitFor } from '../../../sandbox/procs.ts';
import { RELEASE_EVIDENCE_TYPES } from '../../../src/domain/release.ts';
import { getJson, writeRepoFile } from '../../../sandbox/scenario.ts';
import { bin, KUBECONFIG_PATH, mustState } from '../../../sandbox/state.ts';
import { as } from '../../support/auth.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../../support/own-estate.ts';
import type { Record as EvidenceRecord } from '../invariants.ts';
import { exportChain } from '../invariants.ts';
import type { ActionRow, Answer, Replica } from '../types.ts';

interface RowState {
  estate: Estate;
  /** the commit prepare() pushed for the cell, recorded while the fault lasts */
  sha?: string;
}

interface StateView {
  name: string;
  status: string;
  why?: string;
  seq?: number;
}

type Kustomization = {
  status?: { lastAppliedRevision?: string; conditions?: Array<{ type: string; status: string }> };
};

const CONFIG = 'base/render-worker-config.yaml';
/** the states the recorder records for a Flux app of one environment (no promotion: no earlier environment) */
const STATES = ['change', 'review', 'artifact', 'render', 'validation', 'reconcile', 'health', 'verification'];
const TYPES = new Set(RELEASE_EVIDENCE_TYPES);

/** the seed's render-worker ConfigMap with one more key whose value each cell changes */
const configMap = (value: string) =>
  `${(digitalHumanTemplate('dev')[CONFIG] ?? '').trimEnd()}\n  chaos-release: "${value}"\n`;

const run = promisify(execFile);

/**
 * kubectl as admin in a child process with a short request timeout: never the in-process synchronous client, which
 * would hold the runner's event loop (and the cell's heal timer) for a minute against a stopped apiserver.
 */
async function kubectlAsync(cluster: string, args: string[]): Promise<string> {
  const kc = mustState().clusters.find((c) => c.name === cluster)?.kubeconfig ?? KUBECONFIG_PATH;
  const { stdout } = await run(bin('kubectl'), ['--kubeconfig', kc, '--request-timeout=5s', ...args], {
    encoding: 'utf8',
    timeout: 10_000,
  });
  return stdout;
}

/** Whether Flux applied `sha` (or a later push of the estate) and is Ready, as kubectl reads it. */
function applied(k: Kustomization, e: Estate, sha: string): boolean {
  const rev = k.status?.lastAppliedRevision ?? '';
  const ready = k.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  return ready && e.atOrAfter(sha).some((c) => rev.endsWith(c));
}

/** Asks Flux (at most every 5 s) to fetch and apply now: the estate's interval is 10 minutes. */
function nudger(e: Estate): () => Promise<void> {
  let last = 0;
  return async () => {
    if (Date.now() - last < 5000) return;
    last = Date.now();
    const at = `reconcile.fluxcd.io/requestedAt=${new Date().toISOString()}`;
    for (const obj of [`gitrepository/${e.source}`, `kustomization/${e.kustomization()}`])
      await kubectlAsync(e.cluster, ['-n', 'flux-system', 'annotate', '--overwrite', obj, at]).catch(() => undefined);
  };
}

/** Until Flux applied `sha` (≤ `timeoutMs`, nudging it); false when it did not, never throws. */
async function appliedWithin(e: Estate, sha: string, timeoutMs: number): Promise<boolean> {
  const nudge = nudger(e);
  return waitFor(
    `Flux applied ${sha.slice(0, 8)}`,
    async () => {
      await nudge();
      const out = await kubectlAsync(e.cluster, [
        '-n',
        'flux-system',
        'get',
        'kustomization',
        e.kustomization(),
        '-o',
        'json',
      ]);
      return applied(JSON.parse(out) as Kustomization, e, sha);
    },
    { timeoutMs, intervalMs: 1000 },
  ).then(
    () => true,
    () => false,
  );
}

/** The states `r` shows for the release of `sha` (undefined: no such release). */
async function releaseStates(r: Replica, e: Estate, sha: string): Promise<StateView[] | undefined> {
  const res = await as(r.admin, r.base, `/api/apps/${e.appId()}/releases`);
  if (res.status !== 200) throw new Error(`GET releases answered ${res.status}: ${res.text.slice(0, 200)}`);
  const list = res.body.releases as Array<{ sha: string; states: StateView[] }>;
  return list.find((x) => x.sha === sha)?.states;
}

/** What is still missing of the release (empty: every state recorded, as the recorder follows it to its end). */
function missing(states: StateView[] | undefined): string[] {
  if (!states) return ['the release itself'];
  const by = new Map(states.map((s) => [s.name, s]));
  const out: string[] = [];
  for (const name of STATES) {
    if (name === 'validation' && by.get('render')?.status !== 'ok') continue;
    const s = by.get(name);
    if (!s || s.status === 'pending') out.push(name);
    // the forge is back: the recorder asks again every 20 s while it follows the release
    else if (name === 'review' && s.status === 'unknown') out.push(`review (still unknown: ${s.why ?? ''})`);
  }
  return out;
}

/** Until `r` shows every state of the release of `sha` (nudging Flux meanwhile); what was still missing. */
async function complete(
  r: Replica,
  e: Estate,
  sha: string,
  timeoutMs: number,
): Promise<{ states?: StateView[]; missing: string[] }> {
  const nudge = nudger(e);
  let states: StateView[] | undefined;
  let left: string[] = ['the release itself'];
  await waitFor(
    `the release of ${sha.slice(0, 8)} complete`,
    async () => {
      await nudge();
      states = await releaseStates(r, e, sha);
      left = missing(states);
      return left.length === 0;
    },
    { timeoutMs, intervalMs: 1000 },
  ).catch(() => undefined);
  return { ...(states ? { states } : {}), missing: left };
}

/** The records of one state twice over: the same type, status and reason (a periodic verification is meant to repeat). */
function duplicates(records: EvidenceRecord[]): string[] {
  const seen = new Map<string, number[]>();
  for (const r of records) {
    if (r.type === 'release.verification' && r.data.periodic === true) continue;
    const key = `${r.type} ${String(r.data.status ?? 'ok')} ${String(r.data.reason ?? '')}`;
    seen.set(key, [...(seen.get(key) ?? []), r.seq]);
  }
  return [...seen]
    .filter(([, seqs]) => seqs.length > 1)
    .map(([key, seqs]) => `${key.slice(0, 120)} (seq ${seqs.join(', ')})`);
}

export const releaseRecord: ActionRow<RowState> = {
  id: 'release-record',
  label: 'release recording (each state)',
  // no intent: observations; the generic per-intent invariant is vacuous, check() holds the row's own
  intentType: 'release.recorded-none',
  points: [],
  cluster: (s) => s.estate.cluster,
  setup: async () => ({
    estate: await ownEstate({ name: 'chaos-rel', env: 'dev', files: digitalHumanTemplate('dev') }),
  }),
  teardown: (s) => s.estate.teardown(),
  async prepare(s, c) {
    const e = s.estate;
    const last = e.pushes[e.pushes.length - 1] ?? e.seedCommit;
    // the last cell's release applied and recorded (on a console met for the first time: its first release)
    if (await appliedWithin(e, last, 60_000)) await complete(c.reader(), e, last, 60_000);
    // this cell's commit, pushed before the fault (a stopped forge takes no push); Flux fetches it when perform asks
    s.sha = e.push('chaos: a new release of the render worker config', (w) =>
      writeRepoFile(w, CONFIG, configMap(new Date().toISOString())),
    );
  },
  async perform(s): Promise<Answer> {
    const sha = s.sha;
    if (!sha) return { error: 'prepare pushed no commit' };
    // Flux fetches and applies it while the fault lasts, the recorder records meanwhile (bounded: under an
    // apiserver fault it applies after the heal; check() waits on)
    const done = await appliedWithin(s.estate, sha, 60_000);
    return { status: 200, body: { sha, applied: done }, text: '' };
  },
  async check(s, c) {
    const broken: string[] = [];
    const e = s.estate;
    const sha = s.sha;
    if (!sha) return ['prepare pushed no commit'];
    const reader = c.reader();
    const { states, missing: left } = await complete(reader, e, sha, 90_000);
    if (left.length)
      broken.push(`${reader.name} lacks states of release ${sha.slice(0, 8)} 90 s after the fault: ${left.join(', ')}`);
    // a later duplicate (a recorder that took the Lease over and forgot) shows after a few seconds more
    await new Promise((res) => setTimeout(res, 2000));
    const k = getJson(e.cluster, ['-n', 'flux-system', 'get', 'kustomization', e.kustomization()]) as Kustomization;
    const reconcile = states?.find((x) => x.name === 'reconcile');
    if (applied(k, e, sha) && reconcile && reconcile.status !== 'ok')
      broken.push(
        `Flux applied ${sha.slice(0, 8)}, yet the console shows its reconcile ${reconcile.status}: ${reconcile.why ?? ''}`,
      );
    const chain = await exportChain(reader);
    if (!chain.ok) broken.push(`the export does not verify offline: ${chain.verdict}`);
    const mine = chain.records.filter((r) => r.app === e.appId() && r.data.sha === sha && TYPES.has(r.type));
    // each state the console shows is a record of the exported chain, of that state and commit
    for (const x of states ?? [])
      if (x.seq !== undefined && !mine.some((r) => r.seq === x.seq && r.type === `release.${x.name}`))
        broken.push(
          `the console shows the ${x.name} of ${sha.slice(0, 8)} as record ${x.seq}, which the chain does not hold as such`,
        );
    for (const d of duplicates(mine)) broken.push(`recorded twice for ${sha.slice(0, 8)}: ${d}`);
    return broken;
  },
};
