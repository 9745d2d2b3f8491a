// Break-glass through a planned window (decision 0026) over the freeze service (in-memory apiserver, real SQLite
// store): refused without a second person, done with one (the window's freeze of the app ends, the controller
// resumes); frozen again by the window when its minutes are up, once; a person's freeze is not the window's to
// lift; a request nobody approved lapses with the occurrence; bad input names the field.
import { describe, expect, it } from 'vitest';
import { appOf, freezeTestDir, oncall, soloReplica } from '../../../test/support/freeze-fakes.ts';
import { parseGrant } from '../../domain/access.ts';
import type { FreezeWindowSpec } from '../../domain/freeze-windows.ts';
import type { Principal } from '../auth/index.ts';
import { BreakGlassService, type BreakGlassUser } from './break-glass.ts';
import { BreakGlassStore } from './break-glass-store.ts';
import { WindowScheduler } from './window-scheduler.ts';
import { WindowStore } from './window-store.ts';

const { dir, track } = freezeTestDir('break-glass-');

const MIN = 60_000;

const person = (name: string, grant: string): Principal => ({
  name,
  source: 'local',
  groups: [],
  grants: [parseGrant(grant)],
});
const denied: string[] = [];
const userOf = (p: Principal, ok = true): BreakGlassUser => ({
  principal: p,
  may: () => ok,
  denied: (_c, _e, _a, why) => denied.push(why),
});
const dev = userOf(person('dev', 'developer@c/prod'));
const oc1 = userOf(person('oc1', 'oncall@c/prod'));
const oc2 = userOf(person('oc2', 'oncall@c/prod'));

async function setup(names: string[], opts: { frozenByOncall?: string[] } = {}) {
  const r = soloReplica(dir, names, track);
  const windows = new WindowStore(r.ev);
  const bg = new BreakGlassStore(r.ev);
  const apps = () => names.map((n) => appOf(n));
  const until = Date.now() + 30 * MIN;
  for (const n of opts.frozenByOncall ?? [])
    await r.service.create(oncall, { cluster: 'c', app: appOf(n).id, reason: 'incident', minutes: 10 });
  const spec: FreezeWindowSpec = {
    name: 'stop',
    reason: 'release stop',
    scope: { apps: names.map((n) => appOf(n).id) },
    start: new Date(Date.now() - MIN).toISOString(),
    end: new Date(until).toISOString(),
  };
  await windows.create(spec, 'oc1', new Date().toISOString());
  const scheduler = (now: () => number = Date.now) =>
    new WindowScheduler({
      store: windows,
      breakGlass: bg,
      freezes: r.service,
      apps,
      labels: () => undefined,
      recorder: r.recorder,
      leads: () => true,
      replica: 'r1',
      now,
    });
  const service = (now: () => number = Date.now) =>
    new BreakGlassService({
      store: bg,
      windows,
      freezes: r.service,
      recorder: r.recorder,
      apps,
      labels: () => undefined,
      now,
    });
  await scheduler().tick();
  return { ...r, bg, until, scheduler, service };
}

describe('break-glass through a planned window', () => {
  it('is refused without a second person and done with one: the window’s freeze of the app ends', async () => {
    const { flux, service, events, recorder, bg } = await setup(['a']);
    expect(flux.suspended('a')).toBe(true);
    const s = service();
    // bad input names the field; a window not in force or not covering the app is a conflict
    await expect(s.request('stop', dev, { app: appOf('a').id, reason: '', minutes: 90 })).rejects.toThrow(
      /reason: .*; minutes: whole minutes from 1 to 60/,
    );
    await expect(s.request('nope', dev, { app: appOf('a').id, reason: 'hotfix', minutes: 5 })).rejects.toThrow(
      /no window nope/,
    );
    await expect(
      s.request('stop', userOf(person('viewer', 'viewer@c/prod'), false), {
        app: appOf('a').id,
        reason: 'hotfix',
        minutes: 5,
      }),
    ).rejects.toThrow(/developer or oncall role/);
    const b = await s.request('stop', dev, { app: appOf('a').id, reason: 'CVE hotfix', minutes: 5 });
    expect(b).toMatchObject({ state: 'requested', requestedBy: 'dev', window: 'stop' });
    // one open request per app and occurrence
    await expect(s.request('stop', oc1, { app: appOf('a').id, reason: 'again', minutes: 5 })).rejects.toThrow(
      /open break-glass/,
    );
    // the requester cannot approve it (here: a developer who is on-call too), refused and recorded
    const devOncall = userOf({ ...person('dev', 'oncall@c/prod') });
    await expect(s.approve(b.id, devOncall)).rejects.toThrow(/needs a second person/);
    expect(flux.suspended('a')).toBe(true);
    const approved = await s.approve(b.id, oc2);
    expect(approved).toMatchObject({ state: 'approved', approvedBy: 'oc2' });
    expect(approved.until).toBeGreaterThan(Date.now() + 4 * MIN);
    expect(flux.suspended('a')).toBe(false);
    await expect(s.approve(b.id, oc1)).rejects.toThrow(/is approved, not waiting/);
    await recorder.flush();
    expect((await events('breakglass.requested')).map((e) => e.actor)).toEqual(['dev']);
    expect((await events('breakglass.approved')).map((e) => [e.actor, e.data.requestedBy])).toEqual([['oc2', 'dev']]);
    const refused = (await events('action.refused')).filter((e) => e.data.action === 'breakglass.approved');
    expect(refused.map((e) => e.data.reason)).toEqual([
      expect.stringMatching(/second person/),
      expect.stringMatching(/is approved, not waiting/),
    ]);
    expect((await events('freeze.ended')).map((e) => e.actor)).toEqual(['oc2']);
    expect((await bg.get(b.id))?.state).toBe('approved');
  });

  it('the window holds the app again when the minutes are up (once), not before', async () => {
    const { flux, service, scheduler, events, recorder, bg, until } = await setup(['b']);
    const b = await service().request('stop', dev, { app: appOf('b').id, reason: 'hotfix', minutes: 2 });
    await service().approve(b.id, oc1);
    expect(flux.suspended('b')).toBe(false);
    // the next look, within the minutes: not frozen by the window
    await scheduler().tick();
    expect(flux.suspended('b')).toBe(false);
    // the minutes up (injected time): frozen again until the occurrence's end, by the window
    const later = () => Date.now() + 3 * MIN;
    await scheduler(later).tick();
    await scheduler(later).tick();
    expect(flux.suspended('b')).toBe(true);
    await recorder.flush();
    const ended = await events('breakglass.ended');
    expect(ended.map((e) => e.data)).toEqual([
      expect.objectContaining({
        breakGlass: b.id,
        state: 'ended',
        refrozen: true,
        until: new Date(until).toISOString(),
      }),
    ]);
    const started = await events('freeze.started');
    expect(started.map((e) => e.actor)).toEqual(['console (window stop)', 'console (window stop)']);
    expect((await bg.get(b.id))?.state).toBe('ended');
  });

  it('a person’s freeze is not the window’s to lift; a request nobody approved lapses with the occurrence', async () => {
    const { flux, service, scheduler, events, recorder } = await setup(['c', 'd'], { frozenByOncall: ['c'] });
    const c = await service().request('stop', dev, { app: appOf('c').id, reason: 'hotfix', minutes: 5 });
    await expect(service().approve(c.id, oc1)).rejects.toThrow(/held by oncall's freeze, not by window stop/);
    expect(flux.suspended('c')).toBe(true);
    const d = await service().request('stop', dev, { app: appOf('d').id, reason: 'hotfix', minutes: 5 });
    const over = () => Date.now() + 31 * MIN;
    await scheduler(over).tick();
    await expect(service(over).approve(d.id, oc1)).rejects.toThrow(/is lapsed/);
    await recorder.flush();
    expect((await events('breakglass.ended')).map((e) => [e.data.breakGlass, e.data.state]).sort()).toEqual(
      [
        [c.id, 'lapsed'],
        [d.id, 'lapsed'],
      ].sort(),
    );
  });
});
