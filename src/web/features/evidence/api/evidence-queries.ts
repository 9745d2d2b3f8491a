import { queryOptions } from '@tanstack/react-query';
import { EvidenceResponse, HealthzResponse } from '../../../../api/schemas.ts';
import { apiGet } from '../../../lib/api-client.ts';

export const evidenceKeys = {
  all: ['evidence'] as const,
  forApp: (app: string) => [...evidenceKeys.all, 'app', app] as const,
  /** the evidence store's health as /healthz reports it (refetched at once when an action is refused) */
  health: () => [...evidenceKeys.all, 'health'] as const,
};

export const evidenceForAppQueryOptions = (app: string) =>
  queryOptions({
    queryKey: evidenceKeys.forApp(app),
    queryFn: ({ signal }) =>
      apiGet(`/api/evidence?app=${encodeURIComponent(app)}&limit=50`, EvidenceResponse, { signal }),
  });

export const EVIDENCE_HEALTH_POLL_MS = 10_000;

export const getEvidenceHealth = (signal?: AbortSignal) => apiGet('/healthz', HealthzResponse, { signal });

/** Polled while the layout is shown; also invalidated when a mutation is refused with EvidenceUnavailable. */
export const evidenceHealthQueryOptions = () =>
  queryOptions({
    queryKey: evidenceKeys.health(),
    queryFn: ({ signal }) => getEvidenceHealth(signal),
    select: (h) => h.evidence,
    refetchInterval: EVIDENCE_HEALTH_POLL_MS,
    staleTime: 0,
  });
