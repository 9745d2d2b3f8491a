// Chaos row: a prune the console executes itself (its own prod estate, Flux `prune: false`: the console deletes, in
// batches of 10) of 25 probe ConfigMaps. prepare() re-creates missing probes; prod-developer requests a preview and
// prod-reviewer approves it through the reader; perform() is the last approval (prod-reviewer-2) through the actor,
// which claims the preview and starts the execution. Points: the first batch's (`prune.batch`; mid-act after its
// first delete, src/server/prune/executor.ts). Invariants, from outside: only the approved preview's objects (by uid)
// left the namespace; the preview settles (≤ 60 s: the executor's report or, after a kill, the survivor's recovery)
// and its journal says which probes were deleted and which not, as the cluster does; nothing twice (one delete intent
// per object, each with one outcome; one intent per batch; one prune.executed, its count the journal's); each batch's
// outcome agrees (completed ⇒ its objects gone; failed or interrupted ⇒ the prune stopped there); the approval is
// spent once (another approval of the settled preview is refused and starts nothing).
import { sleep, waitFor } from '../../../sandbox/procs.ts';
import { as, signIn, type Signed } from '../../support/auth.ts';
import { prodProbeEstate, type ProdProbeEstate } from '../../support/prod-probe-estate.ts';
import { exportChain, type Record as EvidenceRecord } from '../invariants.ts';
import type { ActionRow, Answer, Replica } from '../types.ts';
import { outcomeOf } from './freeze-start.ts';

const PROBES = Array.from({ length: 25 }, (_, i) => `chaos-prune-probe-${String(i).padStart(2, '0')}`);
const SETTLE_MS = 60_000;
const GONE = new Set(['deleted', 'gone']);
const KEPT = new Set(['not-deleted', 'failed']);

type Preview = { id: string; appId: string; status: string; plan: string; confirmation: string | null } & {
  requiredApprovals: number;
  candidates: Array<{ id: string; uid: string | null; ref: { name: string }; deletable: boolean }>;
  journal: Array<{ object: string; state: string }>;
};

interface Cell {
  id: string;
  confirmation: string | null;
  /** the approved preview's deletable candidates: uid → candidate id */
  candidates: Map<string, string>;
  /** the namespace's objects before the action: uid → kind/name */
  before: Map<string, string>;
  /** prod-reviewer-2, signed in on the actor */
  approver: Signed;
}

export interface PruneState {
  probes: ProdProbeEstate;
  /** the labels Flux gave the probes (its tracking labels): re-created probes carry them */
  labels: Record<string, string>;
  cell?: Cell;
}

const until = (what: string, check: () => Promise<boolean>, timeoutMs: number) =>
  waitFor(what, check, { timeoutMs, intervalMs: 1000 });

/** The namespace's objects now, as the sandbox admin lists them: uid → kind/name. */
function objectsIn(s: PruneState): Map<string, string> {
  const list = JSON.parse(
    s.probes.kubectl(['get', 'configmaps,secrets,services,serviceaccounts,deployments', '-o', 'json']),
  ) as { items: Array<{ kind: string; metadata: { uid: string; name: string } }> };
  return new Map(list.items.map((o) => [o.metadata.uid, `${o.kind}/${o.metadata.name}`]));
}

function recreateProbes(s: PruneState): void {
  const live = s.probes.liveProbes();
  const items = PROBES.filter((n) => !live.has(n)).map((name) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, labels: s.labels },
    data: { probe: name },
  }));
  if (items.length) s.probes.kubectl(['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
}

async function view(r: Replica, id: string): Promise<Preview> {
  const res = await as(r.admin, r.base, `/api/prune-previews/${id}`);
  if (res.status !== 200) throw new Error(`GET prune preview ${id} answered ${res.status}: ${res.text.slice(0, 200)}`);
  return (res.body as { preview: Preview }).preview;
}

/** The app's previews `r` lists as approved or executing (a previous cell's, not settled yet). */
async function unsettled(r: Replica, app: string): Promise<string[]> {
  const ids: string[] = [];
  for (const state of ['approved', 'executing']) {
    const res = await as(r.admin, r.base, `/api/prune-previews?state=${state}`);
    if (res.status !== 200) throw new Error(`GET prune previews answered ${res.status}`);
    for (const p of res.body.previews as Preview[]) if (p.appId === app) ids.push(`${p.id} (${state})`);
  }
  return ids;
}

const approve = (who: Signed, base: string, cell: Cell, comment: string) =>
  as(who, base, `/api/prune-previews/${cell.id}/approve`, {
    method: 'POST',
    body: { comment, ...(cell.confirmation ? { confirmation: cell.confirmation } : {}) },
  });

/** The values named more than once. */
const twice = (xs: string[]) => [...new Set(xs.filter((x, i) => xs.indexOf(x) !== i))];

const outcomesOf = (records: EvidenceRecord[], seq: number) =>
  records.filter((r) => r.type.startsWith('action.') && r.type !== 'action.refused' && r.data.intentSeq === seq);

function mustCell(s: PruneState): Cell {
  if (!s.cell) throw new Error('prepare() made no preview');
  return s.cell;
}

export const pruneExecute: ActionRow<PruneState> = {
  id: 'prune-execute',
  label: 'prune execution (console deletes)',
  intentType: 'prune.batch',
  points: ['after-intent', 'mid-act', 'after-act'],
  cluster: (s) => s.probes.estate.cluster,
  async setup() {
    const probes = await prodProbeEstate({ name: 'chaos-prune', probes: PROBES });
    const o = JSON.parse(probes.kubectl(['get', 'configmap', PROBES[0] ?? '', '-o', 'json'])) as {
      metadata: { labels?: Record<string, string> };
    };
    return { probes, labels: o.metadata.labels ?? {} };
  },
  teardown: (s) => s.probes.teardown(),
  async prepare(s, c) {
    s.cell = undefined;
    const reader = c.reader();
    let left: string[] = [];
    const settled = async () => (left = await unsettled(reader, s.probes.app)).length === 0;
    await until('no prune of the app left approved or executing', settled, 60_000).catch((e: unknown) => {
      throw new Error(`${String(e)}: ${left.join(', ')}`);
    });
    recreateProbes(s);
    for (const r of [reader, c.actor]) await s.probes.consoleAt(r.base, r.admin);
    const developer = await signIn(reader.base, 'prod-developer');
    let p: Preview | undefined;
    // the console's index sees re-created probes a moment later: a preview of fewer is left pending
    const exactly = async () => {
      const res = await as(developer, reader.base, `/api/apps/${s.probes.app}/prune-previews`, { method: 'POST' });
      if (res.status !== 200) throw new Error(`the preview request answered ${res.status}: ${res.text.slice(0, 200)}`);
      p = (res.body as { preview: Preview }).preview;
      const names = p.candidates.map((x) => x.ref.name).sort();
      return names.join() === PROBES.join() && p.candidates.every((x) => x.deletable && x.uid);
    };
    await until('a preview of exactly the probes', exactly, 30_000);
    const preview = p as Preview;
    if (preview.plan !== 'needs-override' || preview.requiredApprovals !== 2 || preview.status !== 'pending')
      throw new Error(
        `want a pending override (2 approvals), got ${preview.plan}/${preview.requiredApprovals}/${preview.status}`,
      );
    const cell: Cell = {
      id: preview.id,
      confirmation: preview.confirmation,
      candidates: new Map(preview.candidates.map((x) => [x.uid ?? '', x.id])),
      before: new Map(),
      approver: await signIn(c.actor.base, 'prod-reviewer-2'),
    };
    const first = await approve(await signIn(reader.base, 'prod-reviewer'), reader.base, cell, 'chaos: first approval');
    if (first.status !== 200 || (first.body.preview as Preview).status !== 'pending')
      throw new Error(`the first approval answered ${first.status}: ${first.text.slice(0, 200)}`);
    cell.before = objectsIn(s);
    s.cell = cell;
  },
  async perform(s, c): Promise<Answer> {
    const cell = mustCell(s);
    try {
      const res = await approve(cell.approver, c.actor.base, cell, 'chaos: prune execute');
      return { status: res.status, body: res.body, text: res.text };
    } catch (e) {
      return { error: e instanceof Error ? e.message : String(e) };
    }
  },
  async check(s, c, run) {
    const broken: string[] = [];
    const cell = mustCell(s);
    const reader = c.reader();
    let p = await view(reader, cell.id);
    const done = async () => !['approved', 'executing'].includes((p = await view(reader, cell.id)).status);
    const settled = await until('the prune settled', done, SETTLE_MS)
      .then(() => true)
      .catch(() => false);
    if (!settled) broken.push(`the preview is still ${p.status} ${SETTLE_MS / 1000} s after the fault healed`);
    // the approval is spent: another approver (admin) through the survivor is refused and starts nothing
    if (settled && p.status !== 'pending') {
      const again = await approve(reader.admin, reader.base, cell, 'chaos: second execute');
      if (again.status !== 409)
        broken.push(`another approval of the ${p.status} preview answered ${again.status} (want 409)`);
      await sleep(1500);
      const now = await view(reader, cell.id);
      if (now.status !== p.status) broken.push(`the preview went ${p.status} → ${now.status} on another approval`);
      p = now;
    }
    // the cluster: only the approved preview's objects left the namespace
    const after = objectsIn(s);
    const gone = [...cell.before].filter(([uid]) => !after.has(uid));
    for (const [uid, name] of gone)
      if (!cell.candidates.has(uid)) broken.push(`${name} was deleted, but it is not in the approved preview`);
    // the journal says what the cluster says
    const uidOf = new Map(p.candidates.map((x) => [x.id, x.uid ?? '']));
    for (const j of p.journal) {
      const live = after.has(uidOf.get(j.object) ?? '');
      if (GONE.has(j.state) && live) broken.push(`the journal says ${j.object} ${j.state}, but it is live`);
      else if (KEPT.has(j.state) && !live) broken.push(`the journal says ${j.object} ${j.state}, but it is gone`);
      else if (settled && !GONE.has(j.state) && !KEPT.has(j.state))
        broken.push(`the journal leaves ${j.object} ${j.state} (the cluster: ${live ? 'live' : 'gone'})`);
    }
    const journaled = new Set(p.journal.map((j) => j.object));
    for (const [uid, name] of gone)
      if (cell.candidates.has(uid) && !journaled.has(cell.candidates.get(uid) ?? ''))
        broken.push(`${name} was deleted, but the journal does not name it`);
    if (p.journal.length && p.journal.length !== cell.candidates.size)
      broken.push(`the journal names ${p.journal.length} of ${cell.candidates.size} candidates`);
    if (p.status === 'done' && !p.journal.every((j) => GONE.has(j.state))) broken.push('done, yet not all deleted');
    // the evidence: nothing twice, and each outcome agrees with the journal
    const { records } = await exportChain(reader);
    const mine = records.filter((r) => r.data.previewId === cell.id);
    const batches = mine.filter((r) => r.type === 'prune.batch');
    const deletes = mine.filter((r) => r.type === 'prune.delete');
    for (const b of twice(batches.map((r) => String(r.data.batch)))) broken.push(`batch ${b} ran more than once`);
    for (const o of twice(batches.flatMap((r) => r.data.objects as string[]))) broken.push(`${o} is in two batches`);
    for (const o of twice(deletes.map((r) => String(r.data.object))))
      broken.push(`${o} has more than one delete intent`);
    for (const d of deletes) {
      const n = outcomesOf(records, d.seq).length;
      if (n !== 1) broken.push(`the delete intent ${d.seq} (${String(d.data.object)}) has ${n} outcomes`);
    }
    const intended = new Set(deletes.map((r) => String(r.data.object)));
    const deleted = p.journal.filter((j) => GONE.has(j.state));
    for (const j of deleted) if (!intended.has(j.object)) broken.push(`${j.object} deleted without a delete intent`);
    const executed = mine.filter((r) => r.type === 'prune.executed');
    if (settled && p.journal.length && executed.length !== 1)
      broken.push(`${executed.length} prune.executed records for a ${p.status} prune (want 1)`);
    for (const e of executed) {
      if (e.data.status !== p.status)
        broken.push(`prune.executed says ${String(e.data.status)}, the preview ${p.status}`);
      if (Number(e.data.deleted) !== deleted.length)
        broken.push(`prune.executed says ${String(e.data.deleted)} deleted, the journal ${deleted.length}`);
    }
    const lastBatch = Math.max(-1, ...batches.map((r) => Number(r.data.batch)));
    const state = new Map(p.journal.map((j) => [j.object, j.state]));
    for (const b of batches) {
      const o = outcomeOf(records, b.seq);
      const objects = b.data.objects as string[];
      if (o === 'action.completed' && !objects.every((x) => GONE.has(state.get(x) ?? '')))
        broken.push(`batch ${String(b.data.batch)} completed, but not all its objects are deleted in the journal`);
      const stopped = o === 'action.failed' || o === 'action.interrupted';
      if (stopped && (Number(b.data.batch) !== lastBatch || p.status !== 'failed'))
        broken.push(`batch ${String(b.data.batch)} ${o}, yet the prune is ${p.status} with batch ${lastBatch} run`);
    }
    const foreign = run.intents.filter((seq) => !batches.some((b) => b.seq === seq));
    if (foreign.length) broken.push(`prune.batch intents of another preview in this cell: ${foreign.join(', ')}`);
    if (!batches.length && gone.length) broken.push(`${gone.length} objects deleted without a prune.batch intent`);
    if (!('error' in run.answer) && run.answer.status === 200 && p.status === 'pending')
      broken.push('the last approval answered 200, yet the preview is still pending');
    return broken;
  },
};
