// @vitest-environment jsdom
// The evidence banner: from /healthz (polled every 10 s), shown while the store fails or has a backlog.
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, cleanup, render, screen, waitFor } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { handlers } from '../../../../../mocks/handlers.ts';
import type { HealthzResponse } from '../../../../api/schemas.ts';
import { EVIDENCE_HEALTH_POLL_MS } from '../api/evidence-queries.ts';
import { EvidenceBanner, evidenceBannerText } from './evidence-banner.tsx';

const server = setupServer(...handlers);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  cleanup();
  server.resetHandlers();
  vi.useRealTimers();
});
afterAll(() => server.close());

const healthz = (evidence: HealthzResponse['evidence']) =>
  http.get('/healthz', () => HttpResponse.json({ ok: true, evidence } satisfies HealthzResponse));

function renderBanner() {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={qc}>
      <EvidenceBanner />
    </QueryClientProvider>,
  );
}

describe('evidenceBannerText', () => {
  it.each([
    [{ pending: 0, failing: false, refused: 0 }, undefined],
    [{ pending: 0, failing: false, refused: 4 }, undefined],
    [
      { pending: 3, failing: true, refused: 1 },
      'The evidence store is not accepting records: 3 records waiting. Actions are refused until it is back; nothing is lost.',
    ],
    [
      { pending: 1, failing: true, refused: 0 },
      'The evidence store is not accepting records: 1 record waiting. Actions are refused until it is back; nothing is lost.',
    ],
    [
      { pending: 0, failing: true, refused: 0 },
      'The evidence store is not accepting records. Actions are refused until it is back; nothing is lost.',
    ],
    [
      { pending: 5, failing: false, refused: 0 },
      'The evidence store is catching up: 5 records waiting to be written; nothing is lost.',
    ],
  ])('%o → %s', (evidence, text) => expect(evidenceBannerText(evidence)).toBe(text));
});

describe('EvidenceBanner', () => {
  it('is absent while the store keeps up', async () => {
    let reads = 0;
    server.use(
      http.get('/healthz', () => {
        reads++;
        return HttpResponse.json({ ok: true, evidence: { pending: 0, failing: false, refused: 0 } });
      }),
    );
    renderBanner();
    await waitFor(() => expect(reads).toBe(1));
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('is an alert while the store fails', async () => {
    server.use(healthz({ pending: 12, failing: true, refused: 2 }));
    renderBanner();
    expect((await screen.findByRole('alert')).textContent).toContain('not accepting records: 12 records waiting');
  });

  it('polls every 10 s: appears when the store starts failing and goes when it is back', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    let evidence: HealthzResponse['evidence'] = { pending: 0, failing: false, refused: 0 };
    server.use(http.get('/healthz', () => HttpResponse.json({ ok: true, evidence } satisfies HealthzResponse)));
    renderBanner();
    await act(() => vi.advanceTimersByTimeAsync(100));
    expect(screen.queryByTestId('evidence-banner')).toBeNull();
    evidence = { pending: 2, failing: true, refused: 1 };
    await act(() => vi.advanceTimersByTimeAsync(EVIDENCE_HEALTH_POLL_MS));
    await screen.findByTestId('evidence-banner');
    evidence = { pending: 0, failing: false, refused: 1 };
    await act(() => vi.advanceTimersByTimeAsync(EVIDENCE_HEALTH_POLL_MS));
    await waitFor(() => expect(screen.queryByTestId('evidence-banner')).toBeNull());
    expect(EVIDENCE_HEALTH_POLL_MS).toBe(10_000);
  });
});
