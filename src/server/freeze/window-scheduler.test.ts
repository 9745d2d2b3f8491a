// The scheduler of planned freeze windows over the freeze service (in-memory apiserver, real SQLite store): an
// occurrence in force is started once, whichever replica looks; each covered app frozen until its end, an app
// frozen already extended to it (windows combine), an app on-call unfroze during the window left alone; a replica
// without the Lease does nothing; a window not in force freezes nothing.
import { describe, expect, it } from 'vitest';
import { appOf, freezeTestDir, oncall, soloReplica } from '../../../test/support/freeze-fakes.ts';
import type { FreezeWindowSpec } from '../../domain/freeze-windows.ts';
import { WindowScheduler } from './window-scheduler.ts';
import { WindowStore } from './window-store.ts';

const { dir, track } = freezeTestDir('windows-');

const MIN = 60_000;

function setup(names: string[]) {
  const r = soloReplica(dir, names, track);
  const store = new WindowStore(r.ev);
  let leads = true;
  const scheduler = (replica: string, now: () => number = Date.now) =>
    new WindowScheduler({
      store,
      freezes: r.service,
      apps: () => names.map((n) => appOf(n)),
      labels: () => undefined,
      recorder: { observe: (e) => void r.ev.append(e) },
      leads: () => leads,
      replica,
      now,
    });
  const setLeads = (v: boolean) => (leads = v);
  return { ...r, store, scheduler, setLeads };
}

const oneOff = (name: string, apps: string[], from: number, until: number): FreezeWindowSpec => ({
  name,
  reason: 'holiday freeze',
  scope: { apps: apps.map((a) => appOf(a).id) },
  start: new Date(from).toISOString(),
  end: new Date(until).toISOString(),
});

describe('planned freeze windows: the scheduler', () => {
  it('starts an occurrence once, whichever replica looks: each app frozen until its end, by the window', async () => {
    const { store, scheduler, service, flux, events } = setup(['a', 'b']);
    const until = Date.now() + 30 * MIN;
    await store.create(oneOff('holiday', ['a', 'b'], Date.now() - MIN, until), 'oncall', new Date().toISOString());
    await scheduler('r1').tick();
    await scheduler('r2').tick();
    expect(flux.suspended('a') && flux.suspended('b')).toBe(true);
    const started = await events('freeze.started');
    expect(started).toHaveLength(2);
    for (const e of started) {
      expect(e.actor).toBe('console (window holiday)');
      expect(e.data).toMatchObject({ window: 'holiday', reason: 'holiday: holiday freeze' });
      const f = await service.view(String(e.data.freezeId));
      expect(Date.parse(f.expiresAt)).toBe(until);
    }
    expect(await events('window.started')).toHaveLength(1);
    const [occ] = await store.occurrences('holiday');
    expect(occ).toMatchObject({ startedBy: 'r1', apps: [appOf('a').id, appOf('b').id] });
  });

  it('combines: an app frozen already is extended to the window’s end, never shortened', async () => {
    const { store, scheduler, service, events } = setup(['c', 'd']);
    const mine = await service.create(oncall, { cluster: 'c', app: appOf('c').id, reason: 'incident', minutes: 10 });
    const long = await service.create(oncall, { cluster: 'c', app: appOf('d').id, reason: 'incident', minutes: 600 });
    const until = Date.now() + 60 * MIN;
    await store.create(oneOff('release-stop', ['c', 'd'], Date.now() - MIN, until), 'oncall', new Date().toISOString());
    await scheduler('r1').tick();
    expect(Date.parse((await service.view(mine.id)).expiresAt)).toBe(until);
    expect((await service.view(long.id)).expiresAt).toBe(long.expiresAt);
    const ext = await events('freeze.extended');
    expect(ext.map((e) => e.data)).toEqual([
      expect.objectContaining({ freezeId: mine.id, window: 'release-stop', until: new Date(until).toISOString() }),
    ]);
    expect(await events('freeze.started')).toHaveLength(2);
  });

  it('an app on-call unfroze during the window stays unfrozen; a new look freezes nothing again', async () => {
    const { store, scheduler, service, flux } = setup(['e']);
    await store.create(oneOff('w', ['e'], Date.now() - MIN, Date.now() + 30 * MIN), 'oncall', new Date().toISOString());
    await scheduler('r1').tick();
    const [id] = [...(await service.holders()).values()];
    await service.end(String(id), oncall, []);
    expect(flux.suspended('e')).toBe(false);
    await scheduler('r2').tick();
    expect(flux.suspended('e')).toBe(false);
    expect(await service.holders()).toEqual(new Map());
  });

  it('does nothing without the Lease, or outside the window', async () => {
    const { store, scheduler, flux, setLeads, events } = setup(['f', 'g']);
    const at = new Date().toISOString();
    await store.create(oneOff('later', ['f'], Date.now() + 60 * MIN, Date.now() + 120 * MIN), 'oncall', at);
    await scheduler('r1').tick();
    expect(flux.suspended('f')).toBe(false);
    await store.create(oneOff('now', ['g'], Date.now() - MIN, Date.now() + 10 * MIN), 'oncall', at);
    setLeads(false);
    await scheduler('r1').tick();
    expect(flux.suspended('g')).toBe(false);
    expect(await events('window.started')).toEqual([]);
    // the Lease back, at the later window's start (injected time): f frozen; g's window is over by then
    setLeads(true);
    await scheduler('r1', () => Date.now() + 61 * MIN).tick();
    expect(flux.suspended('f')).toBe(true);
    expect(flux.suspended('g')).toBe(false);
    expect((await events('window.started')).map((e) => e.data.window)).toEqual(['later']);
  });

  it('announces an occurrence within the hour before it, once per cluster and environment, whichever replica looks', async () => {
    const { store, scheduler, events, flux } = setup(['h', 'i']);
    const at = new Date().toISOString();
    await store.create(oneOff('soon', ['h', 'i'], Date.now() + 30 * MIN, Date.now() + 90 * MIN), 'oncall', at);
    await store.create(oneOff('later', ['h'], Date.now() + 120 * MIN, Date.now() + 180 * MIN), 'oncall', at);
    await scheduler('r1').tick();
    await scheduler('r2').tick();
    const soon = await events('window.starting-soon');
    expect(soon.map((e) => [e.data.window, e.cluster, e.env, e.data.apps])).toEqual([['soon', 'c', 'prod', 2]]);
    expect(flux.suspended('h')).toBe(false);
    // an hour on (injected time): the later one is announced too, the first not again
    await scheduler('r1', () => Date.now() + 61 * MIN).tick();
    expect((await events('window.starting-soon')).map((e) => e.data.window)).toEqual(['soon', 'later']);
  });
});
