import { queryOptions } from '@tanstack/react-query';
import { EvidenceResponse } from '../../../../api/schemas.ts';
import { apiGet } from '../../../lib/api-client.ts';

export const evidenceKeys = {
  all: ['evidence'] as const,
  forApp: (app: string) => [...evidenceKeys.all, 'app', app] as const,
};

export const evidenceForAppQueryOptions = (app: string) =>
  queryOptions({
    queryKey: evidenceKeys.forApp(app),
    queryFn: ({ signal }) => apiGet(`/api/evidence?app=${encodeURIComponent(app)}&limit=50`, EvidenceResponse, signal),
  });
