// Offline verification of a JSONL export: a full chain, an edited, missing or reordered event named by its
// seq, a filtered export checked event by event, and signed checkpoints catching a consistently rewritten chain.
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { EvidenceEvent, EvidenceInput } from '../../domain/evidence.ts';
import { link } from './store.ts';
import { fromEvent, jsonlLine } from './export.ts';
import { describeResult, verifyExportLines } from './offline-verify.ts';
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
const lines = (events: EvidenceEvent[]) => events.map((e) => jsonlLine(fromEvent(e)).trimEnd());

describe('verifyExportLines: a full export', () => {
  it('is one intact chain: count and head hash', () => {
    const events = chain(10);
    const r = verifyExportLines(lines(events));
    expect(r).toMatchObject({ ok: true, mode: 'full', count: 10, head: events[9]?.hash, problems: [] });
    expect(describeResult(r)[0]).toBe(`OK: 10 events, one intact chain from event 1; head ${events[9]?.hash}`);
  });

  it('an edited event is named by its seq', () => {
    const l = lines(chain(10));
    l[6] = l[6]!.replace('"note":"x"', '"note":"edited"');
    const r = verifyExportLines(l);
    expect(r.ok).toBe(false);
    expect(r.problems[0]).toEqual({ seq: 7, reason: 'event 7 was changed: its content does not match its hash' });
    expect(describeResult(r)[0]).toBe('BROKEN at event 7: event 7 was changed: its content does not match its hash');
  });

  it('an edited and re-hashed event breaks the link of the next one', () => {
    const good = chain(10);
    const forged = link(good[5], { ...input(7), data: { n: 7, note: 'forged' } });
    const l = lines(good);
    l[6] = jsonlLine(fromEvent(forged)).trimEnd();
    expect(verifyExportLines(l).problems[0]).toMatchObject({
      seq: 8,
      reason: expect.stringContaining('event 8 does not link'),
    });
  });

  it('a missing event is named', () => {
    const l = lines(chain(10));
    l.splice(4, 1);
    const r = verifyExportLines(l);
    expect(r.mode).toBe('full');
    expect(r.problems).toEqual([{ seq: 5, reason: 'event 5 is missing (line 5 has event 6)' }]);
  });

  it('a reordered event is named, with where it is', () => {
    const l = lines(chain(10));
    [l[3], l[4]] = [l[4]!, l[3]!];
    const r = verifyExportLines(l);
    expect(r.problems).toEqual([
      { seq: 4, reason: 'event 4 is out of order: it is on line 5, after event 5 (line 4)' },
    ]);
  });

  it('a line that is not an event is named', () => {
    const l = lines(chain(3));
    l.splice(1, 0, '{"seq": "two"}');
    expect(verifyExportLines(l).problems[0]).toEqual({
      seq: 2,
      reason: 'line 2 is not an evidence event (near event 2)',
    });
  });

  it('a missing first event makes it a filtered export unless --full says otherwise', () => {
    const l = lines(chain(5)).slice(1);
    expect(verifyExportLines(l)).toMatchObject({ ok: true, mode: 'filtered' });
    expect(verifyExportLines(l, { mode: 'full' }).problems[0]).toEqual({
      seq: 1,
      reason: 'event 1 is missing (line 1 has event 2)',
    });
  });
});

describe('verifyExportLines: a filtered export', () => {
  const events = chain(12);
  const filtered = events.filter((e) => e.seq === 2 || e.seq === 3 || e.seq === 4 || e.seq === 8 || e.seq === 11);

  it('checks each event and each link between consecutive events, and says which links it could not check', () => {
    const r = verifyExportLines(lines(filtered));
    expect(r).toMatchObject({ ok: true, mode: 'filtered', count: 5, firstSeq: 2, lastSeq: 11 });
    expect(r.unchecked).toEqual([
      { after: 0, before: 2 },
      { after: 4, before: 8 },
      { after: 8, before: 11 },
    ]);
    expect(describeResult(r)).toEqual([
      'OK: 5 events (events 2–11), each matches its hash; a filtered export, checked event by event',
      'links not checked (the event before is not in the file): 3: →2, 4→8, 8→11',
    ]);
  });

  it('names every edited event, and a broken link between two present ones', () => {
    const l = lines(filtered);
    l[2] = l[2]!.replace('"n":4', '"n":40');
    l[4] = l[4]!.replace('"note":"x"', '"note":"y"');
    const r = verifyExportLines(l);
    expect(r.ok).toBe(false);
    expect(r.problems.map((p) => p.seq)).toEqual([4, 11]);
    const swapped = lines(filtered);
    [swapped[1], swapped[2]] = [swapped[2]!, swapped[1]!];
    expect(verifyExportLines(swapped).problems[0]).toEqual({
      seq: 3,
      reason: 'event 3 is out of order: it comes after event 4',
    });
  });
});

describe('verifyExportLines with signed checkpoints', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const events = chain(10);
  const checkpoints = [
    signCheckpoint(events[3]!, '2026-01-01T00:05:00.000Z', privateKey),
    signCheckpoint(events[7]!, '2026-01-01T00:09:00.000Z', privateKey),
  ];

  it('match an intact export; checkpoints past its end are listed as not covered', () => {
    const r = verifyExportLines(lines(events.slice(0, 6)), { checkpoints, publicKey: pem });
    expect(r).toMatchObject({ ok: true, checkpoints: { checked: 1, notCovered: [8] } });
    expect(describeResult(r).at(-1)).toBe('signed checkpoints: 1 match; 1 name events not in the file (8)');
  });

  it('catch a chain rewritten consistently from event 6 on (every hash recomputed)', () => {
    const rewritten = chain(10, { at: 6, note: 'rewritten' });
    expect(verifyExportLines(lines(rewritten)).ok).toBe(true); // the chain alone cannot tell
    const r = verifyExportLines(lines(rewritten), { checkpoints, publicKey: pem });
    expect(r.ok).toBe(false);
    expect(r.problems[0]).toEqual({
      seq: 8,
      reason:
        'event 8 no longer has the hash signed in the checkpoint of 2026-01-01T00:09:00.000Z: the chain was rewritten at or before event 8',
    });
  });

  it('refuse a checkpoint signed with another key, or altered', () => {
    const other = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect(verifyExportLines(lines(events), { checkpoints, publicKey: other }).problems[0]?.reason).toMatch(
      /checkpoint of event 4 .* has no valid signature/,
    );
    const altered = [{ ...checkpoints[0]!, time: '2026-01-02T00:00:00.000Z' }];
    expect(verifyExportLines(lines(events), { checkpoints: altered, publicKey: pem }).ok).toBe(false);
  });
});
