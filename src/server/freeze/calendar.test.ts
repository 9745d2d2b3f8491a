// An environment's calendar from its sources (calendar.ts): planned windows' occurrences covering its apps, each
// Argo CD project window computed once for all the apps it applies to, freezes as the reader sees them (a window's
// named, one whose start never held skipped), releases only in the past; a source that cannot be read is listed
// as unknown, never as "nothing".
import { describe, expect, it } from 'vitest';
import { appOf } from '../../../test/support/freeze-fakes.ts';
import type { EnvCalendarEntry } from '../../api/schemas.ts';
import type { App } from '../../domain/app.ts';
import { windowActorName } from '../../domain/window-actor.ts';
import { envCalendar, type CalendarSources } from './calendar.ts';
import type { FreezeRow } from './store.ts';
import type { StoredWindow } from './window-store.ts';

const T0 = Date.parse('2026-12-07T00:00:00Z'); // a Monday
const H = 3_600_000;
const D = 24 * H;
const iso = (t: number) => new Date(t).toISOString();
const argo = (name: string): App => ({ ...appOf(name), controller: 'argocd', kind: 'Application', project: 'shop' });

const stored = (spec: StoredWindow['spec']): StoredWindow => ({
  spec,
  createdBy: 'oncall',
  createdAt: iso(T0),
  deleted: null,
});

function freeze(id: string, more: Partial<FreezeRow> = {}): FreezeRow {
  return {
    id,
    cluster: 'c',
    env: 'prod',
    app: null,
    status: 'ended',
    reason: 'incident 7',
    incident: null,
    createdBy: 'alice',
    createdAt: iso(T0 - 2 * D),
    expiresAt: iso(T0 - D),
    updatedAt: iso(T0 - D),
    endedAt: iso(T0 - 2 * D + 2 * H),
    endedBy: 'alice',
    endReason: 'done',
    version: 1,
    doc: {
      targets: [
        {
          appId: appOf('a').id,
          kind: 'Kustomization',
          namespace: 'flux-system',
          name: 'a',
          controller: 'flux',
          env: 'prod',
          prior: { suspend: false } as never,
          applied: true,
        },
      ],
      extensions: [],
      startedAt: iso(T0 - 2 * D + 60_000),
    },
    ...more,
  };
}

function sources(more: Partial<CalendarSources> = {}): CalendarSources {
  return {
    windows: async () => [],
    freezes: async () => [],
    labels: () => undefined,
    syncWindows: () => undefined,
    seen: async (f) => f.doc.targets.map((t) => t.appId),
    releases: async () => ({ releases: [], truncated: false }),
    ...more,
  };
}

const range = { from: T0 - 7 * D, to: T0 + 30 * D, now: T0 };
const types = (es: EnvCalendarEntry[]) => es.map((e) => e.type);

describe('an environment calendar', () => {
  it('lists planned occurrences covering its apps, in time order with freezes and releases', async () => {
    const cal = await envCalendar(
      'prod',
      range,
      [appOf('a'), appOf('b')],
      sources({
        windows: async () => [
          stored({
            name: 'fridays',
            reason: 'no friday deploys',
            scope: { envs: ['prod'] },
            cron: '0 16 * * 5',
            timeZone: 'Europe/Berlin',
            minutes: 480,
          }),
          stored({ name: 'other', reason: 'x', scope: { envs: ['dev'] }, start: iso(T0 + D), end: iso(T0 + 2 * D) }),
          stored({
            name: 'only-b',
            reason: 'b only',
            scope: { apps: [appOf('b').id] },
            start: iso(T0 + D),
            end: iso(T0 + 2 * D),
          }),
        ],
        freezes: async () => [
          freeze('f1'),
          freeze('f2', {
            status: 'failed',
            doc: { ...freeze('x').doc, targets: [{ ...freeze('x').doc.targets[0]!, applied: false }] },
          }),
        ],
        releases: async () => ({
          releases: [{ app: appOf('a').id, sha: 'abc', at: iso(T0 - 3 * D), failed: false }],
          truncated: false,
        }),
      }),
    );
    const fridays = cal.entries.filter((e) => e.type === 'window' && e.name === 'fridays');
    // Fridays 11, 18, 25 December, 1 January, and the 4th of December (in the week before)
    expect(fridays.map((e) => (e.type === 'window' ? e.from : ''))).toEqual([
      '2026-12-04T15:00:00.000Z',
      '2026-12-11T15:00:00.000Z',
      '2026-12-18T15:00:00.000Z',
      '2026-12-25T15:00:00.000Z',
      '2027-01-01T15:00:00.000Z',
    ]);
    expect(fridays[0]).toMatchObject({ until: '2026-12-04T23:00:00.000Z', apps: [appOf('a').id, appOf('b').id] });
    expect(cal.entries.find((e) => e.type === 'window' && e.name === 'only-b')).toMatchObject({
      apps: [appOf('b').id],
    });
    expect(cal.entries.some((e) => e.type === 'window' && e.name === 'other')).toBe(false);
    // the failed freeze that never held is left out; the ended one spans its start to its end
    expect(cal.entries.filter((e) => e.type === 'freeze')).toEqual([
      expect.objectContaining({
        id: 'f1',
        from: iso(T0 - 2 * D + 60_000),
        until: iso(T0 - 2 * D + 2 * H),
        active: false,
      }),
    ]);
    expect(types(cal.entries).slice(0, 3)).toEqual(['release', 'window', 'freeze']);
    expect(cal.unknown).toEqual([]);
  });

  it("names the window that made a freeze, and shows only the apps the reader sees; a freeze of none isn't shown", async () => {
    const byWindow = freeze('f3', {
      createdBy: windowActorName('holiday'),
      status: 'active',
      endedAt: null,
      expiresAt: iso(T0 + 5 * D),
    });
    const cal = await envCalendar(
      'prod',
      range,
      [appOf('a')],
      sources({
        freezes: async () => [byWindow, freeze('f4')],
        seen: async (f) => (f.id === 'f4' ? [] : f.doc.targets.map((t) => t.appId)),
      }),
    );
    expect(cal.entries).toEqual([
      expect.objectContaining({ type: 'freeze', id: 'f3', window: 'holiday', active: true, until: iso(T0 + 5 * D) }),
    ]);
  });

  it('computes each Argo CD project window once for the apps it applies to; one it cannot read is unknown', async () => {
    const deny = { kind: 'deny' as const, schedule: '0 22 * * *', duration: '2h', description: 'nightly batch' };
    const bad = { kind: 'allow' as const, schedule: '0 25 * * *', duration: '1h' };
    const cal = await envCalendar(
      'prod',
      { from: T0, to: T0 + 3 * D, now: T0 },
      [argo('x'), argo('y'), argo('z'), appOf('f')],
      sources({
        syncWindows: (a) =>
          a.controller !== 'argocd'
            ? undefined
            : a.name === 'z'
              ? { project: 'other', windows: [], why: 'AppProject argocd/other not found on c' }
              : { project: 'shop', windows: [deny, bad], why: 'Argo CD cannot read allow window' },
      }),
    );
    const sync = cal.entries.filter((e) => e.type === 'sync-window');
    expect(sync).toHaveLength(3);
    expect(sync[0]).toMatchObject({
      kind: 'deny',
      label: 'nightly batch',
      from: '2026-12-07T22:00:00.000Z',
      until: '2026-12-08T00:00:00.000Z',
      apps: [argo('x').id, argo('y').id],
    });
    expect(cal.unknown.map((u) => u.source)).toEqual([
      'c: AppProject other',
      'c: AppProject shop, allow window 0 25 * * * for 1h',
    ]);
    expect(cal.unknown[1]!.why).toMatch(/refuses every sync/);
  });

  it('asks for releases only when the range reaches into the past; a store that fails is unknown, not empty', async () => {
    let asked = 0;
    const failing = sources({
      releases: async () => {
        asked++;
        throw new Error('the evidence store cannot be read: SQLITE_BUSY');
      },
      freezes: async () => {
        throw new Error('connection refused');
      },
    });
    const ahead = await envCalendar('prod', { from: T0, to: T0 + D, now: T0 }, [appOf('a')], failing);
    expect(asked).toBe(0);
    expect(ahead.unknown.map((u) => u.source)).toEqual(['freezes']);
    const back = await envCalendar('prod', range, [appOf('a')], failing);
    expect(asked).toBe(1);
    expect(back.unknown).toEqual([
      { source: 'freezes', why: 'the store cannot be read: connection refused' },
      { source: 'releases', why: 'the evidence store cannot be read: SQLITE_BUSY' },
    ]);
  });
});
