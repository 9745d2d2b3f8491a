import { describe, expect, it } from 'vitest';
import { compareApps, firstOf, listIsCurrent, overviewHead, searchText, type OverviewApp } from './overview.ts';

const app = (env: string, cluster: string, name: string, over: Partial<OverviewApp> = {}): OverviewApp => ({
  id: `${cluster}/${name}`,
  name,
  namespace: 'flux-system',
  cluster,
  env,
  health: 'Healthy',
  sync: 'Synced',
  source: { url: 'https://git.example.com/Team/Repo.git', path: './apps' },
  ...over,
});

describe('the overview order and its first page', () => {
  it('orders by env, cluster, then name, as the locale does for Kubernetes names', () => {
    const names = ['web-2', 'web.a', 'web-10', 'api', 'web', 'a-b', 'a.b', 'a0'];
    const apps = names.map((n) => app('dev', 'c', n));
    expect([...apps].sort(compareApps).map((a) => a.name)).toEqual([...names].sort((x, y) => x.localeCompare(y)));
    expect(
      [app('prod', 'a', 'x'), app('dev', 'b', 'y'), app('dev', 'a', 'z')].sort(compareApps).map((a) => a.id),
    ).toEqual(['a/z', 'b/y', 'a/x']);
  });

  it('picks the apps needing attention first, then the rest, each in order', () => {
    const apps = ['a', 'b', 'c', 'd', 'e'].map((n) =>
      app('dev', 'c', n, n === 'd' ? { health: 'Degraded' } : n === 'e' ? { drift: { since: 'x' } } : {}),
    );
    expect(firstOf(apps, 3).map((a) => a.name)).toEqual(['d', 'e', 'a']);
    expect(firstOf(apps, 9).map((a) => a.name)).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it("answers each group's first n (in name order) and every group's size", () => {
    const apps = [
      ...Array.from({ length: 5 }, (_, i) => app('dev', 'nonprod', `d${i}`, i === 4 ? { sync: 'OutOfSync' } : {})),
      app('dev', 'other', 'solo'),
      ...Array.from({ length: 3 }, (_, i) => app('prod', 'prod', `p${i}`)),
    ].sort(compareApps);
    const head = overviewHead(apps, 2);
    expect(head.groups).toEqual([
      { env: 'dev', cluster: 'nonprod', count: 5 },
      { env: 'dev', cluster: 'other', count: 1 },
      { env: 'prod', cluster: 'prod', count: 3 },
    ]);
    expect(head.apps.map((a) => a.name)).toEqual(['d0', 'd4', 'solo', 'p0', 'p1']);
    expect(overviewHead([], 2)).toEqual({ apps: [], groups: [] });
  });

  it('matches the search text lower-cased, once per app object', () => {
    const a = app('dev', 'c', 'Checkout');
    expect(searchText(a)).toContain('checkout');
    expect(searchText(a)).toContain('team/repo.git');
    expect(searchText({ ...a, name: 'renamed' })).toContain('renamed');
  });
});

describe('listIsCurrent: a list read at or after the stream began missed nothing', () => {
  it('the same replica, read at the stream’s version or later', () => {
    expect(listIsCurrent('ab12:7', 'ab12:7')).toBe(true);
    expect(listIsCurrent('ab12:9', 'ab12:7')).toBe(true);
  });
  it('read before the stream began, another replica, or no version: not proven', () => {
    expect(listIsCurrent('ab12:6', 'ab12:7')).toBe(false);
    expect(listIsCurrent('cd34:9', 'ab12:7')).toBe(false);
    expect(listIsCurrent(undefined, 'ab12:7')).toBe(false);
    expect(listIsCurrent('ab12:7', undefined)).toBe(false);
    expect(listIsCurrent('ab12:x', 'ab12:1')).toBe(false);
  });
});
