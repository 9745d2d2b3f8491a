// The releases of one environment (issue 16): its release metrics and its apps' newest releases.
import type { QueryClient } from '@tanstack/react-query';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { can } from '../../../../domain/access.ts';
import { apiGet } from '../../../lib/api-client.ts';
import { lazy } from '../../../lib/lazy-parsers.ts';
import { sessionQueryOptions } from '../../../lib/session.ts';

export const DAY_CHOICES = [7, 30, 90] as const;
export const DEFAULT_DAYS = 30;

export interface EnvReleasesParams {
  /** one cluster of the environment; undefined: every cluster the reader may see */
  cluster?: string | undefined;
  /** the last 1–90 UTC days */
  days: number;
}

export const envReleaseKeys = {
  all: ['env-releases'] as const,
  forEnv: (env: string, p: EnvReleasesParams) => [...envReleaseKeys.all, env, p.cluster ?? '', p.days] as const,
};

/** `?days=&cluster=` of the page's URL (days outside 1–90 fall back to the default). */
export function readEnvReleasesParams(sp: URLSearchParams): EnvReleasesParams {
  const d = Number(sp.get('days'));
  const days = Number.isInteger(d) && d >= 1 && d <= 90 ? d : DEFAULT_DAYS;
  const cluster = sp.get('cluster') || undefined;
  return { days, ...(cluster ? { cluster } : {}) };
}

export const getEnvReleases = (env: string, p: EnvReleasesParams, signal?: AbortSignal) => {
  const q = new URLSearchParams({ days: String(p.days), ...(p.cluster ? { cluster: p.cluster } : {}) });
  return apiGet(`/api/envs/${encodeURIComponent(env)}/releases?${q}`, lazy('EnvReleasesResponse'), { signal });
};

/** Refetched while the page is open: the recorder adds releases as they happen. */
export const envReleasesQueryOptions = (env: string, p: EnvReleasesParams) =>
  queryOptions({
    queryKey: envReleaseKeys.forEnv(env, p),
    queryFn: ({ signal }) => getEnvReleases(env, p, signal),
    refetchInterval: 30_000,
  });

export function useEnvReleases(env: string, p: EnvReleasesParams, enabled: boolean) {
  return useQuery({ ...envReleasesQueryOptions(env, p), enabled });
}

/** The route loader's prefetch: only for a reader who may see the environment's evidence (no 403 to record). */
export async function prefetchEnvReleases(qc: QueryClient, env: string, url: URL): Promise<void> {
  const s = qc.getQueryData(sessionQueryOptions().queryKey);
  if (!s || !can(s.user.grants, 'evidence.read', { env })) return;
  await Promise.allSettled([qc.ensureQueryData(envReleasesQueryOptions(env, readEnvReleasesParams(url.searchParams)))]);
}
