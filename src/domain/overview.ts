// The overview's order and its first page (issue 27): shared by the BFF, which answers the first paint with
// each group's first cards, and the SPA, which pages and searches the whole list once it has it.

/** What the overview needs of an app to order and group it. */
export interface OverviewApp {
  id: string;
  name: string;
  namespace: string;
  cluster: string;
  env: string;
  health: string;
  sync: string;
  drift?: unknown;
  freeze?: unknown;
  source: { url?: string; path?: string; revisionObserved?: string };
}

/** Unhealthy, out of sync, drifted or frozen: painted before the others of its group. */
export const needsAttention = (a: OverviewApp): boolean =>
  a.health !== 'Healthy' || a.sync !== 'Synced' || !!a.drift || !!a.freeze;

/**
 * Code-unit order. Kubernetes names are lower-case DNS labels, for which it is the locale's order too, and it
 * costs a few milliseconds for 10,000 apps where `localeCompare` costs tens.
 */
export const byCodeUnits = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);

/** env, then cluster, then name (the list's order in every answer) */
export const compareApps = (a: OverviewApp, b: OverviewApp): number =>
  byCodeUnits(a.env, b.env) || byCodeUnits(a.cluster, b.cluster) || byCodeUnits(a.name, b.name);

/** The first `n` of a group (sorted by name): those needing attention first, then the others, each in order. */
export function firstOf<T extends OverviewApp>(apps: readonly T[], n: number): T[] {
  if (apps.length <= n) return [...apps];
  const out: T[] = [];
  for (const a of apps) if (out.length < n && needsAttention(a)) out.push(a);
  if (out.length < n) for (const a of apps) if (out.length < n && !needsAttention(a)) out.push(a);
  return out;
}

export interface OverviewGroupCount {
  env: string;
  cluster: string;
  /** every app of the group (its first cards are in the answer) */
  count: number;
}

/**
 * The first page of the overview: per environment × cluster, the first `n` apps (attention first) and the
 * group's size. `apps` must be in `compareApps` order; the answer keeps it.
 */
export function overviewHead<T extends OverviewApp>(
  apps: readonly T[],
  n: number,
): { apps: T[]; groups: OverviewGroupCount[] } {
  const groups: OverviewGroupCount[] = [];
  const out: T[] = [];
  let i = 0;
  while (i < apps.length) {
    const first = apps[i] as T;
    let j = i;
    while (j < apps.length && (apps[j] as T).env === first.env && (apps[j] as T).cluster === first.cluster) j++;
    const group = apps.slice(i, j);
    // the group's chosen cards, back in name order (the SPA picks attention first again as it paints)
    const chosen = new Set(firstOf(group, n));
    for (const a of group) if (chosen.has(a)) out.push(a);
    groups.push({ env: first.env, cluster: first.cluster, count: group.length });
    i = j;
  }
  return { apps: out, groups };
}

/** What the search box matches, lower-cased. */
export const searchTextOf = (a: OverviewApp): string =>
  `${a.name} ${a.namespace} ${a.cluster} ${a.env} ${a.source.url ?? ''} ${a.source.path ?? ''} ${a.source.revisionObserved ?? ''}`.toLowerCase();

const haystacks = new WeakMap<object, string>();
/**
 * `searchTextOf`, computed once per app object: for lists whose objects are never changed in place (the SPA's
 * cache, where a live update brings a new object), so a keystroke at 10,000 apps does no string building.
 */
export function searchText(a: OverviewApp): string {
  let s = haystacks.get(a);
  if (s === undefined) {
    s = searchTextOf(a);
    haystacks.set(a, s);
  }
  return s;
}

/**
 * Whether a list read at catalog version `list` already holds every change before a stream that began at
 * `stream` (both `<replica boot>:<changes>`): the same replica, and read at or after the stream's start. Anything
 * else (another replica, an older BFF without versions) is not proven current.
 */
export function listIsCurrent(list: string | undefined, stream: string | undefined): boolean {
  const parse = (v: string | undefined) => {
    const m = v ? /^([0-9a-f]+):(\d+)$/.exec(v) : null;
    return m ? { boot: m[1] as string, n: Number(m[2]) } : undefined;
  };
  const a = parse(list);
  const b = parse(stream);
  return !!a && !!b && a.boot === b.boot && a.n >= b.n;
}
