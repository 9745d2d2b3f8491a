// A freeze's length: whole minutes for everyone, as always; seconds (`seconds` in POST /api/freezes) only where
// the console is configured for tests with CONSOLE_FREEZE_MIN_SECONDS (config.ts), and then no shorter than that.
// Checked at start-up (a bad value stops the console), in the request (each refusal names its field), and through
// the service (a freeze of 1 s expires by itself a second later, with the automation restored).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appOf, FakeFlux, noLiveChanges, oncall, replicaOf, waitUntil } from '../../../test/support/freeze-fakes.ts';
import { FREEZE_DEFAULT_MINUTES, FREEZE_MAX_MINUTES } from '../../domain/freeze.ts';
import { ConfigError, freezeMinSeconds, loadConfig } from '../config.ts';
import { SqliteEvidenceStore } from '../evidence/sqlite-store.ts';
import { HttpError } from '../http/errors.ts';
import { freezeLength } from './start.ts';

const dir = mkdtempSync(join(tmpdir(), 'freeze-length-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const load = (env: Record<string, string>) => loadConfig({ CONSOLE_SANDBOX: '1', ...env }, []);

describe('CONSOLE_FREEZE_MIN_SECONDS', () => {
  it('is unset by default: no freeze in seconds', () => {
    expect(load({}).freezeMinSeconds).toBeUndefined();
    expect(freezeMinSeconds({})).toBeUndefined();
    expect(freezeMinSeconds({ CONSOLE_FREEZE_MIN_SECONDS: ' ' })).toBeUndefined();
  });

  it('reads 1 to 60 seconds', () => {
    expect(load({ CONSOLE_FREEZE_MIN_SECONDS: '5' }).freezeMinSeconds).toBe(5);
    expect(freezeMinSeconds({ CONSOLE_FREEZE_MIN_SECONDS: '5' })).toBe(5);
    expect(freezeMinSeconds({ CONSOLE_FREEZE_MIN_SECONDS: '60' })).toBe(60);
  });

  it.each(['0', '61', '2.5', 'soon'])('refuses %j at start-up and where the freeze routes read it', (value) => {
    expect(() => load({ CONSOLE_FREEZE_MIN_SECONDS: value })).toThrow(ConfigError);
    expect(() => load({ CONSOLE_FREEZE_MIN_SECONDS: value })).toThrow(/freezeMinSeconds/);
    expect(() => freezeMinSeconds({ CONSOLE_FREEZE_MIN_SECONDS: value })).toThrow(ConfigError);
    expect(() => freezeMinSeconds({ CONSOLE_FREEZE_MIN_SECONDS: value })).toThrow(/freezeMinSeconds/);
  });
});

describe('a freeze length', () => {
  it('in minutes, as always, whatever the setting (the domain checks the minutes)', () => {
    for (const min of [undefined, 5]) {
      expect(freezeLength({}, min)).toEqual({ ms: FREEZE_DEFAULT_MINUTES * 60_000, errors: [] });
      expect(freezeLength({ minutes: 10 }, min)).toEqual({ ms: 600_000, errors: [] });
    }
  });

  it('in seconds: refused unless the console allows it, and then no shorter than it allows', () => {
    const refused = (input: { minutes?: number; seconds?: number }, min: number | undefined) =>
      freezeLength(input, min).errors.map((e) => `${e.field}: ${e.message}`);
    expect(refused({ seconds: 5 }, undefined)).toEqual(['seconds: not accepted: give the length in minutes']);
    expect(refused({ seconds: 120 }, undefined)).toEqual(['seconds: not accepted: give the length in minutes']);
    expect(refused({ seconds: 4 }, 5)).toEqual(['seconds: the length must be a whole number of seconds, at least 5']);
    expect(refused({ seconds: 5.5 }, 5)).toEqual(['seconds: the length must be a whole number of seconds, at least 5']);
    expect(refused({ seconds: 5, minutes: 1 }, 5)).toEqual([
      'seconds: give the length in minutes or in seconds, not both',
    ]);
    expect(refused({ seconds: FREEZE_MAX_MINUTES * 60 + 1 }, 5)).toEqual([
      `seconds: a freeze lasts at most ${FREEZE_MAX_MINUTES} minutes (24 h)`,
    ]);
    expect(freezeLength({ seconds: 5 }, 5)).toEqual({ ms: 5000, errors: [] });
  });

  it('through the service: a 400 naming the field by default; allowed, a freeze of 1 s that expires by itself', async () => {
    const flux = new FakeFlux();
    flux.add('a');
    flux.add('b');
    const ev = SqliteEvidenceStore.open(dir, 'e.sqlite');
    const apps = [appOf('a'), appOf('b')];
    const plain = replicaOf({ name: 'plain', ev, flux, apps, diff: noLiveChanges });
    const err = await plain.service
      .create(oncall, { cluster: 'c', app: appOf('a').id, reason: 'incident', seconds: 5 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpError);
    expect(err).toMatchObject({ status: 400, message: 'seconds: not accepted: give the length in minutes' });
    expect(flux.patches).toEqual([]);
    await plain.service.settled();

    const quick = replicaOf({ name: 'quick', ev, flux, apps, diff: noLiveChanges, minSeconds: 1 });
    const t0 = Date.now();
    const f = await quick.service.create(oncall, { cluster: 'c', app: appOf('b').id, reason: 'incident', seconds: 1 });
    expect(Date.parse(f.expiresAt) - Date.parse(f.createdAt)).toBe(1000);
    expect(flux.suspended('b')).toBe(true);
    const started = (await ev.list({ limit: 100 })).find((e) => e.type === 'freeze.started');
    expect(started?.data).toMatchObject({ freezeId: f.id, seconds: 1 });
    expect(started?.data).not.toHaveProperty('minutes');
    await waitUntil('the freeze expired', async () => (await quick.store.get(f.id))?.status === 'ended', 10_000);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
    expect(flux.suspended('b')).toBe(false);
    expect((await ev.list({ limit: 100 })).map((e) => e.type)).toContain('freeze.expired');
    await quick.service.settled();
    await ev.close();
  });
});
