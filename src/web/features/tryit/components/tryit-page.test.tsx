// @vitest-environment jsdom
// A card run a second time shows nothing of its previous run while the new one starts: the old "done", steps and
// links would read as the new run's (a person, or the e2e that runs every card twice, would follow a stale link).
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { MemoryRouter } from 'react-router';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TryItJob, TryItJobResponse, TryItScenariosResponse } from '../../../../api/tryit.ts';
import { handlers } from '../../../../../mocks/handlers.ts';
import { TryItPage } from './tryit-page.tsx';

const server = setupServer(...handlers);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  cleanup();
  server.resetHandlers();
});
afterAll(() => server.close());

const job = (id: string, state: TryItJob['state'], href: string): TryItJob => ({
  id,
  kind: 'scenario',
  scenario: 'freeze-incident',
  title: 'Incident: edit replicas during a freeze',
  state,
  startedBy: 'admin',
  startedAt: '2026-12-06T20:42:00.000Z',
  steps: [{ name: 'kubectl edit deployment/render-worker in prod', state: state === 'done' ? 'done' : 'running' }],
  links: state === 'done' ? [{ label: 'the freeze (end it, write back)', href }] : [],
  intentSeq: 7,
});

describe('Try it: a card run again', () => {
  it('hides the previous run (its done, its links) until the new run is read, then shows the new one', async () => {
    const previous = job('try-00000001', 'done', '/freezes/frz-old');
    let answerRun: (() => void) | undefined;
    const runAnswered = new Promise<void>((resolve) => {
      answerRun = resolve;
    });
    server.use(
      http.get('/api/tryit/scenarios', () =>
        HttpResponse.json({
          scenarios: [
            {
              id: 'freeze-incident',
              title: 'Incident: edit replicas during a freeze',
              story: 'story',
              button: 'Edit render-worker by hand',
              look: 'the freeze',
              links: [],
            },
          ],
          canRun: true,
          recent: [previous],
        } satisfies TryItScenariosResponse),
      ),
      http.post('/api/tryit/scenarios/freeze-incident/run', async () => {
        await runAnswered;
        return HttpResponse.json({ job: job('try-00000002', 'running', '') } satisfies TryItJobResponse);
      }),
      http.get('/api/tryit/jobs/try-00000002', () =>
        HttpResponse.json({ job: job('try-00000002', 'done', '/freezes/frz-new') } satisfies TryItJobResponse),
      ),
    );
    const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    render(
      <QueryClientProvider client={qc}>
        <MemoryRouter>
          <TryItPage />
        </MemoryRouter>
      </QueryClientProvider>,
    );
    const card = await screen.findByTestId('tryit-card');
    // the last run, as the page opens: done, with its link
    expect(
      within(card)
        .getByRole('link', { name: /the freeze/ })
        .getAttribute('href'),
    ).toBe('/freezes/frz-old');
    fireEvent.click(within(card).getByTestId('tryit-run'));
    // while the request is in flight: starting, and nothing of the previous run
    expect((await within(card).findByTestId('tryit-starting')).textContent).toBe('Starting…');
    expect(within(card).queryByTestId('tryit-job')).toBeNull();
    expect(within(card).queryByRole('link', { name: /the freeze/ })).toBeNull();
    answerRun?.();
    // then the new run, read from its job
    await waitFor(() => expect(within(card).getByTestId('tryit-job').getAttribute('data-job')).toBe('try-00000002'));
    expect(
      within(card)
        .getByRole('link', { name: /the freeze/ })
        .getAttribute('href'),
    ).toBe('/freezes/frz-new');
    expect(within(card).queryByTestId('tryit-starting')).toBeNull();
  });
});
