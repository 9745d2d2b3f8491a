// The evidence browser's filters, kept in the URL (shareable, back/forward), and the API and export URLs made
// from them. Times in the URL are what the inputs show (local `YYYY-MM-DDTHH:mm`); the API gets ISO UTC.

export const FILTER_KEYS = ['env', 'cluster', 'app', 'actor', 'type', 'from', 'to', 'q'] as const;
export type FilterKey = (typeof FILTER_KEYS)[number];
export type EvidenceFilters = Partial<Record<FilterKey, string>>;

export function filtersFromSearch(sp: URLSearchParams): EvidenceFilters {
  const f: EvidenceFilters = {};
  for (const k of FILTER_KEYS) {
    const v = sp.get(k)?.trim();
    if (v) f[k] = v;
  }
  return f;
}

/** The URL search params of these filters, other params (none today) dropped; empty values left out. */
export function searchFromFilters(f: EvidenceFilters): URLSearchParams {
  const sp = new URLSearchParams();
  for (const k of FILTER_KEYS) {
    const v = f[k]?.trim();
    if (v) sp.set(k, v);
  }
  return sp;
}

/** A local date-time input value ("2026-01-31T14:05") as ISO UTC; undefined when it is not a time. */
export function localToIso(v: string | undefined): string | undefined {
  if (!v) return undefined;
  const t = new Date(v);
  return Number.isNaN(t.getTime()) ? undefined : t.toISOString();
}

/** The API query string of the filters (times as ISO UTC), plus paging or format. */
export function apiParams(f: EvidenceFilters, extra: Record<string, string | number | undefined> = {}): string {
  const sp = new URLSearchParams();
  for (const k of FILTER_KEYS) {
    const v = k === 'from' || k === 'to' ? localToIso(f[k]) : f[k]?.trim();
    if (v) sp.set(k, v);
  }
  for (const [k, v] of Object.entries(extra)) if (v !== undefined && v !== '') sp.set(k, String(v));
  return sp.toString();
}

export const exportHref = (f: EvidenceFilters, format: 'jsonl' | 'csv'): string =>
  `/api/evidence/export?${apiParams(f, { format })}`;

/** The release manifests the same export's records kept (checked offline with `--manifests`). */
export const manifestsHref = (f: EvidenceFilters): string => `/api/evidence/export/manifests?${apiParams(f, {})}`;

export const PAGE_SIZE = 50;
