// An Argo CD app's sync windows read from its AppProject in the informer cache: the windows that match the app's
// destination, the verdict at an instant, the card's line; a project not read yet is `unknown` (never "none"); one
// evaluation is shared by the apps that match the same windows, and is not reused past the verdict's next change.
import { describe, expect, it } from 'vitest';
import type { App } from '../../domain/app.ts';
import type { ClusterManager } from '../kube/cluster-manager.ts';
import { SyncWindowsReader, syncWindowsOf } from './sync-windows.ts';

type Obj = Record<string, unknown>;
const HOLIDAY = {
  kind: 'deny',
  schedule: '0 10 * * *',
  duration: '2h',
  namespaces: ['shop'],
  description: 'holiday freeze',
};
const PAYMENTS = {
  kind: 'allow',
  schedule: '0 9 * * 2',
  duration: '1h',
  applications: ['payments-*'],
  timeZone: 'Europe/Berlin',
};

function world(opts: { synced?: boolean; project?: Obj | undefined } = {}) {
  let project: Obj | undefined =
    'project' in opts
      ? opts.project
      : { metadata: { resourceVersion: '1' }, spec: { syncWindows: [HOLIDAY, PAYMENTS] } };
  const clusters = {
    clusters: new Map([
      [
        'c',
        {
          state: { kinds: { 'argoproj.io/AppProject': { synced: opts.synced ?? true, absent: false, objects: 1 } } },
          get: (_k: unknown, ns: string, name: string) => (ns === 'argocd' && name === 'default' ? project : undefined),
        },
      ],
    ]),
  } as unknown as ClusterManager;
  const raw = new Map<string, Obj>();
  const app = (name: string, destNs: string, controller: App['controller'] = 'argocd'): App => {
    const id = `c/argocd/application/${name}`;
    raw.set(id, { spec: { destination: { namespace: destNs, server: 'https://kubernetes.default.svc' } } });
    return { id, cluster: 'c', controller, namespace: 'argocd', name, project: 'default' } as App;
  };
  let now = Date.parse('2026-12-07T10:30:00Z'); // a Monday, inside the holiday deny window (10:00–12:00 UTC)
  const reader = new SyncWindowsReader(
    clusters,
    (id) => raw.get(id),
    () => now,
  );
  return {
    reader,
    app,
    setNow: (t: string) => (now = Date.parse(t)),
    setProject: (p: Obj | undefined) => (project = p),
  };
}

describe('SyncWindowsReader', () => {
  it('applies the windows that match the destination: a deny window blocks automated sync until it ends', () => {
    const w = world();
    const v = w.reader.forApp(w.app('shop-web', 'shop'));
    expect(v?.status).toBe('ok');
    expect(v?.windows.map((x) => x.description ?? x.schedule)).toEqual(['holiday freeze']);
    expect(v?.automated).toBe('blocked');
    expect(v?.manual).toBe('blocked');
    expect(v?.blockedBy).toEqual({
      window: expect.objectContaining({ description: 'holiday freeze' }),
      until: '2026-12-07T12:00:00.000Z',
    });
    expect(v?.nextChange).toBe('2026-12-07T12:00:00.000Z');
    expect(w.reader.brief(w.app('shop-web', 'shop'))).toEqual({
      automated: 'blocked',
      reason: 'in deny window ‘holiday freeze’',
      until: '2026-12-07T12:00:00.000Z',
    });
  });

  it('an app only an allow window matches is held outside it, until it opens (its time zone)', () => {
    const w = world();
    const v = w.reader.forApp(w.app('payments-api', 'payments'));
    expect(v?.automated).toBe('blocked');
    // Tuesday 09:00 Europe/Berlin is 08:00 UTC
    expect(v?.blockedBy?.until).toBe('2026-12-08T08:00:00.000Z');
    expect(w.reader.brief(w.app('payments-api', 'payments'))?.reason).toBe('outside allow window 0 9 * * 2 for 1h');
  });

  it('no window for the app: allowed, and no card line; a Flux app: nothing at all', () => {
    const w = world();
    expect(w.reader.forApp(w.app('other', 'other'))).toMatchObject({ automated: 'allowed', windows: [] });
    expect(w.reader.brief(w.app('other', 'other'))).toBeUndefined();
    expect(w.reader.forApp(w.app('flux-app', 'shop', 'flux'))).toBeUndefined();
  });

  it('a project not read yet, or missing, is unknown and says why', () => {
    const notRead = world({ synced: false });
    expect(notRead.reader.forApp(notRead.app('shop-web', 'shop'))).toMatchObject({
      status: 'unknown',
      automated: 'unknown',
      why: expect.stringMatching(/AppProjects on c are not read yet/),
    });
    const missing = world({ project: undefined });
    expect(missing.reader.brief(missing.app('shop-web', 'shop'))).toEqual({
      automated: 'unknown',
      reason: 'AppProject argocd/default not found on c',
    });
  });

  it('a window Argo CD cannot parse makes the answer unknown, naming it', () => {
    const w = world({
      project: { metadata: { resourceVersion: '2' }, spec: { syncWindows: [{ ...HOLIDAY, schedule: '61 * * * *' }] } },
    });
    const v = w.reader.forApp(w.app('shop-web', 'shop'));
    expect(v?.status).toBe('unknown');
    expect(v?.why).toMatch(/Argo CD cannot read deny window ‘holiday freeze’/);
  });

  it('shares an evaluation among apps matching the same windows; a new project version or the next change ends it', () => {
    const w = world();
    const a = w.reader.forApp(w.app('shop-a', 'shop'));
    const b = w.reader.forApp(w.app('shop-b', 'shop'));
    expect(b).toBe(a);
    w.setProject({ metadata: { resourceVersion: '9' }, spec: { syncWindows: [] } });
    expect(w.reader.forApp(w.app('shop-a', 'shop'))?.automated).toBe('allowed');
    w.setProject({ metadata: { resourceVersion: '10' }, spec: { syncWindows: [HOLIDAY] } });
    expect(w.reader.forApp(w.app('shop-a', 'shop'))?.automated).toBe('blocked');
    // evaluated at 11:59:50; at 12:00:01 the deny window has ended (its next change), within the 30 s reuse
    w.setNow('2026-12-07T11:59:50Z');
    w.setProject({ metadata: { resourceVersion: '11' }, spec: { syncWindows: [HOLIDAY] } });
    expect(w.reader.forApp(w.app('shop-a', 'shop'))?.automated).toBe('blocked');
    w.setNow('2026-12-07T12:00:01Z');
    expect(w.reader.forApp(w.app('shop-a', 'shop'))?.automated).toBe('allowed');
  });

  it('reads spec.syncWindows as Argo CD decodes them (wrong types dropped)', () => {
    expect(
      syncWindowsOf({
        spec: {
          syncWindows: [{ kind: 'deny', schedule: '* * * * *', duration: '1h', namespaces: 'x', manualSync: 'yes' }],
        },
      }),
    ).toEqual([{ kind: 'deny', schedule: '* * * * *', duration: '1h' }]);
    expect(syncWindowsOf(undefined)).toEqual([]);
  });
});
