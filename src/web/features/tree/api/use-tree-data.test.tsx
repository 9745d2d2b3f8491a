// @vitest-environment jsdom
// "Show more" in a windowed tree against a BFF that answers with its own window function (msw), while roots turn
// into problems and back between requests: the view asks for `after=<cursor>` (never an offset), ends up
// holding every root once, and a page of repeats only is followed at once by the next. A live update asks for
// each page again as the range it covered: objects that came and went between do not push one out of the view.
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, cleanup, renderHook, waitFor } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import type { ReactNode } from 'react';
import { describe, expect, it } from 'vitest';
import { appPath, type TreeNodeDto, type TreeResponse } from '../../../../api/schemas.ts';
import { windowTree } from '../../../../domain/tree-window.ts';
import { useTreeData } from './use-tree-data.ts';
import { mswServer } from '../../../../../test/support/msw-server.ts';

const APP = 'nonprod/flux-system/kustomization/big';
const server = mswServer({ cleanup });

const node = (kind: string, name: string, parent?: TreeNodeDto, childCount = 0): TreeNodeDto => ({
  id: `nonprod/apps/${kind}/dev/${name}`,
  ref: { cluster: 'nonprod', group: 'apps', version: 'v1', kind, namespace: 'dev', name },
  ...(parent ? { parentId: parent.id } : {}),
  depth: parent ? 1 : 0,
  childCount,
  managed: !parent,
  health: 'Healthy',
  reason: '',
});
/** d0..d{n-1}, each with one ReplicaSet */
function tree(n: number): TreeNodeDto[] {
  return Array.from({ length: n }, (_, i) => {
    const d = node('Deployment', `d${i}`, undefined, 1);
    return [d, node('ReplicaSet', `r${i}`, d)];
  }).flat();
}

/** the BFF: `treeAt(k)` is the tree when the k-th request comes; the `after` (and `through`) of each is kept */
function serve(treeAt: (k: number) => TreeNodeDto[]) {
  const afters: Array<string | null> = [];
  server.use(
    http.get(`/api/apps/${appPath(APP)}/tree`, ({ request }) => {
      const q = new URL(request.url).searchParams;
      expect(q.has('offset')).toBe(false);
      const all = treeAt(afters.length);
      afters.push(q.has('through') ? `${q.get('after')} … ${q.get('through')}` : q.get('after'));
      const r = windowTree(all, {
        window: Number(q.get('window')),
        depth: Number(q.get('depth')),
        ...(q.get('under') ? { under: q.get('under') as string } : {}),
        ...(q.get('after') ? { after: q.get('after') as string } : {}),
        ...(q.get('through') ? { through: q.get('through') as string } : {}),
      });
      return HttpResponse.json({
        appId: APP,
        generatedAt: '2026-12-01T00:00:00.000Z',
        summary: { health: 'Healthy', reason: '', counts: {}, sync: {}, total: all.length },
        nodes: r.nodes,
        partial: true,
        topCount: r.topCount,
        ...(r.next ? { next: r.next } : {}),
        kinds: r.kinds,
      } satisfies TreeResponse);
    }),
  );
  return afters;
}

function renderTree() {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const wrapper = ({ children }: { children: ReactNode }) => (
    <QueryClientProvider client={qc}>{children}</QueryClientProvider>
  );
  const hook = renderHook(() => useTreeData(APP, { health: '', sync: '', kind: '', text: '' }, 2), { wrapper });
  return { ...hook, qc };
}
const roots = (nodes: TreeNodeDto[] | undefined) => (nodes ?? []).filter((n) => !n.parentId).map((n) => n.ref.name);
const sick = (all: TreeNodeDto[], names: string[]) =>
  all.map((n) => (names.includes(n.ref.name) ? { ...n, health: 'Progressing' as const } : n));

describe('useTreeData: "Show more" follows the cursor', () => {
  it('holds every root once at the end, though a different root is a problem on every request', async () => {
    const all = tree(9);
    const afters = serve((k) => sick(all, [`d${(k * 4 + 7) % 9}`]));
    const { result } = renderTree();
    await waitFor(() => expect(result.current.hasMore('')).toBe(true));
    expect(roots(result.current.nodes)).toEqual(['d7', 'd0']);
    for (let clicks = 0; result.current.hasMore(''); clicks++) {
      expect(clicks).toBeLessThan(10);
      const before = afters.length;
      act(() => result.current.loadMore(''));
      await waitFor(() => expect(afters.length).toBeGreaterThan(before));
      await waitFor(() => expect(result.current.pageStatus('').pending).toBe(false));
    }
    expect(roots(result.current.nodes).sort()).toEqual(roots(all).sort());
    expect(new Set(result.current.nodes?.map((n) => n.id)).size).toBe(result.current.nodes?.length);
    expect(afters).toEqual([null, ...['d0', 'd2', 'd4', 'd6'].map((d) => `nonprod/apps/Deployment/dev/${d}`)]);
  });

  it('a page of repeats only (the first window was all problems) is followed at once by the next', async () => {
    const afters = serve(() => sick(tree(6), ['d0', 'd1']));
    const { result } = renderTree();
    await waitFor(() => expect(result.current.hasMore('')).toBe(true));
    expect(roots(result.current.nodes)).toEqual(['d0', 'd1']);
    act(() => result.current.loadMore(''));
    await waitFor(() => expect(roots(result.current.nodes)).toEqual(['d0', 'd1', 'd2', 'd3']));
    expect(afters).toEqual([null, '^', 'nonprod/apps/Deployment/dev/d1']);
    // a ReplicaSet set sent whole with its Deployment: nothing more under it
    expect(result.current.hasMore('nonprod/apps/Deployment/dev/d0')).toBe(false);
  });

  it('a live update asks for each page again as its range: Deployments replaced between still leave every one in view', async () => {
    const id = (d: string) => `nonprod/apps/Deployment/dev/${d}`;
    let all = tree(6);
    const afters = serve(() => all);
    const { result, qc } = renderTree();
    await waitFor(() => expect(result.current.hasMore('')).toBe(true));
    for (const [after, shown] of [
      [id('d1'), 4],
      [id('d3'), 6],
    ] as const) {
      act(() => result.current.loadMore(''));
      await waitFor(() => expect(roots(result.current.nodes)).toHaveLength(shown));
      expect(afters[afters.length - 1]).toBe(after);
    }
    expect(result.current.hasMore('')).toBe(false);
    // d0 and d4 go; their replacements (and one more) sort into every page, and one root turns into a problem
    const now = ['d1', 'd1a', 'd2', 'd3', 'd3a', 'd5', 'd9'];
    all = now
      .flatMap((d) => {
        const dep = node('Deployment', d, undefined, 1);
        return [dep, node('ReplicaSet', `r${d.slice(1)}`, dep)];
      })
      .map((n) => (n.ref.name === 'd5' ? { ...n, health: 'Progressing' as const } : n));
    const asked = afters.length;
    await act(() => qc.invalidateQueries());
    await waitFor(() => expect(roots(result.current.nodes).sort()).toEqual(now));
    // the first page from the start of the set through where it ended, the last to the end
    expect(afters.slice(asked).map(String).sort()).toEqual(['null', `^ … ${id('d3')}`, `${id('d3')} … $`].sort());
    expect(result.current.hasMore('')).toBe(false);
  });
});
