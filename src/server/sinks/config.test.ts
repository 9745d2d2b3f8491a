import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadSinks } from './config.ts';
import { NOTIFICATION_KINDS } from '../../domain/notifications.ts';

let dir: string;
let secretFile: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sinks-config-'));
  secretFile = join(dir, 'hmac');
  writeFileSync(secretFile, 'a-secret-of-enough-length\n');
  chmodSync(secretFile, 0o600);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const file = (sinks: unknown[]) => {
  const f = join(dir, 'sinks.json');
  writeFileSync(f, JSON.stringify({ sinks }));
  return f;
};

describe('loadSinks', () => {
  it('CDEvents by default; a notifications sink hears every kind unless it names some', () => {
    const got = loadSinks(
      file([
        { name: 'audit', url: 'https://e.example.com/x', secretFile },
        { name: 'chat', url: 'https://hooks.example.com/s', secretFile, format: 'slack' },
        { name: 'pager', url: 'http://127.0.0.1:9/p', secretFile, format: 'json', notify: ['freeze.ending-soon'] },
      ]),
    );
    expect(got.map((s) => [s.name, s.format, s.notify.length, s.secret])).toEqual([
      ['audit', 'cdevents', 0, 'a-secret-of-enough-length'],
      ['chat', 'slack', NOTIFICATION_KINDS.length, 'a-secret-of-enough-length'],
      ['pager', 'json', 1, 'a-secret-of-enough-length'],
    ]);
  });

  it('clear errors: notify on a CDEvents sink, an unknown kind or format, a secret anyone may read', () => {
    expect(() => loadSinks(file([{ name: 'a', url: 'https://e.example.com', secretFile, notify: ['x'] }]))).toThrow(
      /sinks\.0\.notify/,
    );
    expect(() =>
      loadSinks(file([{ name: 'a', url: 'https://e.example.com', secretFile, format: 'json', notify: [] }])),
    ).toThrow(/sinks\.0\.notify/);
    expect(() =>
      loadSinks(file([{ name: 'a', url: 'https://e.example.com', secretFile, notify: ['freeze.ending-soon'] }])),
    ).toThrow(/notify is for a notifications sink/);
    expect(() => loadSinks(file([{ name: 'a', url: 'https://e.example.com', secretFile, format: 'teams' }]))).toThrow(
      /sinks\.0\.format/,
    );
    chmodSync(secretFile, 0o644);
    expect(() => loadSinks(file([{ name: 'a', url: 'https://e.example.com', secretFile }]))).toThrow(
      /readable by anyone/,
    );
  });

  it('retryMaxSeconds caps the back-off of one sink; unset, the sink keeps the delivery default (30 s)', () => {
    const [plain, quick] = loadSinks(
      file([
        { name: 'audit', url: 'https://e.example.com/x', secretFile },
        { name: 'quick', url: 'https://e.example.com/y', secretFile, retryMaxSeconds: 2 },
      ]),
    );
    expect(plain?.retryMaxMs).toBeUndefined();
    expect(quick?.retryMaxMs).toBe(2000);
    for (const bad of [0, 1.5, 3601, '2'])
      expect(() =>
        loadSinks(file([{ name: 'a', url: 'https://e.example.com', secretFile, retryMaxSeconds: bad }])),
      ).toThrow(/sinks\.0\.retryMaxSeconds/);
  });
});
