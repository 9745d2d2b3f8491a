// Chaos row: an on-call starts an incident freeze on one Flux app (its own estate). Invariants from outside: the
// Kustomization is suspended only by a freeze the console lists (so someone can end it), a freeze whose outcome is
// `completed` is active and suspended, one whose outcome is `failed` changed nothing, and a request refused before
// its intent (the store down) changed nothing.
import { getJson } from '../../../sandbox/scenario.ts';
import { kubectl } from '../../../sandbox/sandbox.ts';
import { waitFor } from '../../../sandbox/procs.ts';
import { as } from '../../support/auth.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../../support/own-estate.ts';
import type { ActionRow, Answer, Console, Replica } from '../types.ts';
import type { Record as EvidenceRecord } from '../invariants.ts';
import { exportChain } from '../invariants.ts';

interface Freeze {
  id: string;
  active: boolean;
  status: string;
  targets: Array<{ appId: string }>;
}

export const suspendedIn = (estate: Estate, app?: string): boolean =>
  (
    getJson(estate.cluster, ['-n', 'flux-system', 'get', 'kustomization', estate.kustomization(app)]).spec as {
      suspend?: boolean;
    }
  ).suspend === true;

/** The freezes `r` lists as active on the estate's app. */
export async function activeFreezes(r: Replica, estate: Estate, app?: string): Promise<Freeze[]> {
  const res = await as(r.admin, r.base, '/api/freezes');
  if (res.status !== 200) throw new Error(`GET /api/freezes answered ${res.status}: ${res.text.slice(0, 200)}`);
  return (res.body.freezes as Freeze[]).filter(
    (f) => (f.active || f.status === 'ending') && f.targets.some((t) => t.appId === estate.appId(app)),
  );
}

/** The Kustomization resumed by an admin (a reset of the row's own estate, not a product path). */
export function resumeByHand(estate: Estate, app?: string): void {
  kubectl(estate.cluster, [
    '-n',
    'flux-system',
    'patch',
    'kustomization',
    estate.kustomization(app),
    '--type=merge',
    '-p',
    '{"spec":{"suspend":false}}',
  ]);
}

/** Ends every active freeze on the app through `r` and waits until Flux reconciles it again. */
export async function endFreezes(r: Replica, estate: Estate, app?: string): Promise<void> {
  await waitFor(
    'no freeze left on the app',
    async () => {
      for (const f of await activeFreezes(r, estate, app))
        await as(r.admin, r.base, `/api/freezes/${f.id}/end`, { method: 'POST', body: { decisions: [] } });
      return (await activeFreezes(r, estate, app)).length === 0;
    },
    { timeoutMs: 60_000, intervalMs: 1000 },
  );
  await waitFor('Flux resumed the app', async () => !suspendedIn(estate, app), { timeoutMs: 30_000, intervalMs: 500 });
}

export const outcomeOf = (records: EvidenceRecord[], intentSeq: number): string | undefined =>
  records.find((r) => r.type.startsWith('action.') && r.type !== 'action.refused' && r.data.intentSeq === intentSeq)
    ?.type;

export async function answered(r: Replica, path: string, body: unknown): Promise<Answer> {
  try {
    const res = await as(r.admin, r.base, path, { method: 'POST', body });
    return { status: res.status, body: res.body, text: res.text };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

export const freezeStart: ActionRow<Estate> = {
  id: 'freeze-start',
  label: 'freeze start',
  intentType: 'freeze.started',
  points: ['after-intent', 'after-act'],
  cluster: (e) => e.cluster,
  setup: () => ownEstate({ name: 'chaos-frz', env: 'dev', files: digitalHumanTemplate('dev') }),
  teardown: (e) => e.teardown(),
  async prepare(e, c: Console) {
    // a freeze another console kind made (its own store) is not this one's to end: the estate is reset by hand
    if (suspendedIn(e) && (await activeFreezes(c.reader(), e)).length === 0) resumeByHand(e);
    await endFreezes(c.reader(), e);
  },
  perform: (e, c) =>
    answered(c.actor, '/api/freezes', {
      cluster: e.cluster,
      app: e.appId(),
      reason: 'chaos: freeze start',
      minutes: 30,
    }),
  async check(e, c, run) {
    const broken: string[] = [];
    const reader = c.reader();
    const suspended = suspendedIn(e);
    const listed = await activeFreezes(reader, e);
    const { records } = await exportChain(reader);
    if (suspended && listed.length === 0) broken.push('Flux is suspended but the console lists no freeze to end');
    if (listed.length > 1) broken.push(`${listed.length} active freezes from one start`);
    if (run.intents.length === 0) {
      if (suspended || listed.length) broken.push('a freeze took effect without an intent in the evidence');
      if (!('error' in run.answer) && run.answer.status < 400)
        broken.push(`no intent recorded, yet the console answered ${run.answer.status}`);
    }
    for (const seq of run.intents) {
      const outcome = outcomeOf(records, seq);
      if (outcome === 'action.completed' && !(suspended && listed.length === 1))
        broken.push(`intent ${seq} completed, but suspended=${suspended} and ${listed.length} freezes listed`);
      if (outcome === 'action.failed' && (suspended || listed.length))
        broken.push(`intent ${seq} failed, yet suspended=${suspended} and ${listed.length} freezes listed`);
    }
    // the freeze this cell made is ended by the console that holds it (the next cell may run on another kind)
    await endFreezes(reader, e).catch((err: unknown) => broken.push(`the freeze could not be ended: ${String(err)}`));
    return broken;
  },
};
