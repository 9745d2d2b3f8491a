// Planned freeze windows (issue 43) through the BFF against the real sandbox, on this file's own estate: bad input
// is a 400 naming the field, a developer is refused (403, recorded), a name is never reused (409); a window starting
// in a few seconds freezes the app at its start (Flux suspended, by the window) and its end restores it exactly
// (the freeze's expiry: Git wins); deleting a window needs a reason and is recorded. Break-glass (decision 0026):
// the person who asked cannot approve it, nor can a developer; a second person's approval ends the window's freeze
// (Flux resumed exactly as before); at the occurrence's end the break-glass ends, recorded. The environment's
// calendar shows the occurrence, the freeze it made and the window planned next.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EnvCalendarEntry, EnvCalendarResponse } from '../../src/api/schemas.ts';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { getJson } from '../../sandbox/scenario.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { startTestConsole } from '../support/console.ts';
import { ownEstate, type Estate } from '../support/own-estate.ts';

let estate: Estate;
let con: Awaited<ReturnType<typeof startTestConsole>>;
let oncall: Signed;
let developer: Signed;
let admin: Signed;
let APP: string;

const FILES = {
  'apps/web/kustomization.yaml':
    'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - cm.yaml\n',
  'apps/web/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-settings\ndata:\n  mode: normal\n',
};

beforeAll(async () => {
  estate = await ownEstate({ name: 'windows', env: 'dev', files: FILES, apps: [{ name: 'web', path: 'apps/web' }] });
  APP = estate.appId('web');
  con = await startTestConsole({ CONSOLE_CONTEXTS: estate.cluster });
  [oncall, developer, admin] = await Promise.all([
    signIn(con.url, 'oncall'),
    signIn(con.url, 'developer'),
    signIn(con.url, 'admin'),
  ]);
}, 300_000);

afterAll(async () => {
  try {
    await con?.close();
  } finally {
    await estate?.teardown();
  }
});

const spec = () => getJson(estate.cluster, ['-n', 'flux-system', 'get', 'kustomization', estate.kustomization('web')]);
const iso = (ms: number) => new Date(ms).toISOString();
const suspended = () => (spec().spec as { suspend?: boolean }).suspend === true;
/** until the Kustomization is (`frozen`) or is not suspended */
const untilSuspended = (frozen: boolean, what: string, timeoutMs = 30_000) =>
  waitFor(what, async () => suspended() === frozen, { timeoutMs, intervalMs: 500 });
const post = (who: Signed, path: string, body: unknown) => as(who, con.url, path, { method: 'POST', body });
const evidence = async (type: string) =>
  ((await as(oncall, con.url, `/api/evidence?type=${type}&limit=1000`)).body as { events: EvidenceEvent[] }).events;

describe('planned freeze windows', () => {
  it('bad input is a 400 naming the field; a developer is refused; a name is never reused', async () => {
    const base = { reason: 'holiday', scope: { apps: [APP] } };
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ ...base, name: 'w1', start: iso(Date.now() + 3_600_000), end: iso(Date.now() + 60_000) }, /^end: .*before/],
      [{ ...base, name: 'w2', cron: '0 16 * * 5', timeZone: 'Mars/Olympus', minutes: 60 }, /^timeZone: unknown/],
      [{ ...base, name: 'w3', cron: '0 0 30 2 *', timeZone: 'Europe/Berlin', minutes: 60 }, /^cron: .*never fires/],
      [{ ...base, name: 'w4', start: '2026-12-20T00:00:00', end: '2027-01-03T00:00:00' }, /^start: .*zone/],
      [{ ...base, name: 'w5', start: iso(Date.now() - 7_200_000), end: iso(Date.now() - 3_600_000) }, /in the past/],
      [
        { name: 'w6', reason: 'x', scope: {}, start: iso(Date.now() + 60_000), end: iso(Date.now() + 120_000) },
        /scope/,
      ],
    ];
    for (const [body, why] of cases) {
      const r = await post(oncall, '/api/freeze-windows', body);
      expect(r.status, r.text).toBe(400);
      expect((r.body as { error: { message: string } }).error.message).toMatch(why);
    }
    const ok = { ...base, name: 'taken', start: iso(Date.now() + 86_400_000), end: iso(Date.now() + 90_000_000) };
    const denied = await post(developer, '/api/freeze-windows', ok);
    expect(denied.status, denied.text).toBe(403);
    expect((await post(oncall, '/api/freeze-windows', ok)).status).toBe(200);
    const again = await post(oncall, '/api/freeze-windows', ok);
    expect(again.status, again.text).toBe(409);
    // deleting needs a reason, and is recorded; the name stays taken
    expect((await post(oncall, '/api/freeze-windows/taken/delete', {})).status).toBe(400);
    const del = await post(oncall, '/api/freeze-windows/taken/delete', { reason: 'plans changed' });
    expect(del.status, del.text).toBe(200);
    expect((await evidence('window.deleted')).map((e) => [e.actor, e.data.window, e.data.reason])).toEqual([
      ['oncall', 'taken', 'plans changed'],
    ]);
    expect((await post(oncall, '/api/freeze-windows', ok)).status).toBe(409);
    const list = (await as(oncall, con.url, '/api/freeze-windows')).body as { windows: Array<{ name: string }> };
    expect(list.windows.map((w) => w.name)).not.toContain('taken');
  });

  it('a window starting in seconds freezes the app at its start, and its end restores it exactly', async () => {
    const before = spec();
    const start = Date.now() + 4_000;
    const end = start + 25_000;
    const r = await post(oncall, '/api/freeze-windows', {
      name: 'short-stop',
      reason: 'release stop for the test',
      scope: { apps: [APP] },
      start: iso(start),
      end: iso(end),
    });
    expect(r.status, r.text).toBe(200);
    const w = (r.body as { window: { next: { from: string } | null; active: unknown; apps: string[] } }).window;
    expect(w).toMatchObject({ active: null, next: { from: iso(start) }, apps: [APP] });
    // not before its start
    expect(suspended()).toBe(false);
    await untilSuspended(true, 'the app frozen by the window');
    expect(Date.now()).toBeGreaterThanOrEqual(start);
    const started = (await evidence('freeze.started')).filter((e) => e.data.window === 'short-stop');
    expect(started).toHaveLength(1);
    expect(started[0]).toMatchObject({ actor: 'console (window short-stop)', data: { until: iso(end), apps: [APP] } });
    expect((await evidence('window.started')).map((e) => e.data.window)).toEqual(['short-stop']);
    const listed = (await as(oncall, con.url, '/api/freeze-windows')).body as {
      windows: Array<{ name: string; active: { until: string } | null }>;
    };
    expect(listed.windows.find((x) => x.name === 'short-stop')?.active?.until).toBe(iso(end));
    // at its end the freeze expires: the automation exactly as before
    await untilSuspended(false, 'the app restored after the window', 60_000);
    expect(Date.now()).toBeGreaterThanOrEqual(end);
    expect(spec().spec).toEqual(before.spec);
    const expired = (await evidence('freeze.expired')).filter((e) => e.data.freezeId === started[0]?.data.freezeId);
    expect(expired).toHaveLength(1);

    // the environment's calendar: the occurrence and the freeze it made, beside a window planned for later (the
    // deleted one is not shown)
    const later = { from: Date.now() + 20 * 3_600_000, until: Date.now() + 21 * 3_600_000 };
    const planned = await post(oncall, '/api/freeze-windows', {
      name: 'later-stop',
      reason: 'planned',
      scope: { apps: [APP] },
      start: iso(later.from),
      end: iso(later.until),
    });
    expect(planned.status, planned.text).toBe(200);
    const from = encodeURIComponent(iso(start - 3_600_000));
    const cal = await as(developer, con.url, `/api/envs/dev/calendar?from=${from}&days=2`);
    expect(cal.status, cal.text).toBe(200);
    const entries = (cal.body as unknown as EnvCalendarResponse).entries.filter((e) => e.type !== 'release');
    const mine = entries.filter((e) => (e.type === 'window' || e.type === 'freeze') && e.apps.includes(APP));
    expect(mine).toEqual([
      expect.objectContaining({ type: 'window', name: 'short-stop', from: iso(start), until: iso(end), apps: [APP] }),
      expect.objectContaining({ type: 'freeze', window: 'short-stop', active: false, apps: [APP] }),
      expect.objectContaining({ type: 'window', name: 'later-stop', from: iso(later.from), until: iso(later.until) }),
    ]);
    expect((await post(oncall, '/api/freeze-windows/later-stop/delete', { reason: 'test done' })).status).toBe(200);
    const frozen = mine[1] as Extract<EnvCalendarEntry, { type: 'freeze' }>;
    expect(Date.parse(frozen.from)).toBeGreaterThanOrEqual(start);
    expect(Date.parse(frozen.until)).toBeGreaterThanOrEqual(end);
    const bad = await as(developer, con.url, '/api/envs/dev/calendar?days=90');
    expect(bad.status, bad.text).toBe(400);
    expect((bad.body as { error: { message: string } }).error.message).toMatch(/days/);
  }, 120_000);

  it('break-glass: refused without a second person, done with one; it ends with the occurrence', async () => {
    const before = spec();
    const start = Date.now() + 3_000;
    const end = start + 40_000;
    const made = await post(oncall, '/api/freeze-windows', {
      name: 'bg-stop',
      reason: 'release stop with a hotfix',
      scope: { apps: [APP] },
      start: iso(start),
      end: iso(end),
    });
    expect(made.status, made.text).toBe(200);
    // not in force yet: nothing to break
    const early = await post(oncall, '/api/freeze-windows/bg-stop/break-glass', { app: APP, reason: 'x', minutes: 5 });
    expect(early.status, early.text).toBe(409);
    await untilSuspended(true, 'the app frozen by the window');
    const bad = await post(oncall, '/api/freeze-windows/bg-stop/break-glass', { app: APP, reason: '', minutes: 0 });
    expect(bad.status, bad.text).toBe(400);
    expect((bad.body as { error: { message: string } }).error.message).toMatch(/^reason: .*; minutes: /);
    const asked = await post(oncall, '/api/freeze-windows/bg-stop/break-glass', {
      app: APP,
      reason: 'CVE hotfix',
      minutes: 5,
    });
    expect(asked.status, asked.text).toBe(200);
    const id = (asked.body as { breakGlass: { id: string } }).breakGlass.id;
    // the person who asked, and a developer, cannot approve it: still frozen
    const self = await post(oncall, `/api/break-glass/${id}/approve`, {});
    expect(self.status, self.text).toBe(403);
    expect((self.body as { error: { message: string } }).error.message).toMatch(/second person/);
    expect((await post(developer, `/api/break-glass/${id}/approve`, {})).status).toBe(403);
    expect(suspended()).toBe(true);
    // a second person: the window's freeze of the app ends, the automation exactly as before
    const ok = await post(admin, `/api/break-glass/${id}/approve`, {});
    expect(ok.status, ok.text).toBe(200);
    expect((ok.body as { breakGlass: { state: string; until: string } }).breakGlass).toMatchObject({
      state: 'approved',
      until: iso(end),
    });
    await untilSuspended(false, 'the app resumed', 30_000);
    expect(spec().spec).toEqual(before.spec);
    expect((await evidence('breakglass.requested')).map((e) => [e.actor, e.data.breakGlass])).toEqual([['oncall', id]]);
    expect((await evidence('breakglass.approved')).map((e) => [e.actor, e.data.requestedBy])).toEqual([
      ['admin', 'oncall'],
    ]);
    const refusals = (await evidence('action.refused')).filter((e) => e.data.action === 'breakglass.approved');
    expect(refusals.map((e) => e.actor)).toEqual(['oncall']);
    // the occurrence's end ends it (its time was up with the window: not frozen again)
    await waitFor(
      'the break-glass ended',
      async () => (await evidence('breakglass.ended')).some((e) => e.data.breakGlass === id),
      { timeoutMs: 60_000, intervalMs: 1_000 },
    );
    expect((await evidence('breakglass.ended')).find((e) => e.data.breakGlass === id)?.data).toMatchObject({
      state: 'ended',
      refrozen: false,
    });
    expect(suspended()).toBe(false);
  }, 150_000);
});
