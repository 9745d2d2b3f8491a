// Chaos row: an on-call ends an incident freeze on one Flux app (its own estate) with its one live change (the
// render-worker's replicas, edited by hand while frozen) written back to Git: the console opens a pull request on the
// forge, then restores Flux. The intent is `freeze.ended` (end.ts): its action holds the whole end — the write-back
// (a nested `freeze.write-back`) and the restore — so `after-intent` holds before any Git write (a forge stop then
// fails the write-back) and `after-act` after the pull request and the restore. Invariants from outside: an end that
// did not finish settles (a takeover ends it or stalls it) and is visible through the survivor; every pull request of
// the freeze on the forge is recorded on the freeze; a freeze listed as holding keeps Flux suspended; `completed` ⇒
// the freeze ended; `failed` ⇒ the freeze is still listed, to be ended again; no intent ⇒ no effect and an error
// answer. Then an end through the reader (when the freeze still holds) finishes it, and at the end: Flux's
// Kustomization spec exactly as before the freeze, and the forge holds exactly one pull request for the freeze,
// whose diff carries the live value.
import { canonicalJson } from '../../../src/domain/evidence.ts';
import { STALLED_TEXT } from '../../../src/server/freeze/end.ts';
import { forgeApi, forgeUser, getJson, kubectlEdit } from '../../../sandbox/scenario.ts';
import { kubectl } from '../../../sandbox/state.ts';
import { waitFor } from '../../../sandbox/procs.ts';
import { as } from '../../support/auth.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../../support/own-estate.ts';
import { exportChain } from '../invariants.ts';
import type { ActionRow, Console, Replica } from '../types.ts';
import { activeFreezes, answered, endFreezes, outcomeOf, suspendedIn } from './freeze-start.ts';

interface Cell {
  id: string;
  changeId: string;
  /** the replicas set by hand while frozen (Git has 6) */
  live: number;
  /** the Kustomization's spec before the freeze */
  spec: string;
}
interface State {
  estate: Estate;
  n: number;
  cell?: Cell;
}
interface FreezeDto {
  id: string;
  status: string;
  active: boolean;
  endReason?: string | null;
  writeBack?: Array<{ branch: string; pullRequest?: { number: number } | null }>;
}
interface Change {
  id: string;
  path: string;
  live: unknown;
  ref: { kind: string; name: string };
}
interface Pull {
  number: number;
  state: string;
  head: { ref: string };
}

const OVERLAY = 'overlays/staging/kustomization.yaml';
const WORKER = 'render-worker';

const ks = (e: Estate) => getJson(e.cluster, ['-n', 'flux-system', 'get', 'kustomization', e.kustomization()]);
const specOf = (e: Estate) => canonicalJson(ks(e).spec);
const liveReplicas = (e: Estate) =>
  Number(kubectl(e.cluster, ['-n', e.namespace, 'get', 'deployment', WORKER, '-o', 'jsonpath={.spec.replicas}']));
const repoPath = (e: Estate) => `/repos/${e.forge.repo.owner}/${e.forge.repo.name}`;

async function pulls(e: Estate, state: 'open' | 'all'): Promise<Pull[]> {
  const r = await forgeApi('admin', 'GET', `${repoPath(e)}/pulls?state=${state}&limit=50`, undefined, e.forge);
  if (r.status !== 200) throw new Error(`the forge listed pull requests with HTTP ${r.status}`);
  return r.json as unknown as Pull[];
}
/** the freeze's pull requests (open or closed): its branch `freeze/<id>`, or `freeze/<id>-<attempt>` */
const pullsOf = async (e: Estate, id: string) =>
  (await pulls(e, 'all')).filter((p) => p.head.ref === `freeze/${id}` || p.head.ref.startsWith(`freeze/${id}-`));

async function diffOf(e: Estate, n: number): Promise<string> {
  const res = await fetch(`${e.forge.url}/api/v1${repoPath(e)}/pulls/${n}.diff`, {
    headers: { authorization: `token ${forgeUser('admin', e.forge).token}` },
    signal: AbortSignal.timeout(30_000),
  });
  return res.ok ? res.text() : `HTTP ${res.status}`;
}

async function freezeOf(r: Replica, id: string): Promise<FreezeDto> {
  const res = await as(r.admin, r.base, `/api/freezes/${id}`);
  if (res.status !== 200) throw new Error(`GET /api/freezes/${id} answered ${res.status}: ${res.text.slice(0, 200)}`);
  return res.body.freeze as FreezeDto;
}
const stalled = (f: FreezeDto) => f.status === 'ending' && (f.endReason ?? '').startsWith(STALLED_TEXT);

/** The freeze's listed live change of the worker's replicas (through `r`), if it is listed. */
async function replicasChange(r: Replica, id: string): Promise<Change | undefined> {
  const res = await as(r.admin, r.base, `/api/freezes/${id}/changes`);
  if (res.status !== 200) throw new Error(`GET /api/freezes/${id}/changes answered ${res.status}`);
  return (res.body.changes as Change[]).find((c) => c.path === 'spec.replicas' && c.ref.name === WORKER);
}

export const freezeEnd: ActionRow<State> = {
  id: 'freeze-end',
  label: 'freeze end with Git write-back',
  intentType: 'freeze.ended',
  points: ['after-intent', 'after-act'],
  cluster: (s) => s.estate.cluster,
  async setup() {
    // the staging overlay declares the estate's namespace, as the seed's declares `staging` (freeze-estate.ts): the
    // write-back places a live change by the namespace Git gives the object
    const template = digitalHumanTemplate('staging');
    const overlay = template[OVERLAY] ?? '';
    if (!/^namespace: staging$/m.test(overlay)) throw new Error(`${OVERLAY} of the seed declares no namespace staging`);
    const estate = await ownEstate({
      name: 'chaos-frzend',
      env: 'staging',
      files: template,
      namedFiles: ({ namespace }) => ({
        [OVERLAY]: overlay.replace(/^namespace: staging$/m, `namespace: ${namespace}`),
      }),
    });
    return { estate, n: 0 };
  },
  teardown: (s) => s.estate.teardown(),
  async prepare(s, c: Console) {
    const e = s.estate;
    const r = c.reader();
    s.cell = undefined;
    await endFreezes(r, e);
    for (const p of await pulls(e, 'open'))
      if (p.head.ref.startsWith('freeze/'))
        await forgeApi('admin', 'PATCH', `${repoPath(e)}/pulls/${p.number}`, { state: 'closed' }, e.forge);
    const spec = specOf(e);
    const start = await as(r.admin, r.base, '/api/freezes', {
      method: 'POST',
      body: { cluster: e.cluster, app: e.appId(), reason: 'chaos: freeze end', minutes: 30 },
    });
    if (start.status !== 200) throw new Error(`the freeze did not start: ${start.status} ${start.text.slice(0, 200)}`);
    const id = (start.body.freeze as FreezeDto).id;
    // no reconcile begun before the freeze still in flight (it would apply Git over the edit)
    await waitFor('no reconcile in flight', async () => {
      const st = ks(e).status as { conditions?: Array<{ type: string; status: string }> } | undefined;
      return !st?.conditions?.some((x) => x.type === 'Reconciling' && x.status === 'True');
    });
    // a value of its own each cell (Git has 6), so the pull request's diff names this cell's edit
    const live = 7 + (s.n++ % 6);
    let change: Change | undefined;
    await waitFor(
      'the console lists the live change',
      async () => {
        if (liveReplicas(e) !== live)
          kubectlEdit(e.cluster, `deployment/${WORKER}`, e.namespace, { spec: { replicas: live } });
        change = await replicasChange(r, id);
        return Number(change?.live) === live;
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    s.cell = { id, changeId: (change as Change).id, live, spec };
  },
  async perform(s, c) {
    const cell = s.cell as Cell;
    return answered(c.actor, `/api/freezes/${cell.id}/end`, {
      decisions: [{ change: cell.changeId, action: 'write-back' }],
    });
  },
  async check(s, c, run) {
    const e = s.estate;
    const { id, live, spec } = s.cell as Cell;
    const broken: string[] = [];
    const reader = c.reader();
    // an end left running (a takeover after the actor died) finishes or stalls first
    let f = await freezeOf(reader, id);
    await waitFor(
      'the end settles',
      async () => {
        f = await freezeOf(reader, id);
        return f.status !== 'ending' || stalled(f);
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    ).catch(() => broken.push(`freeze ${id} is still ending 60 s after the fault healed, not stalled`));
    const { records } = await exportChain(reader);
    const outcomes = records
      .filter((r) => r.type === 'freeze.ended' && r.data.freezeId === id)
      .map((r) => outcomeOf(records, r.seq) ?? 'none');
    const listed = (await activeFreezes(reader, e)).some((x) => x.id === id);
    const recorded = new Set((f.writeBack ?? []).flatMap((w) => (w.pullRequest ? [w.pullRequest.number] : [])));
    const before = await pullsOf(e, id);
    for (const p of before)
      if (!recorded.has(p.number))
        broken.push(`pull request #${p.number} (${p.head.ref}) is on the forge but freeze ${id} does not record it`);
    if (listed && !suspendedIn(e)) broken.push(`the console lists freeze ${id} as holding, but Flux is not suspended`);
    if (outcomes.includes('action.completed') && f.status !== 'ended')
      broken.push(`an end of freeze ${id} completed, yet the freeze is ${f.status}`);
    if (!outcomes.includes('action.completed') && outcomes.includes('action.failed') && !listed)
      broken.push(
        `the end of freeze ${id} failed, yet the console no longer lists it (${f.status}): it cannot be ended again`,
      );
    if (f.status !== 'ended' && !listed)
      broken.push(`freeze ${id} is ${f.status}: neither ended nor listed to be ended`);
    if (run.intents.length === 0) {
      if (f.status === 'ended' || before.length)
        broken.push(`no intent recorded, yet freeze ${id} is ${f.status} with ${before.length} pull requests`);
      if (!('error' in run.answer) && run.answer.status < 400)
        broken.push(`no intent recorded, yet the console answered ${run.answer.status}`);
    }
    // still holding: ended again through the survivor, with the change written back (it must not open a second PR)
    let wroteBack = f.status === 'ended';
    if (f.status !== 'ended' && listed) {
      const change = await replicasChange(reader, id);
      if (!change) broken.push(`freeze ${id} still holds but no longer lists the live replicas change`);
      wroteBack = Boolean(change);
      const again = await answered(reader, `/api/freezes/${id}/end`, {
        decisions: change ? [{ change: change.id, action: 'write-back' }] : [],
      });
      if ('error' in again || again.status !== 200)
        broken.push(
          `ending freeze ${id} again through ${reader.name} answered ${'error' in again ? again.error : `${again.status} ${again.text.slice(0, 120)}`}`,
        );
      f = await freezeOf(reader, id);
    }
    // the end as it finished: the restore done (the spec as before the freeze), one pull request with the live value
    const prs = await pullsOf(e, id);
    if (prs.length > 1)
      broken.push(
        `${prs.length} pull requests for freeze ${id}: ${prs.map((p) => `#${p.number} ${p.head.ref}`).join(', ')}`,
      );
    if (f.status === 'ended') {
      if (suspendedIn(e)) broken.push(`freeze ${id} ended, but Flux is still suspended`);
      const now = specOf(e);
      if (now !== spec)
        broken.push(`the Kustomization's spec after the end is ${now}, before the freeze it was ${spec}`);
      if (wroteBack && prs.length === 0)
        broken.push(`freeze ${id} ended with a write-back, but the forge has no pull request for it`);
      for (const p of prs.slice(0, 1)) {
        const diff = await diffOf(e, p.number);
        if (!new RegExp(`^\\+\\s+count: ${live}$`, 'm').test(diff))
          broken.push(`pull request #${p.number}'s diff does not set the live value ${live}: ${diff.slice(0, 160)}`);
      }
    } else
      broken.push(
        `freeze ${id} is ${f.status} after an end through the reader${f.endReason ? ` (${f.endReason})` : ''}`,
      );
    return broken;
  },
};
