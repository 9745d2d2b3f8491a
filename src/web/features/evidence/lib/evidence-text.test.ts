import { describe, expect, it } from 'vitest';
import { durationText, evidenceText } from './evidence-text.ts';

const object = 'nonprod/apps/Deployment/dev/tts-gateway';
const fields = [{ path: 'spec.replicas', from: 1, to: 3 }];

describe('evidenceText', () => {
  it('a drift episode: who and what when detected; start, end and duration when it ends', () => {
    expect(
      evidenceText({ type: 'drift.detected', data: { object, kind: 'person', managers: ['kubectl-scale'], fields } }),
    ).toBe('kubectl-scale: Deployment dev/tts-gateway spec.replicas 1 → 3');
    expect(
      evidenceText(
        {
          type: 'drift.reverted',
          data: {
            object,
            kind: 'person',
            managers: ['kubectl-scale'],
            fields,
            startedAt: '2026-12-01T23:08:12Z',
            endedAt: '2026-12-01T23:08:27.400Z',
            durationMs: 15_400,
            writes: 3,
          },
        },
        'UTC',
      ),
    ).toBe('kubectl-scale: Deployment dev/tts-gateway spec.replicas · 23:08:12 UTC → 23:08:27 UTC (15 s), 3 writes');
    expect(
      evidenceText({
        type: 'drift.detected',
        data: {
          object: 'nonprod/core/Service/dev/tts',
          kind: 'conflict',
          managers: ['cloud-lb-controller'],
          fields: [],
        },
      }),
    ).toBe('conflict with cloud-lb-controller: Service dev/tts');
  });

  it('a freeze ending soon says when, as every time in the console (with the zone), never a raw ISO string', () => {
    expect(evidenceText({ type: 'freeze.ending-soon', data: { expiresAt: '2026-12-01T23:08:12.345Z' } }, 'UTC')).toBe(
      'ends at 23:08:12 UTC: on-call notified',
    );
    expect(evidenceText({ type: 'freeze.ending-soon', data: {} })).toBe('ends at ?: on-call notified');
  });

  it('other records: the revision', () => {
    expect(evidenceText({ type: 'app.revision-observed', data: { revision: 'main@sha1:3f2a1c9e11' } })).toBe('3f2a1c9');
    expect(evidenceText({ type: 'console.started', data: {} })).toBe('');
  });

  it.each([
    [15_400, '15 s'],
    [65_000, '1 min 5 s'],
    [120_000, '2 min'],
    [7_380_000, '2 h 3 min'],
  ])('durationText(%d) = %s', (ms, want) => expect(durationText(ms)).toBe(want));

  it('an access.denied row says what was denied, how, and why', () => {
    expect(
      evidenceText({
        type: 'access.denied',
        data: {
          action: 'prune.approve',
          method: 'POST',
          route: '/api/prune-previews/:id/approve',
          reason: 'You need the reviewer role on prod/prod to approve this prune',
          repeatedSinceLastRecord: 2,
        },
      }),
    ).toBe(
      'denied: approve a prune (POST /api/prune-previews/:id/approve): You need the reviewer role on prod/prod to approve this prune; 2 more times since',
    );
  });

  it('a refusal says what was refused and why; a resumed prune says why it resumed', () => {
    expect(
      evidenceText({
        type: 'action.refused',
        data: { action: 'prune.approved', reason: 'you already decided on this preview', repeatedSinceLastRecord: 3 },
      }),
    ).toBe('refused: prune.approved: you already decided on this preview; 3 more times since');
    expect(evidenceText({ type: 'action.refused', data: { action: 'freeze.extended', reason: 'not active' } })).toBe(
      'refused: freeze.extended: not active',
    );
    expect(
      evidenceText({
        type: 'app.env-conflict',
        data: { conflict: "label says dev; the console's mapping says prod", envSource: 'mapping' },
      }),
    ).toBe("env conflict: label says dev; the console's mapping says prod");
    expect(evidenceText({ type: 'prune.resumed', data: { reason: 'the snapshot still matches' } })).toBe(
      'resumed after a restart: the snapshot still matches',
    );
  });

  it('freeze records read as sentences', () => {
    expect(
      evidenceText(
        { type: 'freeze.started', data: { apps: ['a'], until: '2026-12-01T12:00:00Z', reason: 'incident 42' } },
        'UTC',
      ),
    ).toBe('froze 1 app until 12:00:00 UTC: incident 42');
    expect(
      evidenceText({
        type: 'freeze.ended',
        data: { decisions: [{ action: 'write-back' }, { action: 'git-wins' }, { action: 'git-wins' }] },
      }),
    ).toBe('unfrozen: 1 change written back, 2 left to Git');
    expect(evidenceText({ type: 'freeze.expired', data: { expiredWhileConsoleWasDown: true } })).toBe(
      'expired while the console was down: Git wins',
    );
  });
});
