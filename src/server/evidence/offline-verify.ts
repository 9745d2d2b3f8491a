// Verifies a JSONL export with no database and no server (`npm run cli -- evidence verify`). A full export
// (it starts at event 1) is one chain: the first edited, missing or reordered event is named by its seq. A
// filtered export (it starts later, or --filtered) is checked event by event (each hash), and each link whose
// two events are both present; the links it could not check are listed. A file that starts at event 1 is taken
// for a full export (fail closed: a deleted line is never mistaken for a filter). Signed checkpoints, when
// given, are checked against the events present.
import { z } from 'zod';
import { chainText, GENESIS_HASH, type EvidenceEvent } from '../../domain/evidence.ts';
import { sha256 } from './store.ts';
import { checkCheckpoints, type Checkpoint } from './signing.ts';

const Line = z.object({
  seq: z.number().int().positive(),
  time: z.string(),
  // any type: an export from a newer console verifies with an older CLI
  type: z.string(),
  actor: z.string(),
  app: z.string().nullable(),
  cluster: z.string().nullable(),
  env: z.string().nullable(),
  data: z.record(z.string(), z.unknown()),
  prevHash: z.string(),
  hash: z.string(),
});

export const CheckpointsFile = z.union([
  z.object({
    checkpoints: z.array(z.object({ seq: z.number(), hash: z.string(), time: z.string(), signature: z.string() })),
  }),
  z.array(z.object({ seq: z.number(), hash: z.string(), time: z.string(), signature: z.string() })),
]);
export const parseCheckpoints = (json: unknown): Checkpoint[] => {
  const c = CheckpointsFile.parse(json);
  return Array.isArray(c) ? c : c.checkpoints;
};

export interface Problem {
  seq: number;
  reason: string;
}

export interface OfflineResult {
  ok: boolean;
  /** full: one chain from event 1; filtered: event by event */
  mode: 'full' | 'filtered';
  count: number;
  firstSeq?: number;
  lastSeq?: number;
  /** full mode, intact: the hash of the last event */
  head?: string;
  /** full mode stops at the first; filtered mode lists every one */
  problems: Problem[];
  /** filtered mode: links not checked because the event before is not in the file (`before` is the seq after the gap) */
  unchecked: Array<{ after: number; before: number }>;
  checkpoints?: { checked: number; notCovered: number[]; failed?: Problem };
}

export interface OfflineOptions {
  /** auto (default): full when the file starts at event 1 */
  mode?: 'auto' | 'full' | 'filtered';
  checkpoints?: Checkpoint[];
  publicKey?: string;
}

/** Streaming: push() each line of the file, then finish(). Memory: the checkpoints' hashes, not the events. */
export class ExportVerifier {
  private mode: 'full' | 'filtered' | undefined;
  private count = 0;
  private firstSeq: number | undefined;
  private prev: { seq: number; hash: string } | undefined;
  private readonly problems: Problem[] = [];
  private readonly unchecked: Array<{ after: number; before: number }> = [];
  private readonly wanted: Set<number>;
  private readonly seen = new Map<number, string>();
  // full mode after a gap: the missing seq, looked for further down (found: reordered; not: missing)
  private missing: { seq: number; next: number; line: number } | undefined;
  private stopped = false;

  constructor(private readonly opts: OfflineOptions = {}) {
    this.wanted = new Set((opts.checkpoints ?? []).map((c) => c.seq));
    if (opts.mode && opts.mode !== 'auto') this.mode = opts.mode;
  }

  push(text: string, lineNo: number): void {
    if (!text.trim()) return;
    if (this.missing) {
      const seq = seqOf(text);
      if (seq === this.missing.seq) {
        this.fail({
          seq,
          reason: `event ${seq} is out of order: it is on line ${lineNo}, after event ${this.missing.next} (line ${this.missing.line})`,
        });
        this.missing = undefined;
      }
      return;
    }
    if (this.stopped) return;
    let e: EvidenceEvent;
    try {
      e = Line.parse(JSON.parse(text)) as EvidenceEvent;
    } catch {
      const at = this.prev ? this.prev.seq + 1 : 1;
      this.fail({ seq: at, reason: `line ${lineNo} is not an evidence event (near event ${at})` });
      if (this.mode === 'full') this.stopped = true;
      return;
    }
    this.mode ??= e.seq === 1 ? 'full' : 'filtered';
    this.firstSeq ??= e.seq;
    if (this.mode === 'full') this.full(e, lineNo);
    else this.filtered(e);
  }

  private fail(p: Problem): void {
    this.problems.push(p);
  }

  private full(e: EvidenceEvent, lineNo: number): void {
    const expect = (this.prev?.seq ?? 0) + 1;
    const prevHash = this.prev?.hash ?? GENESIS_HASH;
    if (e.seq > expect) {
      this.missing = { seq: expect, next: e.seq, line: lineNo };
      this.stopped = true;
      return;
    }
    if (e.seq < expect) {
      this.fail({
        seq: e.seq,
        reason: `event ${e.seq} is out of order: it is on line ${lineNo}, after event ${expect - 1}`,
      });
      this.stopped = true;
      return;
    }
    if (sha256(chainText(e)) !== e.hash) {
      this.fail({ seq: e.seq, reason: `event ${e.seq} was changed: its content does not match its hash` });
      this.stopped = true;
      return;
    }
    if (e.prevHash !== prevHash) {
      this.fail({
        seq: e.seq,
        reason: `event ${e.seq} does not link to the hash of event ${e.seq - 1}: one of them was changed`,
      });
      this.stopped = true;
      return;
    }
    this.accept(e);
  }

  private filtered(e: EvidenceEvent): void {
    if (this.prev && e.seq <= this.prev.seq) {
      this.fail({ seq: e.seq, reason: `event ${e.seq} is out of order: it comes after event ${this.prev.seq}` });
      return;
    }
    const own = sha256(chainText(e)) === e.hash;
    if (!own) this.fail({ seq: e.seq, reason: `event ${e.seq} was changed: its content does not match its hash` });
    if (this.prev && this.prev.seq === e.seq - 1) {
      if (e.prevHash !== this.prev.hash)
        this.fail({
          seq: e.seq,
          reason: `event ${e.seq} does not link to the hash of event ${e.seq - 1}: one of them was changed`,
        });
    } else if (e.seq === 1) {
      if (e.prevHash !== GENESIS_HASH) this.fail({ seq: 1, reason: 'event 1 does not start the chain' });
    } else this.unchecked.push({ after: this.prev?.seq ?? 0, before: e.seq });
    if (own) this.accept(e);
    else this.prev = { seq: e.seq, hash: e.hash };
  }

  private accept(e: EvidenceEvent): void {
    this.count++;
    this.prev = { seq: e.seq, hash: e.hash };
    if (this.wanted.has(e.seq)) this.seen.set(e.seq, e.hash);
  }

  finish(): OfflineResult {
    if (this.missing) {
      this.fail({
        seq: this.missing.seq,
        reason: `event ${this.missing.seq} is missing (line ${this.missing.line} has event ${this.missing.next})`,
      });
      this.missing = undefined;
    }
    const mode = this.mode ?? 'full';
    const result: OfflineResult = {
      ok: this.problems.length === 0,
      mode,
      count: this.count,
      ...(this.firstSeq !== undefined ? { firstSeq: this.firstSeq } : {}),
      ...(this.prev ? { lastSeq: this.prev.seq } : {}),
      ...(mode === 'full' && this.problems.length === 0 ? { head: this.prev?.hash ?? GENESIS_HASH } : {}),
      problems: this.problems,
      unchecked: this.unchecked,
    };
    const cps = this.opts.checkpoints ?? [];
    if (cps.length && result.ok) {
      const cp = checkCheckpoints(cps, (seq) => this.seen.get(seq), {
        publicKey: this.opts.publicKey,
        lastSeq: this.prev?.seq ?? 0,
        complete: false,
      });
      if (cp.ok) result.checkpoints = { checked: cp.checked, notCovered: cp.unchecked.map((c) => c.seq) };
      else {
        const failed = { seq: cp.checkpoint.seq, reason: cp.reason };
        result.ok = false;
        result.problems.push(failed);
        result.checkpoints = { checked: 0, notCovered: [], failed };
      }
    }
    return result;
  }
}

const seqOf = (text: string): number | undefined => {
  try {
    const v = (JSON.parse(text) as { seq?: unknown }).seq;
    return typeof v === 'number' ? v : undefined;
  } catch {
    return undefined;
  }
};

export function verifyExportLines(lines: Iterable<string>, opts: OfflineOptions = {}): OfflineResult {
  const v = new ExportVerifier(opts);
  let n = 0;
  for (const l of lines) v.push(l, ++n);
  return v.finish();
}

/** What the CLI prints: a verdict line, then details. */
export function describeResult(r: OfflineResult): string[] {
  const out: string[] = [];
  const range = r.firstSeq !== undefined ? `events ${r.firstSeq}–${r.lastSeq}` : 'no events';
  if (r.ok) {
    if (r.mode === 'full') out.push(`OK: ${r.count} events, one intact chain from event 1; head ${r.head}`);
    else out.push(`OK: ${r.count} events (${range}), each matches its hash; a filtered export, checked event by event`);
  } else {
    const first = r.problems[0];
    out.push(`BROKEN at event ${first?.seq}: ${first?.reason}`);
    for (const p of r.problems.slice(1, 20)) out.push(`  also event ${p.seq}: ${p.reason}`);
    if (r.problems.length > 20) out.push(`  … and ${r.problems.length - 20} more`);
    if (r.mode === 'full' && first?.reason.includes('is missing'))
      out.push('(a filtered export that starts at event 1? check it event by event with --filtered)');
  }
  if (r.unchecked.length) {
    const shown = r.unchecked.slice(0, 10).map((u) => (u.after === 0 ? `→${u.before}` : `${u.after}→${u.before}`));
    out.push(
      `links not checked (the event before is not in the file): ${r.unchecked.length}: ${shown.join(', ')}${r.unchecked.length > 10 ? ', …' : ''}`,
    );
  }
  if (r.checkpoints && !r.checkpoints.failed) {
    const nc = r.checkpoints.notCovered;
    out.push(
      `signed checkpoints: ${r.checkpoints.checked} match${nc.length ? `; ${nc.length} name events not in the file (${nc.slice(0, 5).join(', ')}${nc.length > 5 ? ', …' : ''})` : ''}`,
    );
  }
  return out;
}
