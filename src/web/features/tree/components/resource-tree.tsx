import { defaultRangeExtractor, useVirtualizer, type Range } from '@tanstack/react-virtual';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useSearchParams } from 'react-router';
import type { TreeNodeDto } from '../../../../api/schemas.ts';
import { hiddenEnvLine } from '../../../../domain/env-visibility.ts';
import { HealthBadge } from '../../../components/badges.tsx';
import { HookTag } from '../../../components/hook-tag.tsx';
import { useTreeData } from '../api/use-tree-data.ts';
import {
  allExpandable,
  filtersActive,
  indexTree,
  isMoreRow,
  kindsOf,
  problemPaths,
  visibleRows,
  type TreeFilters,
  type TreeRow,
} from '../lib/tree-view.ts';
import { MoreRowView, WindowedNote } from './more-row.tsx';
import { NodeDrawer } from './node-drawer.tsx';
import { LastWrite, NodeDriftMark } from './node-write.tsx';
import { SyncTag } from './sync-tag.tsx';
import { TreeGraph } from './tree-graph.tsx';

const ROW = 30;
const KIND_ICON: Record<string, string> = {
  Deployment: '◫',
  ReplicaSet: '≡',
  Pod: '●',
  Service: '⇄',
  ConfigMap: '⚙',
  HorizontalPodAutoscaler: '⇅',
  StatefulSet: '▤',
  DaemonSet: '▦',
  Job: '▶',
  CronJob: '◷',
  Ingress: '⇲',
  Namespace: '▢',
  EndpointSlice: '⋯',
};

export function ResourceTree({ appId }: { appId: string }) {
  const [sp, setSp] = useSearchParams();
  const filters: TreeFilters = {
    health: sp.get('th') ?? '',
    sync: sp.get('ts') ?? '',
    kind: sp.get('tk') ?? '',
    text: sp.get('tq') ?? '',
  };
  const view = sp.get('view') === 'graph' ? 'graph' : 'list';
  // first paint from the first two levels (a window of them); the whole tree replaces it when it is not large,
  // and a large one stays windowed (api/use-tree-data.ts). ?tw=N asks for a windowed tree of N per window.
  const tw = Number(sp.get('tw'));
  const data = useTreeData(appId, filters, Number.isInteger(tw) && tw > 0 ? Math.min(tw, 5000) : undefined);
  const q = data.base;
  const windowed = data.windowed;
  // every URL write starts from the URL as it is now, never from a render's copy: a write from an older render
  // (the debounced selection below, a click right after it) must not bring back or drop another parameter
  const setParam = (k: string, v: string) => {
    const next = new URLSearchParams(window.location.search);
    if (v) next.set(k, v);
    else next.delete(k);
    setSp(next, { replace: true });
  };
  const nodes = data.nodes;
  const idx = useMemo(() => indexTree(nodes ?? []), [nodes]);
  // 'all' and 'problems' follow the tree as more of it arrives (the whole tree after the first window, a
  // windowed tree's pages): "expand all" clicked before the whole tree came still opens all of it
  const [expandedState, setExpanded] = useState<Set<string> | 'all' | 'problems' | null>(null);
  // default: small trees open fully, big ones start collapsed at the managed objects
  const expanded = useMemo(
    () =>
      expandedState === 'all'
        ? allExpandable(idx)
        : expandedState === 'problems'
          ? problemPaths(idx)
          : (expandedState ?? (idx.byId.size <= 300 ? allExpandable(idx) : new Set<string>())),
    [expandedState, idx],
  );
  const { health: fh, sync: fs, kind: fk, text: ft } = filters;
  const { rootCount, hasMore } = data;
  const rows: TreeRow[] = useMemo(
    () =>
      windowed
        ? visibleRows(idx, expanded, { health: fh, sync: fs, kind: fk, text: ft }, { rootCount, hasMore })
        : visibleRows(idx, expanded, { health: fh, sync: fs, kind: fk, text: ft }),
    [idx, expanded, fh, fs, fk, ft, windowed, rootCount, hasMore],
  );
  // the selected row and the open drawer are in the URL (?sel=, ?node=): a link shows the same thing.
  // Read once; kept in state (arrow keys must not wait for a navigation) and written back, debounced.
  const [selected, setSelected] = useState<string | null>(() => sp.get('sel'));
  const [drawerId, setDrawerId] = useState<string | null>(() => sp.get('node'));
  useEffect(() => {
    const t = setTimeout(() => {
      const cur = new URLSearchParams(window.location.search);
      if (cur.get('sel') === selected && cur.get('node') === drawerId) return;
      setSp(
        () => {
          const next = new URLSearchParams(window.location.search);
          for (const [k, v] of [
            ['sel', selected],
            ['node', drawerId],
          ] as const) {
            if (v) next.set(k, v);
            else next.delete(k);
          }
          return next;
        },
        { replace: true },
      );
    }, 250);
    return () => clearTimeout(t);
  }, [selected, drawerId, setSp]);
  const drawer = drawerId ? idx.byId.get(drawerId) : undefined;
  const openDrawer = (id: string) => {
    setSelected(id);
    setDrawerId(id);
  };
  // roving tabindex: the tree is one Tab stop, the selected row (or the first); arrows move focus
  const activeIndex = Math.max(
    0,
    rows.findIndex((r) => r.id === selected),
  );
  const active = rows[activeIndex];
  // a request to put focus on the active row, as state: the effect runs after the commit that made the
  // change (a ref flag could be taken by a pending effect of an earlier render, while the drawer still
  // made the page inert, and then the focus was lost)
  const [focusRequest, setFocusRequest] = useState(0);
  const requestFocus = () => setFocusRequest((n) => n + 1);
  const scroller = useRef<HTMLDivElement>(null);
  const rangeExtractor = useCallback(
    (range: Range) => {
      // the active row stays rendered (and so focusable) when it is scrolled out of view
      const r = defaultRangeExtractor(range);
      return r.includes(activeIndex) ? r : [...r, activeIndex].sort((a, b) => a - b);
    },
    [activeIndex],
  );
  // eslint-disable-next-line react-hooks/incompatible-library -- TanStack Virtual returns fresh functions each render; this component is not memoized
  const virt = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW,
    overscan: 20,
    rangeExtractor,
  });
  const rowEl = (id: string | undefined) =>
    id ? scroller.current?.querySelector<HTMLElement>(`[data-node-id="${CSS.escape(id)}"]`) : null;
  useEffect(() => {
    if (focusRequest) rowEl(active?.id)?.focus({ preventScroll: true });
    // eslint-disable-next-line react-hooks/exhaustive-deps -- only when asked, with the row of that render
  }, [focusRequest]);

  const toggle = (id: string, open?: boolean) => {
    const next = new Set(expanded);
    if (open ?? !next.has(id)) {
      next.add(id);
      data.loadChildren(id, idx.children.get(id)?.length ?? 0);
    } else next.delete(id);
    setExpanded(next);
  };
  const hasChildren = (n: TreeNodeDto) => idx.children.has(n.id) || (windowed && n.childCount > 0);
  const onKey = (e: React.KeyboardEvent) => {
    const i = rows.findIndex((r) => r.id === selected);
    const cur = rows[i] ?? (selected ? undefined : active);
    const go = (j: number) => {
      const r = rows[Math.max(0, Math.min(rows.length - 1, j))];
      if (r) {
        setSelected(r.id);
        requestFocus();
        virt.scrollToIndex(rows.indexOf(r));
      }
    };
    if (e.key === 'ArrowDown') go(i + 1);
    else if (e.key === 'ArrowUp') go(i - 1);
    else if (e.key === 'Home') go(0);
    else if (e.key === 'End') go(rows.length - 1);
    else if (isMoreRow(cur)) {
      if (e.key === 'Enter') {
        // focus stays on the last loaded sibling (this row goes when the last page comes); a held key waits
        if (!data.pageStatus(cur.parentId).pending) data.loadMore(cur.parentId);
        const prev = rows[i - 1];
        if (prev) {
          setSelected(prev.id);
          requestFocus();
        }
      } else if (e.key === 'ArrowLeft' && cur.parentId) go(rows.findIndex((r) => r.id === cur.parentId));
      else return;
    } else if (e.key === 'ArrowRight' && cur && hasChildren(cur)) toggle(cur.id, true);
    else if (e.key === 'ArrowLeft' && cur) {
      if (expanded.has(cur.id)) toggle(cur.id, false);
      else if (cur.parentId) go(rows.findIndex((r) => r.id === cur.parentId));
    } else if (e.key === 'Enter' && cur) openDrawer(cur.id);
    else return;
    e.preventDefault();
  };

  if (q.isPending) return <p className="text-sm text-slate-500">Loading resource tree…</p>;
  if (q.isError) return <p className="text-sm text-red-700">Cannot load the resource tree: {q.error.message}</p>;
  const graphRows = view === 'graph' ? rows.filter((r): r is TreeNodeDto => !isMoreRow(r)) : [];
  const s = q.data.summary;
  return (
    <section className="mt-4 rounded-lg border border-slate-200 bg-white p-4" data-testid="resource-tree">
      <div className="mb-2 flex flex-wrap items-center gap-2">
        <h2 className="font-semibold">Resources</h2>
        <HealthBadge status={s.health} title={s.reason} />
        <span className="text-xs text-slate-600" data-testid="tree-summary">
          {s.total} objects ·{' '}
          {Object.entries(s.counts)
            .filter(([, v]) => v > 0)
            .map(([k, v]) => `${v} ${k}`)
            .join(', ')}
          {s.sync.Extraneous ? ` · ${s.sync.Extraneous} Extraneous` : ''}
          {s.sync.Missing ? ` · ${s.sync.Missing} Missing` : ''}
        </span>
        <div className="ml-auto flex flex-wrap items-center gap-2 text-sm">
          <input
            aria-label="Filter resources"
            placeholder="filter…"
            className="w-40 rounded border border-slate-300 px-2 py-0.5"
            value={filters.text}
            onChange={(e) => setParam('tq', e.target.value)}
          />
          <select
            aria-label="Resource health"
            className="rounded border border-slate-300"
            value={filters.health}
            onChange={(e) => setParam('th', e.target.value)}
          >
            <option value="">any health</option>
            {['Healthy', 'Progressing', 'Degraded', 'Suspended', 'Missing', 'Unknown'].map((h) => (
              <option key={h}>{h}</option>
            ))}
          </select>
          <select
            aria-label="Resource sync"
            className="rounded border border-slate-300"
            value={filters.sync}
            onChange={(e) => setParam('ts', e.target.value)}
          >
            <option value="">any sync</option>
            {['Synced', 'OutOfSync', 'Missing', 'Extraneous', 'Unknown'].map((h) => (
              <option key={h}>{h}</option>
            ))}
          </select>
          <select
            aria-label="Resource kind"
            className="rounded border border-slate-300"
            value={filters.kind}
            onChange={(e) => setParam('tk', e.target.value)}
          >
            <option value="">any kind</option>
            {(data.kinds ?? kindsOf(nodes ?? [])).map((k) => (
              <option key={k}>{k}</option>
            ))}
          </select>
          <button
            className="rounded border border-slate-300 px-2 py-0.5"
            onClick={() => {
              // windowed: the BFF sends every problem (and its owners) into the view first
              if (windowed) data.loadProblems();
              setExpanded('problems');
            }}
          >
            expand all problems
          </button>
          <button className="rounded border border-slate-300 px-2 py-0.5" onClick={() => setExpanded('all')}>
            expand all
          </button>
          <button className="rounded border border-slate-300 px-2 py-0.5" onClick={() => setExpanded(new Set())}>
            collapse
          </button>
          <button
            className="rounded border border-slate-300 px-2 py-0.5"
            aria-pressed={view === 'graph'}
            onClick={() => setParam('view', view === 'graph' ? '' : 'graph')}
          >
            {view === 'graph' ? 'list view' : 'graph view'}
          </button>
        </div>
      </div>
      {q.data.hiddenByEnvironment ? (
        <p className="mb-2 text-xs text-slate-600" role="status" data-testid="tree-hidden-envs">
          {hiddenEnvLine(q.data.hiddenByEnvironment)}
        </p>
      ) : null}
      {windowed && <WindowedNote loaded={idx.byId.size} total={s.total} filter={data.filter} />}
      {rows.length === 0 && filtersActive(filters) && !data.filter?.pending && !data.filter?.error ? (
        <p
          className="rounded border border-slate-200 p-3 text-sm text-slate-600"
          role="status"
          data-testid="tree-empty"
        >
          No resources match these filters.{' '}
          <button
            type="button"
            className="text-teal-700 underline"
            onClick={() => {
              const next = new URLSearchParams(sp);
              for (const k of ['th', 'ts', 'tk', 'tq']) next.delete(k);
              setSp(next, { replace: true });
            }}
          >
            Clear the filters
          </button>
        </p>
      ) : view === 'graph' ? (
        <TreeGraph rows={graphRows} onOpen={openDrawer} />
      ) : (
        <div
          ref={scroller}
          tabIndex={-1}
          onKeyDown={onKey}
          onFocus={(e) => {
            // focus given to the tree itself (a script, a click on its background) goes to the active row
            if (e.target === e.currentTarget) rowEl(active?.id)?.focus({ preventScroll: true });
          }}
          role="tree"
          aria-label="Resource tree"
          data-testid="tree-scroller"
          className="max-h-[28rem] overflow-auto rounded border border-slate-200 outline-none"
          style={{ height: virt.getTotalSize() + 2 }}
        >
          <div style={{ height: virt.getTotalSize(), position: 'relative' }}>
            {virt.getVirtualItems().map((v) => {
              const r = rows[v.index] as TreeRow;
              if (isMoreRow(r))
                return (
                  <MoreRowView
                    key={r.id}
                    row={r}
                    top={v.start}
                    height={ROW}
                    active={v.index === activeIndex}
                    selected={selected === r.id}
                    status={data.pageStatus(r.parentId)}
                    window={data.window}
                    onSelect={() => setSelected(r.id)}
                    onMore={() => data.loadMore(r.parentId)}
                  />
                );
              const n = r;
              const hasKids = hasChildren(n);
              const open =
                expanded.has(n.id) || (!!(filters.health || filters.sync || filters.kind || filters.text) && hasKids);
              const label = `${n.ref.kind} ${n.ref.name}, ${n.health}${n.sync ? `, ${n.sync}` : ''}${n.hook ? `, ${n.hook.type} hook${n.hook.phase ? ` ${n.hook.phase}` : ''}` : ''}${n.reason ? `: ${n.reason}` : ''}`;
              return (
                <div
                  key={n.id}
                  role="treeitem"
                  aria-label={label}
                  aria-level={n.depth + 1}
                  aria-expanded={hasKids ? open : undefined}
                  aria-selected={selected === n.id}
                  tabIndex={v.index === activeIndex ? 0 : -1}
                  data-node-id={n.id}
                  data-testid="tree-row"
                  data-kind={n.ref.kind}
                  data-name={n.ref.name}
                  data-health={n.health}
                  data-sync={n.sync ?? ''}
                  data-hook={n.hook?.type ?? ''}
                  data-drift={n.drift?.kind ?? ''}
                  onClick={() => setSelected(n.id)}
                  onDoubleClick={() => openDrawer(n.id)}
                  className={`absolute right-0 left-0 flex items-center gap-2 px-2 text-sm whitespace-nowrap outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-inset ${selected === n.id ? 'bg-teal-50' : 'hover:bg-slate-50'}`}
                  style={{ top: v.start, height: ROW, paddingLeft: 8 + n.depth * 20 }}
                >
                  <button
                    type="button"
                    tabIndex={-1}
                    aria-label={open ? 'collapse' : 'expand'}
                    className={`w-4 text-slate-500 ${hasKids ? '' : 'invisible'}`}
                    onClick={(e) => {
                      e.stopPropagation();
                      toggle(n.id);
                    }}
                  >
                    {open ? '▾' : '▸'}
                  </button>
                  <span className="w-4 text-center text-slate-500" aria-hidden>
                    {KIND_ICON[n.ref.kind] ?? '◆'}
                  </span>
                  <span className="text-slate-500">{n.ref.kind}</span>
                  <button
                    type="button"
                    tabIndex={-1}
                    className="min-w-0 truncate font-medium hover:underline"
                    title={n.ref.name}
                    onClick={(e) => {
                      e.stopPropagation();
                      openDrawer(n.id);
                    }}
                  >
                    {n.ref.name}
                  </button>
                  <HealthBadge status={n.health} />
                  {n.sync && <SyncTag sync={n.sync} />}
                  {/* an Argo CD hook: its last run, never a sync verdict (Argo CD compares none of it) */}
                  {n.hook && <HookTag hook={n.hook} />}
                  <span className="truncate text-xs text-slate-600" data-testid="tree-reason" title={n.reason}>
                    {n.reason}
                  </span>
                  {n.drift && <NodeDriftMark drift={n.drift} />}
                  <LastWrite node={n} />
                </div>
              );
            })}
          </div>
        </div>
      )}
      {drawer && (
        <NodeDrawer
          node={drawer}
          onClose={() => {
            setDrawerId(null);
            // back to the row that opened it (in the graph, the drawer gives focus back to the node itself)
            if (view !== 'graph') requestFocus();
          }}
        />
      )}
    </section>
  );
}
