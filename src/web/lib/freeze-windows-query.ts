// Planned freeze windows, read (issue 43): the freezes page lists them, the overview's cards say which window
// comes next for each app. One query (polled: a window starts and ends on its own) shared by both features.
import { queryOptions } from '@tanstack/react-query';
import type { FreezeWindowDto } from '../../api/schemas.ts';
import { apiGet } from './api-client.ts';
import { lazy } from './lazy-parsers.ts';

export const windowKeys = { all: ['freeze-windows'] as const };

export const windowsQueryOptions = () =>
  queryOptions({
    queryKey: windowKeys.all,
    queryFn: ({ signal }) => apiGet('/api/freeze-windows', lazy('FreezeWindowsResponse'), { signal }),
    refetchInterval: 15_000,
  });

/** What a card says of the windows covering its app: the one in force now, else the next to start. */
export interface CardWindow {
  name: string;
  from: string;
  until: string;
  active: boolean;
}

/** Per app id, the window in force now (the one running longest) or else the next one to start. */
export function windowsByApp(windows: readonly FreezeWindowDto[]): Map<string, CardWindow> {
  const out = new Map<string, CardWindow>();
  const better = (a: CardWindow, b: CardWindow | undefined) =>
    !b ||
    (a.active && !b.active) ||
    (a.active && b.active && a.until > b.until) ||
    (!a.active && !b.active && a.from < b.from);
  for (const w of windows) {
    const at = w.active
      ? { name: w.name, from: w.active.from, until: w.active.until, active: true }
      : w.next
        ? { name: w.name, from: w.next.from, until: w.next.until, active: false }
        : undefined;
    if (!at) continue;
    for (const id of w.apps) if (better(at, out.get(id))) out.set(id, at);
  }
  return out;
}
