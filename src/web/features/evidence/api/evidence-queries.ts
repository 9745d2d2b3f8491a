import { infiniteQueryOptions, queryOptions } from '@tanstack/react-query';
import { apiGet } from '../../../lib/api-client.ts';
import { lazy } from '../../../lib/lazy-parsers.ts';
import { apiParams, PAGE_SIZE, type EvidenceFilters } from '../lib/evidence-filters.ts';

export const evidenceKeys = {
  all: ['evidence'] as const,
  forApp: (app: string) => [...evidenceKeys.all, 'app', app] as const,
  /** the evidence store's health as /healthz reports it (refetched at once when an action is refused) */
  health: () => [...evidenceKeys.all, 'health'] as const,
  browse: (f: EvidenceFilters) => [...evidenceKeys.all, 'browse', f] as const,
  verify: () => [...evidenceKeys.all, 'verify'] as const,
};

/** The evidence browser: pages of 50, newest first; the next page continues below `nextCursor`. */
export const evidenceBrowseQueryOptions = (f: EvidenceFilters) =>
  infiniteQueryOptions({
    queryKey: evidenceKeys.browse(f),
    initialPageParam: undefined as number | undefined,
    queryFn: ({ pageParam, signal }) =>
      apiGet(`/api/evidence?${apiParams(f, { limit: PAGE_SIZE, before: pageParam })}`, lazy('EvidenceResponse'), {
        signal,
      }),
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });

/** Verifying walks the whole chain: only when asked (the button), never refetched by itself. */
export const verifyChainQueryOptions = () =>
  queryOptions({
    queryKey: evidenceKeys.verify(),
    queryFn: ({ signal }) => apiGet('/api/evidence/verify', lazy('VerifyResponse'), { signal }),
    enabled: false,
    staleTime: Infinity,
    gcTime: 0,
  });

export const evidenceForAppQueryOptions = (app: string) =>
  queryOptions({
    queryKey: evidenceKeys.forApp(app),
    queryFn: ({ signal }) =>
      apiGet(`/api/evidence?app=${encodeURIComponent(app)}&limit=50`, lazy('EvidenceResponse'), { signal }),
  });

export const EVIDENCE_HEALTH_POLL_MS = 10_000;

export const getEvidenceHealth = (signal?: AbortSignal) => apiGet('/healthz', lazy('HealthzResponse'), { signal });

/** Polled while the layout is shown; also invalidated when a mutation is refused with EvidenceUnavailable. */
export const evidenceHealthQueryOptions = () =>
  queryOptions({
    queryKey: evidenceKeys.health(),
    queryFn: ({ signal }) => getEvidenceHealth(signal),
    select: (h) => h.evidence,
    refetchInterval: EVIDENCE_HEALTH_POLL_MS,
    staleTime: 0,
  });
