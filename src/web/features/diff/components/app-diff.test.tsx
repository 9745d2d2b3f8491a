// @vitest-environment jsdom
// The diff says, where its rows are, how many rows are hidden because their objects are in environments the reader
// may not read (issue 40, item 8): never a silently shorter list.
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, render, screen } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import type { DiffResponse } from '../../../../api/schemas.ts';
import { mswServer } from '../../../../../test/support/msw-server.ts';
import { AppDiff } from './app-diff.tsx';

const APP = 'nonprod/flux-system/kustomization/app-dev';
const server = mswServer({ cleanup });

const answer = (over: Partial<DiffResponse>): DiffResponse => ({
  appId: APP,
  generatedAt: '2026-12-06T12:00:00Z',
  state: 'ok',
  counts: { changed: 1, missing: 0, extraneous: 0, unchanged: 0, unknown: 0 },
  summary: '1 field drifted, written by kubectl-edit',
  objects: [
    {
      ref: { cluster: 'nonprod', group: '', version: 'v1', kind: 'ConfigMap', namespace: 'dev', name: 'settings' },
      status: 'changed',
      mode: 'server-dry-run',
      changes: [{ path: 'data.note', desired: 'git', live: 'hand', owners: [], class: 'drift' }],
    },
  ],
  ownership: [],
  ...over,
});

function show(body: DiffResponse) {
  server.use(http.get(`/api/apps/${APP}/diff`, () => HttpResponse.json(body)));
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={qc}>
      <AppDiff appId={APP} controller="flux" />
    </QueryClientProvider>,
  );
}

describe('the diff’s rows hidden by environment', () => {
  it('says how many rows are hidden, beside the rows shown', async () => {
    show(answer({ hiddenByEnvironment: 2 }));
    const line = await screen.findByTestId('diff-hidden-envs');
    expect(line.textContent).toBe('2 objects in environments you may not read are hidden');
    expect(line.getAttribute('role')).toBe('status');
    expect(screen.getAllByTestId('object-diff').map((e) => e.dataset.name)).toEqual(['settings']);
  });

  it('one hidden row, in the singular; none hidden: no line', async () => {
    show(answer({ hiddenByEnvironment: 1 }));
    expect((await screen.findByTestId('diff-hidden-envs')).textContent).toBe(
      '1 object in an environment you may not read is hidden',
    );
    cleanup();
    show(answer({}));
    await screen.findAllByTestId('object-diff');
    expect(screen.queryByTestId('diff-hidden-envs')).toBeNull();
  });
});
