// @vitest-environment jsdom
// "What ran at <time>": the release live then, its objects, the comparison with the release before, and the
// failures said in words (an edited manifest, no release yet).
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { WhatRan } from './what-ran.tsx';
import { mswServer } from '../../../../../test/support/msw-server.ts';

const APP = 'prod/flux-system/kustomization/digital-human-prod';
const BASE = `/api/apps/${APP}/releases`;
const NEW = 'a'.repeat(40);
const OLD = 'b'.repeat(40);
const HASH = `sha256:${'c'.repeat(64)}`;
const server = mswServer({ cleanup });

const deployment = (replicas: number) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'session-cache', namespace: 'prod' },
  spec: { replicas },
});

function show() {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={qc}>
      <WhatRan appId={APP} env="prod" />
    </QueryClientProvider>,
  );
}

const ask = (value: string) => {
  fireEvent.change(screen.getByLabelText('What ran in prod at'), { target: { value } });
  fireEvent.click(screen.getByRole('button', { name: 'Show' }));
};

describe('what ran at a time', () => {
  it('asks for the moment typed (the browser zone, to the second), shows the release, its objects, the comparison', async () => {
    let askedTime = '';
    server.use(
      http.get(`${BASE}/at`, ({ request }) => {
        askedTime = new URL(request.url).searchParams.get('time') ?? '';
        return HttpResponse.json({
          time: askedTime,
          release: { sha: NEW, appliedAt: '2026-12-01T14:00:00.000Z', renderHash: HASH },
          previous: { sha: OLD, appliedAt: '2026-12-01T10:00:00.000Z' },
        });
      }),
      http.get(`${BASE}/${NEW}/manifests`, () =>
        HttpResponse.json({
          sha: NEW,
          renderHash: HASH,
          recordedAt: '2026-12-01T14:00:00.000Z',
          storedBytes: 700,
          bytes: 2048,
          objects: [deployment(3)],
        }),
      ),
      http.get(`${BASE}/compare`, ({ request }) => {
        const q = new URL(request.url).searchParams;
        expect([q.get('from'), q.get('to')]).toEqual([OLD, NEW]);
        return HttpResponse.json({
          from: { app: APP, sha: OLD, renderHash: HASH },
          to: { app: APP, sha: NEW, renderHash: HASH },
          added: [],
          removed: [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'prod', name: 'old-settings' }],
          changed: [
            {
              apiVersion: 'apps/v1',
              kind: 'Deployment',
              namespace: 'prod',
              name: 'session-cache',
              fields: [{ path: 'spec.replicas', from: 2, to: 3 }],
            },
          ],
          unchanged: 4,
        });
      }),
    );
    show();
    ask('2026-12-01T14:05:09');
    const rel = await screen.findByTestId('what-ran-release');
    expect(askedTime).toBe(new Date('2026-12-01T14:05:09').toISOString());
    expect(rel.getAttribute('data-sha')).toBe(NEW);
    expect(rel.textContent).toContain(`release ${NEW.slice(0, 7)}`);
    const objects = await screen.findByTestId('what-ran-objects');
    expect(objects.textContent).toContain(`1 objects as rendered (render hash ${HASH}`);
    expect(within(objects).getByText('Deployment prod/session-cache').tagName).toBe('SUMMARY');

    fireEvent.click(screen.getByRole('button', { name: /Compare with the release before \(bbbbbbb/ }));
    const cmp = await screen.findByTestId('release-compare');
    expect(cmp.textContent).toContain('1 changed, 0 added, 1 removed, 4 unchanged');
    const cells = within(screen.getByTestId('compare-field')).getAllByRole('cell');
    expect(cells.map((c) => c.textContent)).toEqual(['spec.replicas', '2', '3']);
    expect(cmp.textContent).toContain('− ConfigMap prod/old-settings');
  });

  it('says when nothing had run yet, and when a stored manifest was edited', async () => {
    server.use(
      http.get(`${BASE}/at`, ({ request }) => {
        const time = new URL(request.url).searchParams.get('time') ?? '';
        return HttpResponse.json(
          time.startsWith('2020')
            ? { time, release: null, previous: null }
            : { time, release: { sha: NEW, appliedAt: time, renderHash: HASH }, previous: null },
        );
      }),
      http.get(`${BASE}/${NEW}/manifests`, () =>
        HttpResponse.json(
          {
            error: {
              code: 'ManifestTampered',
              message: `the stored manifest of ${HASH} does not match its hash: it was changed after it was recorded`,
            },
          },
          { status: 409 },
        ),
      ),
    );
    show();
    ask('2020-01-01T00:00:00');
    expect((await screen.findByTestId('what-ran-none')).textContent).toContain('No release of this app was applied');
    ask('2026-12-01T14:05:09');
    expect((await screen.findByRole('alert')).textContent).toContain('was changed after it was recorded');
    expect(screen.getByTestId('what-ran-release').textContent).toContain('No earlier release of this app is recorded.');
    expect(screen.queryByRole('button', { name: /Compare/ })).toBeNull();
  });
});
