// Verifies an export (JSONL or CSV) with no database and no server (`npm run cli -- evidence verify`).
//
// Full (the default): the file must be the whole chain — event 1 first, every event linked to the one before,
// and the signed trailer last, saying where the export ends. A missing first event, a gap, an edited or
// reordered event, events missing at the end, a removed or altered trailer, or a filtered export are each
// a failure, named by the event's seq. Filtered (`--filtered`, only for an export whose trailer says it was
// filtered): each event is checked against its own hash, each link whose two events are both present, and the
// set of events against the trailer (first, last, count, the digest of their hashes); the links it could not
// check are listed. With the public key, the trailer's signature is checked too (an altered trailer fails);
// signed checkpoints, when given, are checked against the events present, and one past the export's head (an
// event the export should hold, were it whole) fails. `--without-trailer` is only for exports made before
// trailers: a file holding an event recorded since (TRAILERS_SINCE) had a trailer, so it fails.
import { GENESIS_HASH, chainText, type EvidenceEvent } from '../../domain/evidence.ts';
import { ExportReader, type ExportItem } from './export-read.ts';
import {
  describeFilter,
  keyIdOf,
  RecordsDigest,
  trailerSignatureOk,
  type EvidenceExportFilter,
  type EvidenceExportTrailer,
} from './export-trailer.ts';
import { checkCheckpoints, type Checkpoint } from './signing.ts';
import { sha256 } from './store.ts';
import { z } from 'zod';

const CheckpointList = z.array(
  z.object({ seq: z.number(), hash: z.string(), time: z.string(), signature: z.string() }),
);
export const CheckpointsFile = z.union([z.object({ checkpoints: CheckpointList }), CheckpointList]);
export const parseCheckpoints = (json: unknown): Checkpoint[] => {
  const c = CheckpointsFile.parse(json);
  return Array.isArray(c) ? c : c.checkpoints;
};

/**
 * When exports got their signed trailer: commit ff99b69 ("Exports prove their own completeness", 2026-12-01 15:03:32
 * UTC). An export holding an event recorded at or after this time was made by a console that writes a trailer, so
 * `--without-trailer` (for exports made before trailers) refuses it: its trailer was removed, perhaps with events.
 */
export const TRAILERS_SINCE = '2026-12-01T15:03:32.000Z';
const TRAILERS_SINCE_MS = Date.parse(TRAILERS_SINCE);

export interface Problem {
  /** the event it is about (none: the file as a whole) */
  seq?: number;
  reason: string;
}

export interface OfflineResult {
  ok: boolean;
  /** full: one chain from event 1 to the trailer's end; filtered: event by event */
  mode: 'full' | 'filtered';
  format: 'jsonl' | 'csv';
  count: number;
  firstSeq?: number;
  lastSeq?: number;
  /** full mode, intact: the hash of the last event */
  head?: string;
  /** full mode stops at the first broken event; filtered mode lists every one */
  problems: Problem[];
  /** filtered mode: links not checked because the event before is not in the file (`before` is the seq after the gap) */
  unchecked: Array<{ after: number; before: number }>;
  /** the trailer, when one was read */
  trailer?: {
    time: string;
    filter: EvidenceExportFilter | null;
    headSeq: number;
    headHash: string;
    keyId: string | null;
    /** valid / invalid with the public key given; not-checked without one; unsigned: it has no signature */
    signature: 'valid' | 'invalid' | 'not-checked' | 'unsigned';
  };
  /** --without-trailer: an export made before trailers (its end is not checked) */
  withoutTrailer?: boolean;
  checkpoints?: { checked: number; notCovered: number[]; failed?: Problem };
}

export interface OfflineOptions {
  /** full (default): the whole chain; filtered: an export whose trailer says it was filtered, event by event */
  mode?: 'full' | 'filtered';
  /**
   * an export made before trailers: none is expected, and events removed from its end cannot be detected; a file
   * with an event recorded since TRAILERS_SINCE fails (it was made with a trailer)
   */
  withoutTrailer?: boolean;
  /** the console's public key (PEM): the trailer's signature, and the checkpoints', are checked with it */
  publicKey?: string;
  checkpoints?: Checkpoint[];
}

/** Streaming: push() each item read from the file (export-read.ts), then finish(). Memory: the checkpoints' hashes. */
export class ExportVerifier {
  private readonly mode: 'full' | 'filtered';
  /** events read (whatever their hash), and those whose own hash matches */
  private events = 0;
  private count = 0;
  private firstSeq: number | undefined;
  /** the last event read, as it is in the file */
  private last: { seq: number; hash: string; line: number } | undefined;
  /** the last event accepted (full mode: the end of the intact chain) */
  private prev: { seq: number; hash: string } | undefined;
  private readonly digest = new RecordsDigest();
  private readonly problems: Problem[] = [];
  private readonly unchecked: Array<{ after: number; before: number }> = [];
  private readonly wanted: Set<number>;
  private readonly seen = new Map<number, string>();
  // full mode after a gap: the missing seq, looked for further down (found: reordered; not: missing)
  private missing: { seq: number; next: number; line: number } | undefined;
  private stopped = false;
  private trailer: { t: EvidenceExportTrailer; line: number } | undefined;
  private trailerBad = false;
  /** the first line after the trailer that has something on it */
  private afterTrailer: number | undefined;
  /** --without-trailer: the first event recorded since trailers exist (or whose time cannot be read) */
  private trailerEra: { seq: number; time: string } | undefined;

  constructor(private readonly opts: OfflineOptions = {}) {
    this.mode = opts.mode ?? 'full';
    this.wanted = new Set((opts.checkpoints ?? []).map((c) => c.seq));
  }

  push(item: ExportItem): void {
    if (this.trailer || this.trailerBad) {
      this.afterTrailer ??= item.line;
      return;
    }
    if (item.kind === 'trailer') {
      this.trailer = { t: item.t, line: item.line };
      return;
    }
    if (item.kind === 'bad' && item.trailer) {
      this.fail({ reason: item.reason });
      this.trailerBad = true;
      return;
    }
    if (this.missing) {
      const seq = item.kind === 'event' ? item.e.seq : item.seq;
      if (seq === this.missing.seq) {
        this.fail({
          seq,
          reason: `event ${seq} is out of order: it is on line ${item.line}, after event ${this.missing.next} (line ${this.missing.line})`,
        });
        this.missing = undefined;
      }
      return;
    }
    if (this.stopped) return;
    if (item.kind === 'bad') {
      const at = this.last ? this.last.seq + 1 : 1;
      this.fail({ seq: at, reason: `${item.reason} (near event ${at})` });
      if (this.mode === 'full') this.stopped = true;
      return;
    }
    const e = item.e;
    if (this.opts.withoutTrailer && !this.trailerEra) {
      const t = Date.parse(e.time);
      if (!(t < TRAILERS_SINCE_MS)) this.trailerEra = { seq: e.seq, time: e.time };
    }
    this.events++;
    this.digest.add(e.hash);
    this.firstSeq ??= e.seq;
    if (this.mode === 'full') this.full(e, item.line);
    else this.filtered(e);
    this.last = { seq: e.seq, hash: e.hash, line: item.line };
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
    const last = this.last;
    if (last && e.seq <= last.seq) {
      this.fail({ seq: e.seq, reason: `event ${e.seq} is out of order: it comes after event ${last.seq}` });
      return;
    }
    const own = sha256(chainText(e)) === e.hash;
    if (!own) this.fail({ seq: e.seq, reason: `event ${e.seq} was changed: its content does not match its hash` });
    if (last && last.seq === e.seq - 1) {
      if (e.prevHash !== last.hash)
        this.fail({
          seq: e.seq,
          reason: `event ${e.seq} does not link to the hash of event ${e.seq - 1}: one of them was changed`,
        });
    } else if (e.seq === 1) {
      if (e.prevHash !== GENESIS_HASH) this.fail({ seq: 1, reason: 'event 1 does not start the chain' });
    } else this.unchecked.push({ after: last?.seq ?? 0, before: e.seq });
    if (own) this.accept(e);
  }

  private accept(e: EvidenceEvent): void {
    this.count++;
    this.prev = { seq: e.seq, hash: e.hash };
    if (this.wanted.has(e.seq)) this.seen.set(e.seq, e.hash);
  }

  finish(format: 'jsonl' | 'csv' = 'jsonl'): OfflineResult {
    if (this.missing) {
      const m = this.missing;
      this.fail({
        seq: m.seq,
        reason:
          m.seq === 1
            ? `event 1 is missing: the file starts at event ${m.next} (line ${m.line})`
            : `event ${m.seq} is missing (line ${m.line} has event ${m.next})`,
      });
      this.missing = undefined;
    }
    const chainOk = this.problems.length === 0;
    const trailer = this.checkTrailer(format, chainOk);
    const result: OfflineResult = {
      ok: this.problems.length === 0,
      mode: this.mode,
      format,
      count: this.count,
      ...(this.firstSeq !== undefined ? { firstSeq: this.firstSeq } : {}),
      ...(this.last ? { lastSeq: this.last.seq } : {}),
      ...(this.mode === 'full' && this.problems.length === 0 ? { head: this.prev?.hash ?? GENESIS_HASH } : {}),
      problems: this.problems,
      unchecked: this.unchecked,
      ...(trailer ? { trailer } : {}),
      ...(this.opts.withoutTrailer ? { withoutTrailer: true } : {}),
    };
    const cps = this.opts.checkpoints ?? [];
    if (cps.length && result.ok) {
      const cp = checkCheckpoints(cps, (seq) => this.seen.get(seq), {
        publicKey: this.opts.publicKey,
        lastSeq: this.prev?.seq ?? 0,
        complete: false,
      });
      const failed = cp.ok ? this.pastHead(cps) : { seq: cp.checkpoint.seq, reason: cp.reason };
      if (!failed && cp.ok) result.checkpoints = { checked: cp.checked, notCovered: cp.unchecked.map((c) => c.seq) };
      else if (failed) {
        result.ok = false;
        result.problems.push(failed);
        result.checkpoints = { checked: 0, notCovered: [], failed };
      }
    }
    return result;
  }

  /**
   * A (validly signed) checkpoint past the export's head — the trailer's head, or the file's last event without
   * one — names an event the chain had that the export does not reach: events were cut from its end (and its
   * trailer re-made, or removed), or the checkpoints were fetched after the export. Either way it is not proven.
   */
  private pastHead(cps: readonly Checkpoint[]): Problem | undefined {
    const head = this.trailer ? this.trailer.t.headSeq : (this.last?.seq ?? 0);
    const past = [...cps].sort((a, b) => a.seq - b.seq).find((c) => c.seq > head);
    if (!past) return undefined;
    return {
      seq: past.seq,
      reason:
        `the checkpoint of ${past.time} names event ${past.seq}, past the end of this export (event ${head}` +
        `${this.trailer ? ', the head its trailer names' : ''}): events were cut from the end of the export, or the ` +
        `checkpoints were fetched after it — fetch the checkpoints first, then the export, or give only the ` +
        `checkpoints up to event ${head}`,
    };
  }

  /** The trailer against the file: present and last, the right kind of export, what it covers, its signature. */
  private checkTrailer(format: 'jsonl' | 'csv', chainOk: boolean): OfflineResult['trailer'] {
    const last = this.last;
    if (this.opts.withoutTrailer) {
      if (this.trailer)
        this.fail({
          reason: `the file has a trailer (line ${this.trailer.line}): verify it without --without-trailer`,
        });
      else if (this.trailerEra) {
        const { seq, time } = this.trailerEra;
        this.fail({
          seq,
          reason: `event ${seq} was recorded ${time}, since exports end with a signed trailer (${TRAILERS_SINCE}): an export holding it was made with one, so this file's trailer was removed (and events after event ${last?.seq ?? seq} may be too) — verify the export as it was downloaded, without --without-trailer`,
        });
      }
      return undefined;
    }
    if (this.trailerBad) return undefined;
    if (!this.trailer) {
      this.fail(
        last
          ? {
              seq: last.seq,
              reason: `no trailer after event ${last.seq} (line ${last.line}): the end of the export was cut off or the trailer removed, so events after event ${last.seq} may be missing`,
            }
          : { reason: 'no events and no trailer: not an evidence export, or its end was cut off' },
      );
      return undefined;
    }
    const { t, line } = this.trailer;
    const fail = (seq: number | null | undefined, reason: string) =>
      this.fail({ ...(typeof seq === 'number' ? { seq } : {}), reason });
    if (this.mode === 'full' && t.filter)
      // first: it explains the gaps the chain check found
      this.problems.unshift({
        ...(this.firstSeq !== undefined ? { seq: this.firstSeq } : {}),
        reason: `a filtered export (its trailer says: ${describeFilter(t.filter)}): verify it with --filtered, which checks it event by event`,
      });
    if (this.afterTrailer !== undefined)
      fail(
        t.lastSeq,
        `line ${this.afterTrailer} comes after the trailer (line ${line}): something was added after the end of the export`,
      );
    if (t.format !== format) fail(undefined, `the trailer is of a ${t.format} export, but this file is ${format}`);
    if (chainOk) this.checkCoverage(t);
    const signature = this.checkSignature(t);
    return { time: t.time, filter: t.filter, headSeq: t.headSeq, headHash: t.headHash, keyId: t.keyId, signature };
  }

  private checkCoverage(t: EvidenceExportTrailer): void {
    const fail = (seq: number | null | undefined, reason: string) =>
      this.fail({ ...(typeof seq === 'number' ? { seq } : {}), reason });
    const lastSeq = this.last?.seq ?? null;
    const firstSeq = this.firstSeq ?? null;
    if (t.lastSeq !== lastSeq) {
      if (lastSeq === null || (t.lastSeq !== null && lastSeq < t.lastSeq))
        fail(
          (lastSeq ?? 0) + 1,
          this.mode === 'full'
            ? `${(lastSeq ?? 0) + 1 === t.lastSeq ? `event ${t.lastSeq} is` : `events ${(lastSeq ?? 0) + 1}–${t.lastSeq} are`} missing at the end: the trailer says the export ends at event ${t.lastSeq}, the file ends at ${lastSeq === null ? 'no event' : `event ${lastSeq}`}`
            : `events are missing at the end: the trailer says the last event is ${t.lastSeq}, the file ends at ${lastSeq === null ? 'no event' : `event ${lastSeq}`}`,
        );
      else
        fail(
          lastSeq,
          `the file goes on to event ${lastSeq}, past event ${t.lastSeq ?? 'none'} where the trailer says the export ends: events were added or the trailer altered`,
        );
      return;
    }
    if (t.lastHash !== (this.last?.hash ?? null))
      fail(lastSeq, `event ${lastSeq} does not have the hash the trailer names for the last event`);
    if (t.firstSeq !== firstSeq)
      fail(
        firstSeq,
        `the trailer says the export starts at event ${t.firstSeq ?? 'none'}, the file starts at event ${firstSeq ?? 'none'}`,
      );
    if (t.count !== this.events)
      fail(
        undefined,
        `the trailer counts ${t.count} events, the file has ${this.events}: events were removed or added`,
      );
    else if (t.digest !== this.digest.hex())
      fail(undefined, "the events' hashes do not match the trailer's digest: events were replaced or reordered");
    if (!t.filter && (t.headSeq !== (t.lastSeq ?? 0) || t.headHash !== (t.lastHash ?? GENESIS_HASH)))
      fail(t.headSeq, `the trailer of a full export names head event ${t.headSeq} but ends at ${t.lastSeq ?? 'none'}`);
    if (t.lastSeq !== null && t.headSeq < t.lastSeq)
      fail(t.lastSeq, `the trailer names head event ${t.headSeq}, before its last event ${t.lastSeq}`);
  }

  private checkSignature(t: EvidenceExportTrailer): NonNullable<OfflineResult['trailer']>['signature'] {
    const key = this.opts.publicKey;
    if (!key) return t.signature ? 'not-checked' : 'unsigned';
    if (!t.signature) {
      this.fail({ reason: 'the trailer is not signed (the console that made it had no signing key)' });
      return 'unsigned';
    }
    if (trailerSignatureOk(t, key)) return 'valid';
    const given = keyIdOf(key);
    this.fail({
      reason:
        given === t.keyId
          ? "the trailer's signature does not verify: the trailer was altered"
          : `the trailer's signature does not verify: it names key ${t.keyId ?? 'none'}, the public key given is ${given} (another console's key, or the trailer was altered)`,
    });
    return 'invalid';
  }
}

/** Verifies the text of an export given in chunks (any split; JSONL or CSV, told by its first line). */
export function verifyExportText(chunks: Iterable<string>, opts: OfflineOptions = {}): OfflineResult {
  const v = new ExportVerifier(opts);
  const reader = new ExportReader((item) => v.push(item));
  for (const c of chunks) reader.push(c);
  reader.end();
  return v.finish(reader.format);
}

/** The same, read as a stream (the CLI: a file of any size, never all in memory). */
export async function verifyExportStream(
  chunks: AsyncIterable<string>,
  opts: OfflineOptions = {},
): Promise<OfflineResult> {
  const v = new ExportVerifier(opts);
  const reader = new ExportReader((item) => v.push(item));
  for await (const c of chunks) reader.push(c);
  reader.end();
  return v.finish(reader.format);
}

/** A JSONL export given as its lines. */
export const verifyExportLines = (lines: Iterable<string>, opts: OfflineOptions = {}): OfflineResult =>
  verifyExportText(
    (function* () {
      for (const l of lines) yield `${l}\n`;
    })(),
    opts,
  );

const SIGNATURE_TEXT = {
  valid: (k: string | null) => `signature valid (key ${k})`,
  invalid: () => 'signature INVALID',
  'not-checked': () => "signature not checked: give the console's public key with --public-key",
  unsigned: () => 'not signed (the console that made it had no signing key)',
} as const;

/** What the CLI prints: a verdict line, then details. */
export function describeResult(r: OfflineResult): string[] {
  const out: string[] = [];
  const range = r.firstSeq !== undefined ? `events ${r.firstSeq}–${r.lastSeq}` : 'no events';
  if (r.ok) {
    if (r.mode === 'full') out.push(`OK: ${r.count} events, one intact chain from event 1; head ${r.head}`);
    else out.push(`OK: ${r.count} events (${range}), each matches its hash; a filtered export, checked event by event`);
  } else {
    const first = r.problems[0];
    out.push(`BROKEN${first?.seq !== undefined ? ` at event ${first.seq}` : ''}: ${first?.reason}`);
    for (const p of r.problems.slice(1, 20))
      out.push(`  also${p.seq !== undefined ? ` event ${p.seq}` : ''}: ${p.reason}`);
    if (r.problems.length > 20) out.push(`  … and ${r.problems.length - 20} more`);
    if (r.mode === 'full' && !r.trailer && first?.reason.includes('is missing'))
      out.push('(a filtered export? its trailer says so; check it event by event with --filtered)');
  }
  const t = r.trailer;
  if (t) {
    const what = t.filter
      ? `filter: ${describeFilter(t.filter)}; of the chain up to event ${t.headSeq}`
      : `a full export of the chain up to event ${t.headSeq}`;
    out.push(`trailer: ${what}, made ${t.time}; ${SIGNATURE_TEXT[t.signature](t.keyId)}`);
  }
  if (r.withoutTrailer)
    out.push('no trailer checked (--without-trailer): events removed from the end of the file cannot be detected');
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
