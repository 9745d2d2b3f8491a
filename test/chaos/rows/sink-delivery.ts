// Chaos row: evidence reaches a configured CDEvents sink (docs/operate/event-sinks.md). Delivery has no intent (only
// a dead letter's retry, `sink.redelivery`, does), so the row has no points: each fault is in place while an on-call
// starts and ends a freeze on the row's own estate through the actor, and the delivery runs on. Checked at the row's
// own receiver against the reader's export: every record of a sink's type after the row's mark arrives, matched by
// seq and chain hash (none lost or dead-lettered), signed, with the id `<source>#<seq>`; a duplicate (at least once)
// has the same id and body (their count is noted); first arrivals come in chain order. The replicas need the sink at
// start: console.ts passes `chaosSinkEnv()` to each (CONSOLE_EVENT_SINKS_FILE).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isEmitted } from '../../../src/domain/cdevents.ts';
import { SIGNATURE_HEADER, verifySignature } from '../../../src/server/sinks/signature.ts';
import { freePort, waitFor } from '../../../sandbox/procs.ts';
import { as } from '../../support/auth.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../../support/own-estate.ts';
import { exportChain, headSeq, type Record as EvidenceRecord } from '../invariants.ts';
import type { ActionRow, Answer, CellRun, Console, Replica } from '../types.ts';
import { answered, endFreezes } from './freeze-start.ts';

const SINK = 'chaos';

interface ChaosSink {
  file: string;
  port: number;
  secret: string;
}

let made: Promise<ChaosSink> | undefined;

/** The sinks file every chaos replica starts with (made once per run, its port chosen then: not at import). */
function chaosSink(): Promise<ChaosSink> {
  made ??= (async () => {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'chaos-sink-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    const secret = `chaos-sink-${randomBytes(16).toString('hex')}`;
    const secretFile = join(dir, 'hmac');
    writeFileSync(secretFile, `${secret}\n`, { mode: 0o600 });
    const file = join(dir, 'sinks.json');
    // no receiver (before this row's setup, after its teardown): 30 s of retries, then one attempt per record
    const sink = { name: SINK, url: `http://127.0.0.1:${port}/cdevents`, secretFile, retryMaxSeconds: 2 };
    writeFileSync(file, JSON.stringify({ sinks: [{ ...sink, deadLetterAfterSeconds: 30 }] }));
    return { file, port, secret };
  })();
  return made;
}

/** The environment console.ts gives every replica it starts. */
export const chaosSinkEnv = async (): Promise<{ CONSOLE_EVENT_SINKS_FILE: string }> => ({
  CONSOLE_EVENT_SINKS_FILE: (await chaosSink()).file,
});

interface Got {
  seq: number;
  hash: string;
  /** the CDEvent's context.id, the ce-id header and x-console-delivery, as received */
  id: string;
  ceId: string;
  delivery: string;
  /** the signature verified with the sink's secret when it came */
  signed: boolean;
  body: string;
}

/** A receiver on the sink's port: what it got, and the deliveries whose body was no CDEvent (`bad`). */
async function receive(sink: ChaosSink): Promise<{ got: Got[]; bad: string[]; close(): Promise<void> }> {
  const got: Got[] = [];
  const bad: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (b: Buffer) => (body += b.toString()));
    req.on('end', () => {
      try {
        const ev = JSON.parse(body) as {
          context: { id: string };
          customData: { evidence: { seq: number; hash: string } };
        };
        got.push({
          seq: ev.customData.evidence.seq,
          hash: ev.customData.evidence.hash,
          id: ev.context.id,
          ceId: String(req.headers['ce-id']),
          delivery: String(req.headers['x-console-delivery']),
          signed: verifySignature(sink.secret, body, String(req.headers[SIGNATURE_HEADER]), Date.now() / 1000),
          body,
        });
      } catch {
        bad.push(body.slice(0, 80));
      }
      // recorded before answered: a record whose answer was lost comes again (at least once)
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject); // the port taken since it was chosen: fail, not hang
    server.listen(sink.port, '127.0.0.1', () => resolve());
  });
  return {
    got,
    bad,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

interface SinkState {
  estate: Estate;
  rx: Awaited<ReturnType<typeof receive>>;
  /** the reader's head when the cell was prepared: what came after must reach the receiver */
  mark: number;
}

interface SinkStatus {
  name: string;
  cursor: number | null;
  lastError: string | null;
  retrying: { seq: number } | null;
  deadLetters: Array<{ seq: number; lastError: string }>;
}

const alive = (r: Replica) => r.child.exitCode === null && r.child.signalCode === null;

async function sinkOf(r: Replica): Promise<SinkStatus | undefined> {
  const res = await as(r.admin, r.base, '/api/sinks');
  if (res.status !== 200) throw new Error(`GET /api/sinks on ${r.name} answered ${res.status}`);
  return (res.body.sinks as SinkStatus[]).find((s) => s.name === SINK);
}

const hashOf = (r: EvidenceRecord) => (r as EvidenceRecord & { hash?: string }).hash;

export const sinkDelivery: ActionRow<SinkState> = {
  id: 'sink-delivery',
  label: 'sink delivery',
  // no intent: the delivery is not an act (no record has this type; the evidence invariants hold trivially)
  intentType: 'sink.delivered',
  points: [],
  cluster: (s) => s.estate.cluster,
  async setup() {
    const estate = await ownEstate({ name: 'chaos-sink', env: 'dev', files: digitalHumanTemplate('dev') });
    try {
      return { estate, rx: await receive(await chaosSink()), mark: 0 };
    } catch (e) {
      await estate.teardown();
      throw e;
    }
  },
  async teardown(s) {
    await s.rx.close();
    await s.estate.teardown();
  },
  async prepare(s, c: Console) {
    const reader = c.reader();
    // what came before is the last cell's (its records are at or below the new mark)
    s.rx.got.length = 0;
    s.rx.bad.length = 0;
    await endFreezes(reader, s.estate);
    s.mark = await headSeq(reader);
    // the delivering replica has caught up to the mark: the cell's records are not stuck behind an old backlog.
    // Only the recorder Lease's holder delivers (its status shows the cursor; the other's shows where it stopped)
    const replicas = [c.actor, c.peer].filter((x): x is Replica => !!x && alive(x));
    for (const r of replicas)
      if (!(await sinkOf(r))) throw new Error(`${r.name} has no sink "${SINK}": console.ts must pass chaosSinkEnv()`);
    await waitFor(
      `the delivering replica's sink reached seq ${s.mark}`,
      async () => {
        for (const r of replicas) if (((await sinkOf(r))?.cursor ?? 0) >= s.mark) return true;
        return false;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
  },
  async perform(s, c): Promise<Answer> {
    const start = await answered(c.actor, '/api/freezes', {
      cluster: s.estate.cluster,
      app: s.estate.appId(),
      reason: 'chaos: sink delivery',
      minutes: 30,
    });
    if ('error' in start || start.status >= 300) return start;
    const id = (start.body as { freeze?: { id?: string } }).freeze?.id;
    const end = await answered(c.actor, `/api/freezes/${id}/end`, { decisions: [] });
    const ended = 'error' in end ? end.error : `${end.status} ${end.status >= 300 ? end.text.slice(0, 80) : ''}`;
    return { status: start.status, body: { start: start.body, end: ended }, text: `${start.text}\nend: ${ended}` };
  },
  async check(s, c, run) {
    const broken: string[] = [];
    const note = (run as CellRun & { note?: (t: string) => void }).note;
    const reader = c.reader();
    const { records } = await exportChain(reader);
    // the sink's records of the cell, by seq with the chain's hash (other consoles' chains share the receiver)
    const want = new Map(records.filter((r) => r.seq > s.mark && isEmitted(r.type)).map((r) => [r.seq, r]));
    const a = run.answer;
    if ('status' in a && a.status < 300 && ![...want.values()].some((r) => r.type === 'freeze.started'))
      broken.push(`the freeze started (${a.status}), yet the chain holds no freeze.started after seq ${s.mark}`);
    const ours = () =>
      s.rx.got.filter((g) => {
        const r = want.get(g.seq);
        return r !== undefined && hashOf(r) === g.hash;
      });
    const missing = () => {
      const have = new Set(ours().map((g) => g.seq));
      return [...want.keys()].filter((q) => !have.has(q));
    };
    let sink = await sinkOf(reader);
    if (!sink) return [...broken, `${reader.name} has no sink "${SINK}"`];
    const dead = () => new Map((sink?.deadLetters ?? []).map((d) => [d.seq, d.lastError]));
    await waitFor(
      'every record of the cell reached the receiver or a dead letter',
      async () => {
        sink = (await sinkOf(reader)) ?? sink;
        return missing().every((q) => dead().has(q));
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    ).catch(() => undefined);
    const lost = missing();
    const got = new Set(ours().map((g) => g.seq));
    if (got.size !== want.size)
      broken.push(`the receiver holds ${got.size} of the chain's ${want.size} sink records after seq ${s.mark}`);
    for (const q of lost.slice(0, 5)) {
      const why = dead().get(q);
      const other = s.rx.got.some((g) => g.seq === q) ? ' (an entry with this seq but another hash came)' : '';
      broken.push(
        why !== undefined
          ? `record ${q} (${want.get(q)?.type}) went to the dead letters: ${why}`
          : `record ${q} (${want.get(q)?.type}) never reached the receiver${other}; sink cursor ${sink.cursor}, ` +
              `retrying ${sink.retrying?.seq ?? 'nothing'}, last error ${sink.lastError ?? 'none'}`,
      );
    }
    if (lost.length > 5) broken.push(`… and ${lost.length - 5} more records lost`);
    const first = new Map<number, Got>();
    const [unsigned, misnamed, unlike, late]: [number[], number[], number[], number[]] = [[], [], [], []];
    for (const g of ours()) {
      if (!g.signed) unsigned.push(g.seq);
      if (g.id !== g.ceId || !g.id.endsWith(`#${g.seq}`) || g.delivery !== `${SINK}:${g.seq}`) misnamed.push(g.seq);
      const f = first.get(g.seq);
      if (f && (f.id !== g.id || f.body !== g.body)) unlike.push(g.seq);
      if (!f && [...first.keys()].some((q) => q > g.seq)) late.push(g.seq);
      if (!f) first.set(g.seq, g);
    }
    const dups = ours().length - first.size;
    if (unsigned.length) broken.push(`records ${unsigned.join(', ')} came without a valid signature`);
    if (misnamed.length) broken.push(`records ${misnamed.join(', ')} came with an id or ce-id not naming their seq`);
    if (unlike.length) broken.push(`records ${unlike.join(', ')} came twice with different ids or bodies`);
    if (late.length) broken.push(`records ${late.join(', ')} first arrived after a later one (not in chain order)`);
    if (s.rx.bad.length) broken.push(`${s.rx.bad.length} deliveries were no CDEvent (${s.rx.bad[0]})`);
    // at least once: a duplicate with the same id is allowed; how many there were is noted
    note?.(`sink: ${got.size}/${want.size} records delivered, ${dups} duplicates`);
    return broken;
  },
};
