// Offline verification of an export: a full export is the whole chain up to its signed trailer, so a missing
// first event, events cut from the end, a gap, an edited or reordered event, a removed or altered trailer and
// a filtered export without --filtered each fail, named by seq; a filtered export is checked event by event
// and against what its trailer covers; signed checkpoints catch a consistently rewritten chain.
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { EvidenceEvent, EvidenceInput } from '../../domain/evidence.ts';
import { link, sha256, type EvidenceQuery, type EvidenceStore } from './store.ts';
import { exportChunks, fromEvent, jsonlLine, jsonlTrailer } from './export.ts';
import { signTrailer, type EvidenceExportTrailer } from './export-trailer.ts';
import {
  describeResult,
  TRAILERS_SINCE,
  verifyExportLines,
  verifyExportText,
  type OfflineOptions,
} from './offline-verify.ts';
import { signCheckpoint } from './signing.ts';

const input = (i: number, note = 'x'): EvidenceInput => ({
  time: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
  type: i % 2 ? 'app.revision-observed' : 'auth.signed-in',
  actor: i % 2 ? 'kustomize-controller' : 'alice',
  app: i % 2 ? 'nonprod/flux-system/kustomization/app' : null,
  cluster: i % 2 ? 'nonprod' : null,
  env: i % 2 ? 'dev' : null,
  data: { n: i, note },
});

function chain(n: number, change?: { at: number; note: string }): EvidenceEvent[] {
  const out: EvidenceEvent[] = [];
  for (let i = 1; i <= n; i++) out.push(link(out.at(-1), input(i, change?.at === i ? change.note : 'x')));
  return out;
}

const keys = () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { privateKey, publicKey, pem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
};
const key = keys();

/** A read-only store over a fixed chain: what exportChunks reads. */
function storeOf(events: EvidenceEvent[]): EvidenceStore {
  const unused = () => Promise.reject(new Error('not in this test'));
  return {
    kind: 'sqlite',
    async list(q: EvidenceQuery = {}) {
      let r = events.filter(
        (e) =>
          (q.afterSeq === undefined || e.seq > q.afterSeq) &&
          (q.beforeSeq === undefined || e.seq < q.beforeSeq) &&
          (q.env === undefined || e.env === q.env),
      );
      if (q.order !== 'asc') r = [...r].reverse();
      return r.slice(0, q.limit ?? r.length);
    },
    append: unused,
    latestDataByApp: unused,
    verify: unused,
    close: () => Promise.resolve(),
  };
}

/** The export the console makes of `events` (the chain up to its head): its lines, the trailer last. */
async function exported(events: EvidenceEvent[], filter: EvidenceQuery = {}, withKey = key): Promise<string[]> {
  let s = '';
  for await (const c of exportChunks(storeOf(events), filter, { format: 'jsonl', key: withKey, batchSize: 7 })) s += c;
  return s.trimEnd().split('\n');
}
const lines = (events: EvidenceEvent[]) => events.map((e) => jsonlLine(fromEvent(e)).trimEnd());
const trailerOf = (l: string[]) => JSON.parse(l.at(-1) ?? '') as EvidenceExportTrailer;
const withTrailer = (l: string[], t: EvidenceExportTrailer) => [...l.slice(0, -1), jsonlTrailer(t).trimEnd()];
const verdict = (l: string[], opts: OfflineOptions = {}) => describeResult(verifyExportLines(l, opts))[0];

describe('a full export (the default)', () => {
  const events = chain(40);

  it('intact: one chain from event 1 to where the trailer says it ends; its signature checked with the key', async () => {
    const l = await exported(events);
    const r = verifyExportLines(l, { publicKey: key.pem });
    expect(r).toMatchObject({ ok: true, mode: 'full', count: 40, head: events[39]?.hash, problems: [] });
    expect(describeResult(r)).toEqual([
      `OK: 40 events, one intact chain from event 1; head ${events[39]?.hash}`,
      `trailer: a full export of the chain up to event 40, made ${trailerOf(l).time}; signature valid (key ${trailerOf(l).keyId})`,
    ]);
    // without the key: still checked against the file, and it says the signature was not
    expect(describeResult(verifyExportLines(l)).at(-1)).toMatch(
      /; signature not checked: give the console's public key with --public-key$/,
    );
  });

  it('(a) the first event removed: BROKEN at event 1', async () => {
    const l = await exported(events);
    expect(verdict(l.slice(1))).toBe('BROKEN at event 1: event 1 is missing: the file starts at event 2 (line 1)');
  });

  it('(b) the last 10 events removed (the trailer kept): BROKEN at event 31, the first one missing', async () => {
    const l = await exported(events);
    const cut = [...l.slice(0, 30), l.at(-1) ?? ''];
    expect(verdict(cut, { publicKey: key.pem })).toBe(
      'BROKEN at event 31: events 31–40 are missing at the end: the trailer says the export ends at event 40, the file ends at event 30',
    );
    // …and with the trailer removed as well
    expect(verdict(l.slice(0, 30))).toBe(
      'BROKEN at event 30: no trailer after event 30 (line 30): the end of the export was cut off or the trailer removed, so events after event 30 may be missing',
    );
  });

  it('(c) two events swapped: BROKEN at the first, with where it is', async () => {
    const l = await exported(events);
    [l[20], l[21]] = [l[21]!, l[20]!];
    expect(verdict(l)).toBe('BROKEN at event 21: event 21 is out of order: it is on line 22, after event 22 (line 21)');
  });

  it('(d) one event edited: BROKEN at that event', async () => {
    const l = await exported(events);
    l[6] = l[6]!.replace('"note":"x"', '"note":"edited"');
    expect(verdict(l)).toBe('BROKEN at event 7: event 7 was changed: its content does not match its hash');
    // …edited and re-hashed: the next link breaks
    const forged = link(events[5], { ...input(7), data: { n: 7, note: 'forged' } });
    const f = await exported(events);
    f[6] = jsonlLine(fromEvent(forged)).trimEnd();
    expect(verdict(f)).toMatch(/^BROKEN at event 8: event 8 does not link to the hash of event 7/);
  });

  it('a gap in the middle: BROKEN at the missing event', async () => {
    const l = await exported(events);
    l.splice(4, 3);
    expect(verdict(l)).toBe('BROKEN at event 5: event 5 is missing (line 5 has event 8)');
  });

  it('(e) the trailer removed: BROKEN, naming the last event', async () => {
    const l = await exported(events);
    expect(verdict(l.slice(0, -1))).toBe(
      'BROKEN at event 40: no trailer after event 40 (line 40): the end of the export was cut off or the trailer removed, so events after event 40 may be missing',
    );
    expect(verdict([])).toBe('BROKEN: no events and no trailer: not an evidence export, or its end was cut off');
  });

  it('(e) the trailer altered: against the file it fails; made consistent with a cut file, the signature fails', async () => {
    const l = await exported(events);
    const t = trailerOf(l);
    expect(verdict(withTrailer(l, { ...t, count: 39 }))).toBe(
      'BROKEN: the trailer counts 39 events, the file has 40: events were removed or added',
    );
    expect(verdict(withTrailer(l, { ...t, lastSeq: 39 }))).toBe(
      'BROKEN at event 40: the file goes on to event 40, past event 39 where the trailer says the export ends: events were added or the trailer altered',
    );
    expect(verdict(withTrailer(l, { ...t, filter: { query: { env: 'dev' } } }))).toMatch(
      /^BROKEN at event 1: a filtered export \(its trailer says: env=dev\): verify it with --filtered/,
    );
    // the last 10 cut and the trailer rewritten to match them: only the signature can tell
    const cut = l.slice(0, 30);
    const forged: EvidenceExportTrailer = {
      ...t,
      lastSeq: 30,
      count: 30,
      lastHash: events[29]!.hash,
      headSeq: 30,
      headHash: events[29]!.hash,
      digest: sha256(
        events
          .slice(0, 30)
          .map((e) => `${e.hash}\n`)
          .join(''),
      ),
    };
    const file = [...cut, jsonlTrailer(forged).trimEnd()];
    expect(verifyExportLines(file).ok).toBe(true); // structurally consistent: signature not checked
    expect(verdict(file, { publicKey: key.pem })).toBe(
      "BROKEN: the trailer's signature does not verify: the trailer was altered",
    );
    // re-signed with another key: the key id says so
    const other = keys();
    const resigned = signTrailer(forged, other);
    expect(verdict([...cut, jsonlTrailer(resigned).trimEnd()], { publicKey: key.pem })).toMatch(
      /^BROKEN: the trailer's signature does not verify: it names key sha256:[0-9a-f]{64}, the public key given is sha256:[0-9a-f]{64}/,
    );
    // an unsigned trailer is refused when the key is given
    expect(
      verdict([...cut, jsonlTrailer({ ...forged, keyId: null, signature: null }).trimEnd()], { publicKey: key.pem }),
    ).toBe('BROKEN: the trailer is not signed (the console that made it had no signing key)');
  });

  it('a trailer that is not one, or anything after the trailer, fails', async () => {
    const l = await exported(events);
    const bad = [...l.slice(0, -1), JSON.stringify({ ...trailerOf(l), count: 'forty' })];
    expect(verdict(bad)).toMatch(/^BROKEN: the trailer on line 41 is malformed \(count: /);
    expect(verdict([...l, lines(chain(41)).at(-1) ?? ''])).toBe(
      'BROKEN at event 40: line 42 comes after the trailer (line 41): something was added after the end of the export',
    );
  });

  it('a line that is not an event is named', async () => {
    const l = await exported(chain(3));
    l.splice(1, 0, '{"seq": "two"}');
    expect(verifyExportLines(l).problems[0]).toEqual({
      seq: 2,
      reason: 'line 2 is not an evidence event (near event 2)',
    });
  });

  it('--without-trailer: an export made before trailers verifies, and says its end was not checked', () => {
    const r = verifyExportLines(lines(chain(5)), { withoutTrailer: true });
    expect(r.ok).toBe(true);
    expect(describeResult(r).at(-1)).toBe(
      'no trailer checked (--without-trailer): events removed from the end of the file cannot be detected',
    );
    expect(verifyExportLines(lines(chain(5)).slice(1), { withoutTrailer: true }).ok).toBe(false);
  });

  it('--without-trailer refuses a file holding an event recorded since exports have trailers', () => {
    // the instant trailers came (TRAILERS_SINCE) and after it; a time that cannot be read is refused too
    for (const [time, seq] of [
      [TRAILERS_SINCE, 3],
      ['2026-12-05T09:00:00.000Z', 3],
      ['not a time', 3],
    ] as const) {
      const c: EvidenceEvent[] = [];
      for (let i = 1; i <= 5; i++) c.push(link(c.at(-1), { ...input(i), ...(i >= 3 ? { time } : {}) }));
      const r = verifyExportLines(lines(c), { withoutTrailer: true });
      expect(r.ok).toBe(false);
      expect(r.problems).toEqual([
        {
          seq,
          reason: `event 3 was recorded ${time}, since exports end with a signed trailer (2026-12-01T15:03:32.000Z): an export holding it was made with one, so this file's trailer was removed (and events after event 5 may be too) — verify the export as it was downloaded, without --without-trailer`,
        },
      ]);
    }
    // a millisecond before: an export of before trailers
    const c: EvidenceEvent[] = [];
    for (let i = 1; i <= 5; i++) c.push(link(c.at(-1), { ...input(i), time: '2026-12-01T15:03:31.999Z' }));
    expect(verifyExportLines(lines(c), { withoutTrailer: true }).ok).toBe(true);
  });

  it('reads the file in any chunks', async () => {
    const text = `${(await exported(events)).join('\n')}\n`;
    for (const size of [1, 13, 4096]) {
      const chunks: string[] = [];
      for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
      expect(verifyExportText(chunks, { publicKey: key.pem })).toMatchObject({ ok: true, count: 40 });
    }
  });
});

describe('a filtered export (--filtered)', () => {
  const events = chain(12);
  // env=dev: the odd events (1, 3, … 11)
  const dev = () => exported(events, { env: 'dev' });

  it('checks each event, each link between consecutive ones, and the set against the trailer; lists links not checked', async () => {
    const l = await dev();
    const r = verifyExportLines(l, { mode: 'filtered', publicKey: key.pem });
    expect(r).toMatchObject({ ok: true, mode: 'filtered', count: 6, firstSeq: 1, lastSeq: 11 });
    expect(r.unchecked).toHaveLength(5);
    expect(describeResult(r)).toEqual([
      'OK: 6 events (events 1–11), each matches its hash; a filtered export, checked event by event',
      `trailer: filter: env=dev; of the chain up to event 12, made ${trailerOf(l).time}; signature valid (key ${trailerOf(l).keyId})`,
      'links not checked (the event before is not in the file): 5: 1→3, 3→5, 5→7, 7→9, 9→11',
    ]);
  });

  it('without --filtered it fails, saying it is a filtered export', async () => {
    expect(verdict(await dev())).toBe(
      'BROKEN at event 1: a filtered export (its trailer says: env=dev): verify it with --filtered, which checks it event by event',
    );
  });

  it('an event removed from it (first, middle or last), edited or reordered fails', async () => {
    const opts: OfflineOptions = { mode: 'filtered' };
    const l = await dev();
    expect(verdict([...l.slice(0, 2), ...l.slice(3)], opts)).toBe(
      'BROKEN: the trailer counts 6 events, the file has 5: events were removed or added',
    );
    expect(verdict(l.slice(1), opts)).toBe(
      'BROKEN at event 3: the trailer says the export starts at event 1, the file starts at event 3',
    );
    expect(verdict([...l.slice(0, 5), l.at(-1) ?? ''], opts)).toBe(
      'BROKEN at event 10: events are missing at the end: the trailer says the last event is 11, the file ends at event 9',
    );
    const edited = [...l];
    edited[2] = edited[2]!.replace('"note":"x"', '"note":"y"');
    expect(verdict(edited, opts)).toBe('BROKEN at event 5: event 5 was changed: its content does not match its hash');
    const swapped = [...l];
    [swapped[1], swapped[2]] = [swapped[2]!, swapped[1]!];
    expect(verdict(swapped, opts)).toBe('BROKEN at event 3: event 3 is out of order: it comes after event 5');
    expect(verdict(l.slice(0, -1), opts)).toMatch(/^BROKEN at event 11: no trailer after event 11/);
  });

  it('a full export checked with --filtered is fine too', async () => {
    expect(verifyExportLines(await exported(events), { mode: 'filtered' })).toMatchObject({ ok: true, unchecked: [] });
  });
});

describe('with signed checkpoints', () => {
  const events = chain(10);
  const checkpoints = [
    signCheckpoint(events[3]!, '2026-01-01T00:05:00.000Z', key.privateKey),
    signCheckpoint(events[7]!, '2026-01-01T00:09:00.000Z', key.privateKey),
  ];

  it('match an intact export; one past its head fails (events cut from its end, or checkpoints newer than it)', async () => {
    const whole = verifyExportLines(await exported(events), { checkpoints, publicKey: key.pem });
    expect(whole).toMatchObject({ ok: true, checkpoints: { checked: 2, notCovered: [] } });
    expect(describeResult(whole).at(-1)).toBe('signed checkpoints: 2 match');
    // the export ends at event 6; the checkpoint of event 8 says the chain went further
    const r = verifyExportLines(await exported(events.slice(0, 6)), { checkpoints, publicKey: key.pem });
    expect(r).toMatchObject({ ok: false, checkpoints: { checked: 0, failed: { seq: 8 } } });
    expect(r.problems).toEqual([
      {
        seq: 8,
        reason:
          'the checkpoint of 2026-01-01T00:09:00.000Z names event 8, past the end of this export (event 6, the head its trailer names): events were cut from the end of the export, or the checkpoints were fetched after it — fetch the checkpoints first, then the export, or give only the checkpoints up to event 6',
      },
    ]);
    // without a trailer (--without-trailer) the end is the file's last event
    const old = verifyExportLines(lines(events.slice(0, 6)), { checkpoints, publicKey: key.pem, withoutTrailer: true });
    expect(old.problems[0]?.reason).toMatch(
      /^the checkpoint of .* names event 8, past the end of this export \(event 6\):/,
    );
    // a filtered export: checkpoints of events it leaves out, up to its head, are listed as not covered
    const dev = verifyExportLines(await exported(events, { env: 'dev' }), {
      mode: 'filtered',
      checkpoints,
      publicKey: key.pem,
    });
    expect(dev).toMatchObject({ ok: true, checkpoints: { checked: 0, notCovered: [4, 8] } });
  });

  it('catch a chain rewritten consistently from event 6 on (every hash recomputed, the trailer re-signed)', async () => {
    const rewritten = await exported(chain(10, { at: 6, note: 'rewritten' }));
    expect(verifyExportLines(rewritten, { publicKey: key.pem }).ok).toBe(true); // chain and trailer cannot tell
    const r = verifyExportLines(rewritten, { checkpoints, publicKey: key.pem });
    expect(r.ok).toBe(false);
    expect(r.problems[0]).toEqual({
      seq: 8,
      reason:
        'event 8 no longer has the hash signed in the checkpoint of 2026-01-01T00:09:00.000Z: the chain was rewritten at or before event 8',
    });
  });

  it('refuse a checkpoint signed with another key, or altered', async () => {
    const l = await exported(events);
    const other = keys().pem;
    expect(verifyExportLines(l, { checkpoints, publicKey: other }).problems.map((p) => p.reason)).toEqual([
      expect.stringMatching(/^the trailer's signature does not verify: it names key/),
    ]);
    const altered = [{ ...checkpoints[0]!, time: '2026-01-02T00:00:00.000Z' }];
    expect(verifyExportLines(l, { checkpoints: altered, publicKey: key.pem }).problems[0]?.reason).toMatch(
      /checkpoint of event 4 .* has no valid signature/,
    );
  });
});
