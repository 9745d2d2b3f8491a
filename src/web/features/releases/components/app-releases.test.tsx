// @vitest-environment jsdom
// The releases section: one row per release, each state in words (not colour only), evidence links, and the
// newest row's "merged, but not live — why?".
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, render, screen, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { MemoryRouter } from 'react-router';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { handlers } from '../../../../../mocks/handlers.ts';
import type { ReleasesResponse } from '../../../../api/schemas.ts';
import { buildReleases } from '../../../../domain/release.ts';
import { AppReleases } from './app-releases.tsx';

const APP = 'nonprod/flux-system/kustomization/digital-human-dev';
const SHA = 'd'.repeat(40);
const server = setupServer(...handlers);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  cleanup();
  server.resetHandlers();
});
afterAll(() => server.close());

const ev = (seq: number, type: string, data: Record<string, unknown>) => ({
  seq,
  time: '2026-12-01T10:00:00.000Z',
  type,
  actor: 'console',
  data: { sha: SHA, revision: `main@sha1:${SHA}`, ...data },
});

function grants(role: string) {
  return http.get('/api/auth/session', () =>
    HttpResponse.json({
      user: { name: 'u', source: 'local', groups: [], grants: [{ role, clusters: ['*'], envs: ['*'] }] },
      csrfToken: 'x',
      mustChangePassword: false,
      expiresAt: '2099-01-01T00:00:00.000Z',
      oidc: false,
    }),
  );
}

function show() {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={qc}>
      <MemoryRouter>
        <AppReleases appId={APP} name="digital-human-dev" cluster="nonprod" env="dev" />
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

describe('AppReleases', () => {
  it('shows the chain with words for each status, evidence links and why the newest is not live', async () => {
    const releases = buildReleases([
      ev(1, 'release.change', { author: { name: 'Ann' }, subject: 'Bump the render worker' }),
      ev(2, 'release.render', { status: 'failed', reason: 'render failed: missing.yaml' }),
    ]);
    server.use(
      grants('auditor'),
      http.get('/api/apps/*', () =>
        HttpResponse.json({
          releases,
          notLive: { state: 'render', why: 'render failed (BuildFailed): missing.yaml' },
        } satisfies ReleasesResponse),
      ),
    );
    show();
    const row = await screen.findByTestId('release');
    const states = within(row).getAllByTestId('release-state');
    expect(states).toHaveLength(9);
    const change = states[0] as HTMLElement;
    expect(change.textContent).toContain('✓ done');
    expect(change.textContent).toContain('by Ann');
    expect(within(change).getByRole('link', { name: 'evidence #1' }).getAttribute('href')).toBe(
      `/evidence?app=${encodeURIComponent(APP)}&type=release.change&q=${SHA}`,
    );
    const renderState = states.find((s) => s.dataset.state === 'render') as HTMLElement;
    expect(renderState.textContent).toContain('✗ failed');
    expect(renderState.textContent).toContain('render failed: missing.yaml');
    expect(states.find((s) => s.dataset.state === 'reconcile')?.textContent).toContain('… pending');
    expect(screen.getByTestId('not-live').textContent).toContain('render failed (BuildFailed): missing.yaml');
  });

  it('commits that changed nothing here are folded under the release they render as, with no rollback of their own', async () => {
    const [A, B, C, D] = ['a', 'b', 'c', 'e'].map((x) => x.repeat(40)) as [string, string, string, string];
    const at = (seq: number, sha: string, type: string, data: Record<string, unknown> = {}) => ({
      ...ev(seq, type, data),
      data: { sha, revision: `main@sha1:${sha}`, ...data },
    });
    // A changed the app; B and C are other apps' commits (the same render as A); D changed it again
    const releases = buildReleases([
      at(1, A, 'release.render', { renderHash: 'sha256:1', objects: 3, effect: 'changed' }),
      at(2, B, 'release.render', { renderHash: 'sha256:1', objects: 3, effect: 'unchanged', sameAs: A }),
      at(3, C, 'release.render', { renderHash: 'sha256:1', objects: 3, effect: 'unchanged', sameAs: A }),
      at(4, D, 'release.render', { renderHash: 'sha256:2', objects: 1, effect: 'changed' }),
    ]);
    server.use(
      grants('developer'),
      http.get('/api/apps/*', () => HttpResponse.json({ releases } satisfies ReleasesResponse)),
    );
    show();
    const fold = await screen.findByTestId('no-change-fold');
    expect(fold.textContent).toMatch(/2 commits that changed nothing here/);
    const folded = within(fold).getAllByTestId('release');
    expect(folded.map((r) => r.getAttribute('data-sha'))).toEqual([C, B]);
    for (const r of folded) {
      expect(within(r).getByTestId('no-change').textContent).toContain(`renders as ${A.slice(0, 7)}`);
      expect(within(r).queryByTestId('rollback')).toBeNull();
    }
    // the rows that changed the app stay rows of their own; the older one can be rolled back to
    const rows = screen.getAllByTestId('release').filter((r) => !fold.contains(r));
    expect(rows.map((r) => r.getAttribute('data-sha'))).toEqual([D, A]);
    expect(within(rows[1] as HTMLElement).getByTestId('rollback').textContent).toBe(`Roll back to ${A.slice(0, 7)}`);
    expect(screen.getAllByText(/1 object\b/).length).toBeGreaterThan(0);
    // a developer sees the releases and rolls back, without links into the evidence log they may not read
    expect(screen.queryAllByRole('link', { name: /evidence #/ })).toHaveLength(0);
  });

  it('a viewer may not read releases: says so and asks nothing', async () => {
    show();
    expect(await screen.findByText(/see this app's releases/)).toBeTruthy();
  });
});
