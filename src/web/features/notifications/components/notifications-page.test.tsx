// @vitest-environment jsdom
// The notifications page's switch: it moves in the click's own render (before the save answers), stays where the
// save put it, and goes back with the reason when the save is refused.
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { delay, http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import type { NotificationPrefsResponse } from '../../../../api/notifications.ts';
import { NotificationsPage } from './notifications-page.tsx';
import { mswServer } from '../../../../../test/support/msw-server.ts';

const server = mswServer({ cleanup });

const prefs = (subscribed: boolean): NotificationPrefsResponse => ({
  kinds: [
    {
      kind: 'prune.review-needed',
      label: 'A prune preview waits for my approval',
      roles: ['reviewer'],
      yours: true,
      subscribed,
    },
  ],
  sinks: [{ name: 'chat', format: 'slack', kinds: ['prune.review-needed'] }],
  viaGroups: false,
});

function show() {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={qc}>
      <NotificationsPage />
    </QueryClientProvider>,
  );
}

const box = () => screen.getByRole<HTMLInputElement>('checkbox', { name: 'A prune preview waits for my approval' });

describe('notifications page', () => {
  it('the switch moves at the click, before the save answers, and stays after it', async () => {
    let saved: unknown;
    server.use(
      http.get('/api/me/notifications', () => HttpResponse.json(prefs(true))),
      http.put('/api/me/notifications', async ({ request }) => {
        saved = await request.json();
        await delay(300);
        return HttpResponse.json(prefs(false));
      }),
    );
    show();
    await screen.findByRole('checkbox', { name: 'A prune preview waits for my approval' });
    expect(box().checked).toBe(true);
    fireEvent.click(box());
    expect(box().checked).toBe(false); // in the same render, no waiting
    await screen.findByText('Sent through chat (Slack).');
    await expect.poll(() => saved).toEqual({ kind: 'prune.review-needed', subscribed: false });
    await expect.poll(() => box().disabled, { timeout: 3000 }).toBe(false);
    expect(box().checked).toBe(false);
  });

  it('a refused save puts the switch back and says why', async () => {
    server.use(
      http.get('/api/me/notifications', () => HttpResponse.json(prefs(true))),
      http.put('/api/me/notifications', () =>
        HttpResponse.json({ error: 'Forbidden', message: 'not yours to change' }, { status: 403 }),
      ),
    );
    show();
    await screen.findByRole('checkbox', { name: 'A prune preview waits for my approval' });
    fireEvent.click(box());
    expect(box().checked).toBe(false);
    expect((await screen.findByRole('alert')).textContent).toMatch(/^Your choice was not saved: /);
    expect(box().checked).toBe(true);
  });
});
