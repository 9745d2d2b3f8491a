import { describe, expect, it } from 'vitest';
import type { AppDto } from '../../api/schemas.ts';
import {
  agoText,
  compactValue,
  driftCardText,
  driftHeadline,
  fieldsText,
  lastWriteText,
  nodeDriftText,
} from './drift-text.ts';

const NOW = Date.parse('2026-12-01T23:08:52Z');
const ref = { cluster: 'nonprod', group: 'apps', version: 'v1', kind: 'Deployment', namespace: 'dev', name: 'tts' };
const episode = {
  ref,
  kind: 'person' as const,
  managers: ['kubectl-scale'],
  fields: [{ path: 'spec.replicas', from: 1, to: 3 }],
  since: '2026-12-01T23:08:12Z',
  lastWriteAt: '2026-12-01T23:08:12Z',
  writes: 1,
};
const drift: NonNullable<AppDto['drift']> = {
  since: episode.since,
  lastWriteAt: episode.lastWriteAt,
  kind: 'person',
  managers: ['kubectl-scale'],
  objectCount: 1,
  objects: [episode],
};

describe('drift text', () => {
  it.each([
    [1, '1'],
    ['h264', 'h264'],
    [undefined, '∅'],
    [null, 'null'],
    [{ a: 1 }, '{"a":1}'],
    ['x'.repeat(40), `${'x'.repeat(23)}…`],
    ['two\nlines', 'two lines'],
  ])('compactValue(%j) = %s', (v, want) => expect(compactValue(v)).toBe(want));

  it.each([
    ['2026-12-01T23:08:12Z', '40 s ago'],
    ['2026-12-01T23:05:52Z', '3 min ago'],
    ['2026-12-01T21:08:52Z', '2 h ago'],
    ['2026-11-27T23:08:52Z', '4 d ago'],
    ['2026-12-01T23:09:00Z', '0 s ago'],
  ])('agoText(%s) = %s', (iso, want) => expect(agoText(iso, NOW)).toBe(want));

  it('the app header: who, when and the field with its values', () => {
    expect(driftHeadline(drift, NOW)).toBe('drifted 40 s ago by kubectl-scale: spec.replicas 1 → 3');
    const conflict = {
      ...drift,
      kind: 'conflict' as const,
      managers: ['cloud-lb-controller'],
      objectCount: 3,
      objects: [
        { ...episode, kind: 'conflict' as const, fields: [{ path: 'metadata.labels.env', from: 'dev', to: 'lb' }] },
      ],
    };
    expect(driftHeadline(conflict, NOW)).toBe(
      'drifted 40 s ago, in conflict with cloud-lb-controller: metadata.labels.env dev → lb (and 2 more objects)',
    );
  });

  it('many fields: the first two, then a count; a field added by hand has no value before', () => {
    const fields = [
      { path: 'a', from: 1, to: 2 },
      { path: 'b', to: 'x' },
      { path: 'c', from: true, to: false },
    ];
    expect(fieldsText(fields)).toBe('a 1 → 2, b ∅ → x, +1 more field');
    expect(fieldsText(fields, false, 1)).toBe('a, +2 more fields');
  });

  it('card and tree row', () => {
    expect(driftCardText(drift)).toBe('kubectl-scale: spec.replicas 1 → 3');
    expect(nodeDriftText(episode)).toBe('drifted by kubectl-scale: spec.replicas 1 → 3');
  });

  it("a row's last write is the newest managedFields entry's manager and time, not the object's age", () => {
    expect(
      lastWriteText(
        {
          createdAt: '2026-12-01T22:00:00Z',
          lastManager: {
            manager: 'kubectl-scale',
            operation: 'Update',
            time: '2026-12-01T23:08:12Z',
            subresource: 'scale',
          },
        },
        NOW,
      ),
    ).toBe('kubectl-scale (scale) · 40 s ago');
    expect(lastWriteText({ createdAt: '2026-12-01T22:08:52Z' }, NOW)).toBe('created 1 h ago');
    expect(lastWriteText({ lastManager: { manager: 'kustomize-controller', operation: 'Apply' } }, NOW)).toBe(
      'kustomize-controller',
    );
  });
});
