// @vitest-environment jsdom
// A release's objects as the reader may see them (issue 40): what the BFF left out is said above the objects
// shown, with how many and why, never a silently shorter list.
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { WhatRan } from './what-ran.tsx';
import { mswServer } from '../../../../../test/support/msw-server.ts';

const APP = 'nonprod/flux-system/kustomization/app-dev';
const BASE = `/api/apps/${APP}/releases`;
const SHA = 'a'.repeat(40);
const HASH = `sha256:${'c'.repeat(64)}`;
const server = mswServer({ cleanup });

function show() {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={qc}>
      <WhatRan appId={APP} env="dev" />
    </QueryClientProvider>,
  );
  fireEvent.change(screen.getByLabelText('What ran in dev at'), { target: { value: '2026-12-01T14:05:09' } });
  fireEvent.click(screen.getByRole('button', { name: 'Show' }));
}

const manifests = (hidden?: { objects: number; reasons: string[] }) =>
  server.use(
    http.get(`${BASE}/at`, ({ request }) =>
      HttpResponse.json({
        time: new URL(request.url).searchParams.get('time'),
        release: { sha: SHA, appliedAt: '2026-12-01T14:00:00.000Z', renderHash: HASH },
        previous: null,
      }),
    ),
    http.get(`${BASE}/${SHA}/manifests`, () =>
      HttpResponse.json({
        sha: SHA,
        renderHash: HASH,
        recordedAt: '2026-12-01T14:00:00.000Z',
        storedBytes: 300,
        bytes: 900,
        objects: [{ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'worker', namespace: 'dev' } }],
        ...(hidden ? { hidden } : {}),
      }),
    ),
  );

describe('what ran: objects hidden from this reader', () => {
  it('says how many objects are hidden and why, beside the ones shown', async () => {
    const reasons = [
      '1 object in an environment you may not read is hidden',
      '1 object hidden: your Kubernetes RBAC does not allow get on configmaps in dev',
    ];
    manifests({ objects: 2, reasons });
    show();
    const line = await screen.findByTestId('what-ran-hidden');
    expect(line.textContent).toBe(reasons.join('; '));
    expect(line.getAttribute('role')).toBe('status');
    expect((await screen.findByTestId('what-ran-objects')).textContent).toContain('1 objects as rendered');
  });

  it('nothing hidden: no line', async () => {
    manifests();
    show();
    await screen.findByTestId('what-ran-objects');
    expect(screen.queryByTestId('what-ran-hidden')).toBeNull();
  });
});
