// A windowed tree's own rows: "Show more" after a sibling set the view holds only part of, and the note that
// says the view is a window (how much is loaded, and what a filter found on the BFF).
import { FILTER_LIMIT } from '../api/use-tree-data.ts';
import type { MoreRow } from '../lib/tree-view.ts';

const fmt = (n: number) => n.toLocaleString('en-US');

export function MoreRowView(props: {
  row: MoreRow;
  top: number;
  height: number;
  active: boolean;
  selected: boolean;
  status: { pending: boolean; error?: string };
  /** children per window */
  window: number;
  onSelect(): void;
  onMore(): void;
}) {
  const { row, status } = props;
  // the counts are of what the view holds (one copy per node); the BFF's cursor says whether there is more, so
  // the set can have more than its count said (objects made since): then it is just "more"
  const left = Math.max(0, row.total - row.loaded);
  const what =
    row.loaded === 0 ? `${fmt(row.total)} children` : left ? `${fmt(left)} more of ${fmt(row.total)}` : 'more';
  const label = status.pending
    ? `loading ${what}…`
    : status.error
      ? `cannot load ${what}: ${status.error}`
      : row.loaded === 0
        ? `load ${what}`
        : left
          ? `show ${fmt(Math.min(left, props.window))} more (${what})`
          : 'show more';
  return (
    <div
      role="treeitem"
      aria-level={row.depth + 1}
      aria-label={label}
      aria-selected={props.selected}
      tabIndex={props.active ? 0 : -1}
      data-node-id={row.id}
      data-testid="tree-more"
      data-parent={row.parentId}
      onClick={props.onSelect}
      className={`absolute right-0 left-0 flex items-center gap-2 px-2 text-sm whitespace-nowrap outline-none focus-visible:ring-2 focus-visible:ring-teal-600 focus-visible:ring-inset ${props.selected ? 'bg-teal-50' : ''}`}
      style={{ top: props.top, height: props.height, paddingLeft: 8 + row.depth * 20 + 24 }}
    >
      {status.pending ? (
        <span className="text-slate-500" role="status">
          {label}
        </span>
      ) : (
        <button
          type="button"
          tabIndex={-1}
          className={`underline ${status.error ? 'text-red-700' : 'text-teal-700'}`}
          onClick={(e) => {
            e.stopPropagation();
            props.onMore();
          }}
        >
          {status.error ? `${label} — try again` : label}
        </button>
      )}
    </div>
  );
}

export function WindowedNote(props: {
  loaded: number;
  total: number;
  filter?: { matched: number | undefined; pending: boolean; error?: string };
}) {
  const f = props.filter;
  return (
    <p className="mb-2 text-xs text-slate-600" role="status" data-testid="tree-window-note">
      {f
        ? f.error
          ? `The filter could not be answered: ${f.error}`
          : f.pending && f.matched === undefined
            ? `Searching all ${fmt(props.total)} objects…`
            : `${fmt(f.matched ?? 0)} of ${fmt(props.total)} objects match${(f.matched ?? 0) > FILTER_LIMIT ? ` (the first ${fmt(FILTER_LIMIT)} are shown: narrow the filter)` : ''}${f.pending ? ' · searching…' : ''}`
        : `A large tree: ${fmt(props.loaded)} of ${fmt(props.total)} objects are loaded (problems first in each set). Expanding loads children; filters search all of them.`}
    </p>
  );
}
