// @vitest-environment jsdom
// The prune preview page: the risk summary, "nothing will be deleted", the requester's disabled approve
// button with its reason, and the typed confirmation of a needs-override prune.
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { handlers } from '../../../../../mocks/handlers.ts';
import type { PrunePreviewResponse } from '../../../../api/schemas.ts';
import { PrunePreviewPage } from './prune-preview-page.tsx';

const server = setupServer(...handlers);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  cleanup();
  server.resetHandlers();
});
afterAll(() => server.close());

const ID = '0b7b2f4e-5d0e-4a43-9d43-1f0f0e0b0c01';
const ref = (name: string) => ({
  cluster: 'prod',
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  namespace: 'prod',
  name,
});
const candidate = (name: string, protectedBy: string | null = null) => ({
  ref: ref(name),
  id: `prod/core/ConfigMap/prod/${name}`,
  uid: `uid-${name}`,
  resourceVersion: '12',
  protectedBy,
  cascades: [],
  finalizers: [],
  createdAt: '2026-11-30T12:00:00Z',
  lastWriter: 'kustomize-controller',
  deletable: !protectedBy,
});

function preview(
  over: Partial<PrunePreviewResponse['preview']> = {},
  viewer: PrunePreviewResponse['viewer'] = { canApprove: true, reason: null },
) {
  const candidates = [candidate('old-config'), candidate('kept', 'kustomize.toolkit.fluxcd.io/prune: disabled')];
  return {
    preview: {
      id: ID,
      appId: 'prod/flux-system/kustomization/digital-human-prod',
      cluster: 'prod',
      env: 'prod',
      controller: 'flux',
      revision: 'main@sha1:abc',
      renderHash: 'r',
      plan: 'ready',
      reasons: [],
      status: 'pending',
      statusReason: null,
      snapshotHash: 'f'.repeat(64),
      requestedBy: { issuer: 'console', subject: 'dev', name: 'dev' },
      createdAt: '2026-12-01T00:00:00Z',
      expiresAt: '2026-12-01T01:00:00Z',
      requiredApprovals: 1,
      confirmation: null,
      propagationPolicy: 'Background',
      batchSize: 10,
      decisions: [],
      candidates,
      summary: { candidates: 2, protected: 1, deletions: 1, cascades: 0 },
      journal: [],
      ...over,
    },
    viewer,
  } satisfies PrunePreviewResponse;
}

function renderPage(body: PrunePreviewResponse) {
  server.use(http.get(`/api/prune-previews/${ID}`, () => HttpResponse.json(body)));
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const router = createMemoryRouter([{ path: '/prune-previews/:id', element: <PrunePreviewPage /> }], {
    initialEntries: [`/prune-previews/${ID}`],
  });
  render(
    <QueryClientProvider client={qc}>
      <RouterProvider router={router} />
    </QueryClientProvider>,
  );
}

describe('PrunePreviewPage', () => {
  it('summarizes the risk and lists protected objects as never deleted', async () => {
    renderPage(preview());
    expect(await screen.findByTestId('prune-risk')).toHaveProperty('textContent', '1 object to delete, 1 protected');
    expect(screen.getByTestId('protected').textContent).toContain('never deleted');
  });

  it('a blocked candidate names the protected object it would take; an unknown one says what could not be listed', async () => {
    const ns = (name: string, over: Record<string, unknown>) => ({
      ...candidate(name),
      ref: { cluster: 'prod', group: '', version: 'v1', kind: 'Namespace', name },
      id: `prod/core/Namespace/_/${name}`,
      deletable: false,
      ...over,
    });
    renderPage(
      preview({
        candidates: [
          candidate('old-config'),
          ns('team-a', {
            blockedBy: 'its Pod team-a/x is protected (kustomize.toolkit.fluxcd.io/prune: disabled)',
            cascades: [{ ...ref('x'), kind: 'Pod', namespace: 'team-a' }],
          }),
          ns('team-b', {
            cascadesUnknown: "cannot list secrets in ns team-b: the namespace's contents are unknown",
            cascades: [
              { ...ref('c1'), namespace: 'team-b' },
              { ...ref('rb'), group: 'rbac.authorization.k8s.io', kind: 'RoleBinding', namespace: 'team-b' },
            ],
          }),
        ],
        summary: { candidates: 3, protected: 0, deletions: 1, cascades: 0 },
      }),
    );
    expect((await screen.findByTestId('prune-risk')).textContent).toBe(
      '1 object to delete, 1 blocked, 1 unknown (kept)',
    );
    expect(screen.getByTestId('blocked').textContent).toBe(
      'blocked: its Pod team-a/x is protected (kustomize.toolkit.fluxcd.io/prune: disabled) — not deleted',
    );
    expect(screen.getByTestId('cascades-unknown').textContent).toContain('cannot list secrets in ns team-b');
    expect(screen.getByText('2 objects: 1 ConfigMap, 1 RoleBinding')).toBeTruthy();
  });

  it.each([
    ['pending', 'will be deleted once approved'],
    ['approved', 'will be deleted'],
    ['void', 'not deleted: the preview is void'],
    ['rejected', 'not deleted: the prune was rejected'],
    ['done', 'not deleted'],
  ] as const)('a deletable object of a %s preview says "%s"', async (status, said) => {
    renderPage(preview({ status }));
    const row = (await screen.findAllByTestId('prune-candidate')).find((r) => r.dataset.name === 'old-config');
    expect(row?.lastElementChild?.textContent).toBe(said);
  });

  it('shows its expiry and each object’s creation as every time in the console: local, with the zone', async () => {
    renderPage(preview());
    const expires = (await screen.findByText('Expires')).nextElementSibling?.querySelector('time');
    expect(expires?.getAttribute('dateTime')).toBe('2026-12-01T01:00:00Z');
    expect(expires?.textContent).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+$/);
    expect(expires?.getAttribute('title')).toBe('2026-12-01 01:00:00 UTC');
    // the object's creation: how long ago, the absolute time (local and UTC) on hover
    const row = (await screen.findAllByTestId('prune-candidate')).find((r) => r.dataset.name === 'old-config');
    const created = row?.querySelector('time');
    expect(created?.getAttribute('dateTime')).toBe('2026-11-30T12:00:00Z');
    expect(created?.textContent).toMatch(/^\d+[smhd] ago$/);
    expect(created?.getAttribute('title')).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+ · 2026-11-30 12:00:00 UTC$/);
  });

  it('says a comment is required before Approve and Reject are enabled', async () => {
    renderPage(preview());
    const approve = await screen.findByTestId('prune-approve');
    expect(approve).toHaveProperty('disabled', true);
    expect(screen.getByText(/Comment/).textContent).toMatch(/required/);
    const needed = screen.getByTestId('prune-comment-needed');
    expect(needed.textContent).toMatch(/enabled once you write a comment/);
    expect(screen.getByTestId('prune-comment').getAttribute('aria-describedby')).toContain(needed.id);
    fireEvent.change(screen.getByTestId('prune-comment'), { target: { value: 'checked the list' } });
    await waitFor(() => expect(approve).toHaveProperty('disabled', false));
    expect(screen.queryByTestId('prune-comment-needed')).toBeNull();
  });

  it('the requester sees a disabled approve button and why', async () => {
    renderPage(
      preview({}, { canApprove: false, reason: 'You requested this prune: a different person must approve it' }),
    );
    const approve = await screen.findByTestId('prune-approve');
    expect(approve).toHaveProperty('disabled', true);
    expect(screen.getByTestId('prune-approve-reason').textContent).toMatch(/different person/);
  });

  it('says clearly when nothing will be deleted (no decision asked)', async () => {
    renderPage(
      preview({
        plan: 'nothing',
        status: 'void',
        statusReason: 'nothing will be deleted',
        summary: { candidates: 0, protected: 0, deletions: 0, cascades: 0 },
        candidates: [],
      }),
    );
    expect((await screen.findByTestId('prune-risk')).textContent).toBe('Nothing will be deleted');
    expect(screen.queryByTestId('prune-approve')).toBeNull();
  });

  it('a done prune its controller carries out says whether the controller deleted the objects yet', async () => {
    const body = {
      ...preview({ status: 'done', deletedBy: 'controller', statusReason: '1 object stamped with the approval' }),
      handover: {
        state: 'waiting' as const,
        controller: 'kustomize-controller',
        live: ['prod/core/ConfigMap/prod/old-config'],
        stamped: 1,
        text: 'waiting for kustomize-controller: 1 of 1 approved object still live; its next prune deletes them',
      },
    };
    renderPage(body);
    const h = await screen.findByTestId('prune-handover');
    expect(h.dataset.state).toBe('waiting');
    expect(h.textContent).toContain('waiting for kustomize-controller');
    expect(h.textContent).toContain('prod/core/ConfigMap/prod/old-config');
    cleanup();
    renderPage(preview({ status: 'done' }));
    await screen.findByTestId('prune-status');
    expect(screen.queryByTestId('prune-handover')).toBeNull();
  });

  it('needs-override: approve stays disabled until the confirmation is typed', async () => {
    renderPage(
      preview({
        plan: 'needs-override',
        reasons: ['the render is empty'],
        requiredApprovals: 2,
        confirmation: 'delete 1 object of digital-human-prod',
      }),
    );
    const approve = await screen.findByTestId('prune-approve');
    fireEvent.change(screen.getByTestId('prune-comment'), { target: { value: 'reviewed' } });
    expect(approve).toHaveProperty('disabled', true);
    fireEvent.change(screen.getByTestId('prune-confirmation'), {
      target: { value: 'delete 1 object of digital-human-prod' },
    });
    await waitFor(() => expect(approve).toHaveProperty('disabled', false));
    expect(screen.getByTestId('prune-reasons').textContent).toContain('render is empty');
  });
});
