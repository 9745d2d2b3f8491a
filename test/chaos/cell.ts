// One chaos cell (issue 42): an action (a row) through the acting replica, a fault (a column) injected at one point of
// it, the fault healed, then the invariants checked from outside (./invariants.ts and the row's own). Bounded: a cell
// gives up after 2 minutes and says where it was.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../../sandbox/procs.ts';
import type { Consoles } from './console.ts';
import { evidenceInvariants, headSeq, recovered } from './invariants.ts';
import type { ActionRow, Answer, CellResult, Fault, FaultContext, Point, Replica } from './types.ts';

const CELL_MS = 120_000;
/** how long a hang (a stopped apiserver) lasts before it heals, while the action waits on it */
const HANG_MS = 8_000;

const alive = (r: Replica) => r.child.exitCode === null && r.child.signalCode === null;

function clearFaultDir(dir: string): void {
  for (const f of ['arm', 'paused', 'go']) rmSync(join(dir, f), { force: true });
}

const answerOf = (p: Promise<Answer>, ms: number): Promise<Answer | 'pending'> =>
  Promise.race([p, new Promise<'pending'>((r) => setTimeout(() => r('pending'), ms).unref())]);

export const describeAnswer = (a: Answer | 'pending'): string =>
  a === 'pending'
    ? 'no answer yet'
    : 'error' in a
      ? `no answer (${a.error.slice(0, 60)})`
      : `${a.status}${a.status >= 400 ? ` ${a.text.slice(0, 100)}` : ''}`;

export async function runCell<S>(
  row: ActionRow<S>,
  state: S,
  fault: Fault,
  point: Point,
  all: Consoles,
): Promise<CellResult> {
  const started = Date.now();
  let acting = started;
  const notes: string[] = [];
  const broken: string[] = [];
  const { console: c, pg } = await all.get(fault.console);
  if (!alive(c.actor)) await c.respawnActor();
  const ctx: FaultContext = {
    console: c,
    cluster: row.cluster(state),
    note: (s) => notes.push(s),
    ...(pg ? { pg } : {}),
  };
  let healed = false;
  const heal = async () => {
    if (healed) return;
    healed = true;
    await fault.heal(ctx);
  };
  let said = '';
  let killed = false;
  let seqs = '';
  try {
    await row.prepare(state, c);
    // the 2-minute bound counts from here: the estate's reset is the row's, not the cell's
    acting = Date.now();
    const mark = await headSeq(c.reader());
    clearFaultDir(c.actor.faultDir);
    const held = point === 'after-intent' || point === 'mid-act' || point === 'after-act';
    const report = async () => {
      const r = await fault.reported?.(ctx);
      if (!r) return;
      said = r.said;
      if (!r.ok) broken.push(`the console did not report the fault while it lasted (${r.said})`);
    };
    if (point === 'before-intent') {
      await fault.inject(ctx);
      killed = !alive(c.actor);
    }
    if (held) writeFileSync(join(c.actor.faultDir, 'arm'), `${row.intentType}:${point}`);
    const actor = c.actor;
    const answer = row.perform(state, c).catch((e: unknown): Answer => ({ error: String(e) }));
    let reached = !held;
    if (held) {
      reached = await waitFor(
        'the action reaches its fault point',
        async () => existsSync(join(actor.faultDir, 'paused')),
        {
          timeoutMs: 60_000,
          intervalMs: 50,
        },
      ).then(
        () => true,
        () => false,
      );
      if (!reached) {
        const a = await answerOf(answer, 1);
        notes.push(`never reached ${point} (answer: ${describeAnswer(a)})`);
        clearFaultDir(actor.faultDir);
      } else {
        notes.push(`held at ${readFileSync(join(actor.faultDir, 'paused'), 'utf8')}`);
        await fault.inject(ctx);
        killed = !alive(actor);
        if (!killed) {
          // the action goes on into the fault; what the console says is read meanwhile
          const reading = report();
          writeFileSync(join(actor.faultDir, 'go'), '');
          await reading;
        } else await report();
      }
    }
    if (point === 'during') await fault.inject(ctx);
    // a hang heals after HANG_MS whether or not the action answered; other faults once it answered (or died)
    let a = await answerOf(answer, killed ? 1_000 : HANG_MS);
    // the store's faults show once the console tried to write: read after the action's answer
    if (a !== 'pending') ctx.answer = a;
    if (point === 'before-intent' || point === 'during') await report();
    await heal();
    if (a === 'pending') a = await answerOf(answer, Math.max(1_000, CELL_MS - (Date.now() - acting) - 30_000));
    notes.push(`answer: ${describeAnswer(a)}`);
    if (a === 'pending') broken.push('the action never answered, also after the fault healed');
    if (killed) {
      // the survivor's sweep records the dead replica's intent interrupted; a new replica takes the actor's place
      await c.respawnActor();
    } else {
      const r = await recovered(c.actor);
      if (r) broken.push(r);
    }
    const inv = await evidenceInvariants(c.reader(), row.intentType, mark);
    broken.push(...inv.broken);
    seqs = inv.seqs;
    if (reached || point === 'before-intent' || point === 'during')
      broken.push(
        ...(await row.check(state, c, {
          point,
          fault: fault.id,
          answer: await answer,
          intents: inv.intents,
          killed,
          note: (s) => notes.push(s),
        })),
      );
    else broken.push(`the action did not reach its ${point} point`);
  } catch (e) {
    broken.push(`the cell failed: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    await heal().catch((e: unknown) => broken.push(`heal failed: ${String(e)}`));
    clearFaultDir(c.actor.faultDir);
  }
  const ms = Date.now() - started;
  const cellMs = Date.now() - acting;
  if (acting > started)
    notes.push(`reset ${Math.round((acting - started) / 1000)} s, cell ${Math.round(cellMs / 1000)} s`);
  if (cellMs > CELL_MS) broken.push(`the cell took ${Math.round(cellMs / 1000)} s, over its 120 s bound`);
  return { row: row.id, fault: fault.id, point, ok: broken.length === 0, broken, seqs, said, ms, notes };
}
