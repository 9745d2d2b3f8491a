// @vitest-environment jsdom
// "Reconcile now" says what happened: after the request, the button area follows the controller through
// the BFF's reconcile-status until it answers (msw handlers typed by the API schemas).
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import type { z } from 'zod';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { appsFixture, handlers } from '../../../../../mocks/handlers.ts';
import {
  appPath,
  ReconcileResponse,
  type ReconcileStatusResponse,
  type SessionResponse,
} from '../../../../api/schemas.ts';
import { ReconcileButton } from './reconcile-button.tsx';

const server = setupServer(...handlers);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  cleanup();
  server.resetHandlers();
});
afterAll(() => server.close());

const app = appsFixture.apps.find((a) => a.env === 'dev' && a.controller === 'flux')!;
const REQUESTED = '2026-12-01T23:08:10.123Z';
const developer = http.get('/api/auth/session', () =>
  HttpResponse.json({
    user: { name: 'dev', source: 'local', groups: [], grants: [{ role: 'developer', clusters: ['*'], envs: ['*'] }] },
    csrfToken: 't',
    mustChangePassword: false,
    expiresAt: '2099-01-01T00:00:00.000Z',
    oidc: false,
  } satisfies SessionResponse),
);

function renderButton() {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={qc}>
      <ReconcileButton app={app} />
    </QueryClientProvider>,
  );
}

async function reconcileWith(answers: ReconcileStatusResponse[]) {
  const asked: string[] = [];
  server.use(
    developer,
    http.post(`/api/apps/${appPath(app.id)}/reconcile`, () =>
      HttpResponse.json({ requestedAt: REQUESTED, objects: [app.id] } satisfies z.infer<typeof ReconcileResponse>),
    ),
    http.get(`/api/apps/${appPath(app.id)}/reconcile-status`, ({ request }) => {
      asked.push(new URL(request.url).searchParams.get('requestedAt') ?? '');
      return HttpResponse.json(answers[Math.min(asked.length - 1, answers.length - 1)]);
    }),
  );
  renderButton();
  const button = (await screen.findByTestId('reconcile')) as HTMLButtonElement;
  await waitFor(() => expect(button.disabled).toBe(false));
  fireEvent.click(button);
  return asked;
}

const base = { requestedAt: REQUESTED, reverted: [], timeoutMs: 60_000 };

describe('ReconcileButton follows the controller', () => {
  it('waits, then says when it reconciled, what it applied and the drift it reverted', async () => {
    const asked = await reconcileWith([
      { ...base, state: 'pending' },
      {
        ...base,
        state: 'reconciled',
        reconciledAt: '2026-12-01T23:08:12Z',
        revision: 'main@sha1:3f2a1c9e2222222222222222222222222222222',
        reverted: [
          { object: 'nonprod/apps/Deployment/dev/tts-gateway', path: 'spec.replicas', managers: ['kubectl-scale'] },
        ],
      },
    ]);
    expect(await screen.findByText(/requested at/)).toBeTruthy();
    const status = await screen.findByTestId('reconcile-status');
    expect(status.getAttribute('data-state')).toBe('pending');
    await waitFor(() => expect(status.getAttribute('data-state')).toBe('reconciled'), { timeout: 3_000 });
    expect(status.textContent).toMatch(/^reconciled at \d\d:\d\d:\d\d \S+: applied 3f2a1c9, 1 field reverted$/);
    expect(asked.every((a) => a === REQUESTED)).toBe(true);
    // a final answer is not polled again
    const n = asked.length;
    await new Promise((r) => setTimeout(r, 1_200));
    expect(asked.length).toBe(n);
  });

  it('says the failure, or that the controller did not pick the request up', async () => {
    await reconcileWith([{ ...base, state: 'failed', reason: 'BuildFailed', message: 'kustomize build failed' }]);
    const status = await screen.findByTestId('reconcile-status');
    await waitFor(() => expect(status.textContent).toMatch(/^reconcile failed: BuildFailed: kustomize build failed$/));
    cleanup();
    await reconcileWith([
      {
        ...base,
        state: 'timeout',
        reason: 'NotPickedUp',
        message: 'the controller did not pick the request up within 60 s',
      },
    ]);
    const late = await screen.findByTestId('reconcile-status');
    await waitFor(() =>
      expect(late.textContent).toBe('not picked up: the controller did not pick the request up within 60 s'),
    );
  });
});
