// @vitest-environment jsdom
// Argo CD hooks in the SPA (issue 40 item 13): the tree's row and the diff's row of a hook say "hook · PreSync ·
// Succeeded 3 min ago" (and the message when it failed), never a sync verdict or "unchanged" (msw stands in for the
// BFF, answering with the API's shapes).
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, render, screen, waitFor } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { MemoryRouter } from 'react-router';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appPath, type DiffResponse, type TreeNodeDto, type TreeResponse } from '../../api/schemas.ts';
import { mswServer } from '../../../test/support/msw-server.ts';
import { AppDiff } from '../features/diff/components/app-diff.tsx';
import { ResourceTree } from '../features/tree/components/resource-tree.tsx';

const APP = 'nonprod/argocd/application/ledger-staging';
const server = mswServer({ cleanup });
const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000 - 5_000).toISOString();
const jobRef = (name: string) => ({
  cluster: 'nonprod',
  group: 'batch',
  version: 'v1',
  kind: 'Job',
  namespace: 'staging',
  name,
});

const client = () => new QueryClient({ defaultOptions: { queries: { retry: false } } });

describe('a hook in the resource tree', () => {
  // the tree's list is virtualized (TanStack Virtual measures its scroller's client size): jsdom lays nothing out, so the scroller
  // is given a size for this file's renders (put back after)
  const sized = ['clientHeight', 'clientWidth'] as const;
  const before = sized.map((k) => Object.getOwnPropertyDescriptor(HTMLElement.prototype, k));
  beforeAll(() => {
    for (const k of sized) Object.defineProperty(HTMLElement.prototype, k, { configurable: true, get: () => 400 });
  });
  afterAll(() => {
    // jsdom defines them on Element.prototype: the own ones added here are removed (or put back, had there been any)
    sized.forEach((k, i) => {
      const d = before[i];
      if (d) Object.defineProperty(HTMLElement.prototype, k, d);
      else delete (HTMLElement.prototype as unknown as Record<string, unknown>)[k];
    });
  });
  it('its row says hook · PreSync · Succeeded 3 min ago, with no sync tag; a failed one gives its message', async () => {
    const node = (name: string, hook: TreeNodeDto['hook']): TreeNodeDto => ({
      id: `nonprod/batch/Job/staging/${name}`,
      ref: jobRef(name),
      depth: 0,
      childCount: 0,
      managed: true,
      health: 'Healthy',
      reason: 'Job completed',
      ...(hook ? { hook } : {}),
    });
    const nodes = [
      node('ledger-db-migrate', { type: 'PreSync', phase: 'Succeeded', from: 'argocd', finishedAt: minutesAgo(3) }),
      node('ledger-smoke-test', {
        type: 'PostSync',
        phase: 'Failed',
        from: 'argocd',
        message: 'Job has reached the specified backoff limit',
        finishedAt: minutesAgo(1),
      }),
    ];
    server.use(
      http.get(`/api/apps/${appPath(APP)}/tree`, () =>
        HttpResponse.json({
          appId: APP,
          generatedAt: new Date().toISOString(),
          summary: { health: 'Healthy', reason: '', counts: { Healthy: 2 }, sync: {}, total: 2 },
          nodes,
        } satisfies TreeResponse),
      ),
    );
    render(
      <QueryClientProvider client={client()}>
        <MemoryRouter>
          <ResourceTree appId={APP} />
        </MemoryRouter>
      </QueryClientProvider>,
    );
    const rows = await screen.findAllByTestId('tree-row');
    const byName = (n: string) => rows.find((r) => r.dataset.name === n) as HTMLElement;
    await waitFor(() => expect(byName('ledger-db-migrate')).toBeTruthy());
    for (const r of rows) {
      expect(r.dataset.sync).toBe('');
      expect(r.querySelector('[data-testid="node-sync"]')).toBeNull();
    }
    expect(byName('ledger-db-migrate').querySelector('[data-testid="node-hook"]')?.textContent).toBe(
      'hook · PreSync · Succeeded 3 min ago',
    );
    expect(byName('ledger-smoke-test').querySelector('[data-testid="node-hook"]')?.textContent).toBe(
      'hook · PostSync · Failed 1 min ago: Job has reached the specified backoff limit',
    );
    expect(byName('ledger-db-migrate').getAttribute('aria-label')).toContain('PreSync hook Succeeded');
  });
});

describe('a hook in the diff', () => {
  it('is a hook row with its last run, shown by default, never "unchanged"', async () => {
    const body: DiffResponse = {
      appId: APP,
      generatedAt: new Date().toISOString(),
      state: 'ok',
      counts: { changed: 0, missing: 0, extraneous: 0, unchanged: 1, unknown: 0, hook: 1 },
      summary: 'no differences: live matches Git',
      objects: [
        {
          ref: jobRef('ledger-db-migrate'),
          status: 'hook',
          mode: 'not-compared',
          note: 'Argo CD PreSync hook: run at its sync phase, not kept in sync (Argo CD compares none of its fields)',
          changes: [],
          hook: { type: 'PreSync', phase: 'Succeeded', from: 'argocd', finishedAt: minutesAgo(3) },
        },
        {
          ref: { ...jobRef('ledger-config'), group: '', kind: 'ConfigMap' },
          status: 'unchanged',
          mode: 'server-dry-run',
          changes: [],
        },
      ],
      ownership: [],
    };
    server.use(http.get(`/api/apps/${appPath(APP)}/diff`, () => HttpResponse.json(body)));
    render(
      <QueryClientProvider client={client()}>
        <AppDiff appId={APP} controller="argocd" />
      </QueryClientProvider>,
    );
    const rows = await screen.findAllByTestId('object-diff');
    // the unchanged ConfigMap is hidden by default; the hook is shown as a hook
    expect(rows.map((r) => [r.dataset.name, r.dataset.status])).toEqual([['ledger-db-migrate', 'hook']]);
    const tag = rows[0]?.querySelector('[data-testid="node-hook"]');
    expect(tag?.textContent).toBe('hook · PreSync · Succeeded 3 min ago');
    expect(rows[0]?.textContent).not.toMatch(/unchanged/);
  });
});
