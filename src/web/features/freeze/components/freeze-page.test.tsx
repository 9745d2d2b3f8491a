// @vitest-environment jsdom
// The freeze page: the live changes since the freeze began, an app whose changes are unknown said so (never
// "no changes"), the unfreeze sends the decisions chosen per change and shows the write-back, a 403's
// reason is shown, and a user without the role sees the actions disabled with why.
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { handlers } from '../../../../../mocks/handlers.ts';
import type { z } from 'zod';
import type { FreezeChangesResponse as Changes, FreezeDto, SessionResponse } from '../../../../api/schemas.ts';

type FreezeResponse = { freeze: FreezeDto };
type FreezeChangesResponse = z.infer<typeof Changes>;
type Role = 'oncall' | 'viewer';
import { FreezePage } from './freeze-page.tsx';

const server = setupServer(...handlers);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  cleanup();
  server.resetHandlers();
});
afterAll(() => server.close());

const ID = 'frz-0a1b2c3d';
const DEV = 'nonprod/flux-system/kustomization/digital-human-dev';
const STAGING = 'nonprod/flux-system/kustomization/digital-human-staging';
const deploy = (name: string) => ({
  cluster: 'nonprod',
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  namespace: 'dev',
  name,
});
const REPLICAS = `nonprod/apps/Deployment/dev/render-worker#spec.replicas`;
const IMAGE = `nonprod/apps/Deployment/dev/tts-gateway#spec.template.spec.containers[name=tts].image`;
const target = (appId: string, env: string) => ({
  appId,
  kind: 'Kustomization' as const,
  namespace: 'flux-system',
  name: appId.split('/').at(-1) ?? appId,
  controller: 'flux' as const,
  env,
  applied: true,
  prior: { controller: 'flux', suspend: null, annotations: {} },
});

function freeze(over: Partial<FreezeDto> = {}): FreezeResponse {
  return {
    freeze: {
      id: ID,
      cluster: 'nonprod',
      env: null,
      app: DEV,
      status: 'active',
      active: true,
      reason: 'render latency incident',
      incident: 'https://status.example.com/inc/42',
      createdBy: 'oncall',
      createdAt: '2026-12-01T10:00:00Z',
      startedAt: '2026-12-01T10:00:00Z',
      expiresAt: new Date(Date.now() + 9 * 60_000).toISOString(),
      endedAt: null,
      endedBy: null,
      endReason: null,
      targets: [target(DEV, 'dev'), target(STAGING, 'staging')],
      extensions: [],
      canEnd: true,
      ...over,
    },
  };
}

const changes: FreezeChangesResponse = {
  changes: [
    {
      id: REPLICAS,
      appId: DEV,
      ref: deploy('render-worker'),
      path: 'spec.replicas',
      git: 4,
      live: 12,
      manager: 'kubectl-edit',
      operation: 'Update',
      time: '2026-12-01T10:02:00Z',
    },
    {
      id: IMAGE,
      appId: DEV,
      ref: deploy('tts-gateway'),
      path: 'spec.template.spec.containers[name=tts].image',
      git: 'registry/tts:1.4.0',
      live: 'registry/tts:1.4.1-hotfix',
      manager: 'kubectl-set',
      operation: 'Update',
      time: '2026-12-01T10:03:00Z',
    },
  ],
  unknown: [{ appId: STAGING, reason: 'the render failed: kustomize build exited 1' }],
};

const session = (role: Role): SessionResponse => ({
  user: { name: role, source: 'local', groups: [], grants: [{ role, clusters: ['*'], envs: ['*'] }] },
  csrfToken: 'csrf',
  mustChangePassword: false,
  expiresAt: '2099-01-01T00:00:00.000Z',
  oidc: false,
});

/** What GET /api/freezes/:id answers (an unfreeze handler sets the ended freeze). */
let current: FreezeResponse;

function renderPage(body: FreezeResponse, role: Role = 'oncall') {
  current = body;
  server.use(
    http.get('/api/auth/session', () => HttpResponse.json(session(role))),
    http.get(`/api/freezes/${ID}`, () => HttpResponse.json(current)),
    http.get(`/api/freezes/${ID}/changes`, () => HttpResponse.json(changes)),
  );
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const router = createMemoryRouter([{ path: '/freezes/:id', element: <FreezePage /> }], {
    initialEntries: [`/freezes/${ID}`],
  });
  render(
    <QueryClientProvider client={qc}>
      <RouterProvider router={router} />
    </QueryClientProvider>,
  );
}

describe('FreezePage', () => {
  it('lists the live changes since the freeze began, and an app whose changes are unknown as unknown', async () => {
    renderPage(freeze());
    const rows = await screen.findAllByTestId('freeze-change');
    expect(rows).toHaveLength(2);
    const replicas = rows[0]!;
    expect(replicas.textContent).toContain('Deployment dev/render-worker');
    expect(replicas.textContent).toContain('spec.replicas');
    expect(within(replicas).getByTestId('freeze-change-values').textContent).toBe('4 → 12');
    expect(within(replicas).getByTestId('freeze-change-manager').textContent).toBe('kubectl-edit');
    // write back is the default
    expect(within(replicas).getByLabelText('Write back to Git')).toHaveProperty('checked', true);
    expect(screen.getByTestId('freeze-unknown').textContent).toContain(
      'Changes unknown for digital-human-staging: the render failed: kustomize build exited 1',
    );
    expect(screen.queryByText(/No live change since the freeze began/)).toBeNull();
    expect(screen.getByTestId('freeze-by').textContent).toBe('oncall');
    expect(screen.getByTestId('freeze-time-left').textContent).toMatch(/\(\d+ min \d+ s left\)/);
  });

  it('unfreeze warns first, then sends the decision chosen for each change and shows the write-back', async () => {
    let sent: unknown;
    server.use(
      http.post(`/api/freezes/${ID}/end`, async ({ request }) => {
        sent = await request.json();
        current = freeze({
          status: 'ended',
          active: false,
          endedAt: '2026-12-01T10:10:00Z',
          endedBy: 'oncall',
          endReason: 'unfrozen',
          canEnd: false,
          decisions: [
            { change: REPLICAS, action: 'write-back' },
            { change: IMAGE, action: 'git-wins' },
          ],
          targets: [
            { ...target(DEV, 'dev'), restored: { at: '2026-12-01T10:10:01Z', ok: true } },
            { ...target(STAGING, 'staging'), restored: { at: '2026-12-01T10:10:01Z', ok: true } },
          ],
          writeBack: [
            {
              appId: DEV,
              branch: `freeze/${ID}`,
              commit: '0123456789abcdef0123456789abcdef01234567',
              placements: [
                {
                  changeId: REPLICAS,
                  placed: true,
                  file: 'overlays/dev/kustomization.yaml',
                  how: 'kustomize-replicas',
                },
              ],
            },
          ],
        });
        return HttpResponse.json(current);
      }),
    );
    renderPage(freeze());
    const rows = await screen.findAllByTestId('freeze-change');
    fireEvent.click(within(rows[1]!).getByLabelText('Let Git win'));
    fireEvent.click(screen.getByTestId('unfreeze'));
    const dialog = await screen.findByTestId('unfreeze-dialog');
    const warning = within(dialog).getByTestId('unfreeze-warning').textContent ?? '';
    expect(warning).toContain('1 change will be reverted by the controller');
    expect(warning).toMatch(/until that branch is merged the controller reverts it too/);
    expect(warning).toContain('digital-human-staging are unknown');
    expect(sent).toBeUndefined();
    fireEvent.click(within(dialog).getByTestId('unfreeze-confirm'));
    expect(await screen.findByTestId('write-back-branch')).toHaveProperty('textContent', `freeze/${ID}`);
    expect(sent).toEqual({
      decisions: [
        { change: REPLICAS, action: 'write-back' },
        { change: IMAGE, action: 'git-wins' },
      ],
    });
    expect(screen.getByTestId('write-back-commit').textContent).toBe('0123456');
    expect(screen.getByTestId('placement').textContent).toContain('overlays/dev/kustomization.yaml');
    expect(screen.getByTestId('freeze-restored').textContent).toContain('automation restored');
    expect(screen.getByTestId('freeze-status').getAttribute('data-status')).toBe('ended');
  });

  it('shows the reason of a 403 and keeps the freeze', async () => {
    const why = 'You need the oncall role on nonprod/staging to freeze or unfreeze deployments';
    server.use(
      http.post(`/api/freezes/${ID}/end`, () =>
        HttpResponse.json({ error: { code: 'Forbidden', message: why } }, { status: 403 }),
      ),
    );
    renderPage(freeze());
    await screen.findAllByTestId('freeze-change');
    fireEvent.click(screen.getByTestId('unfreeze'));
    fireEvent.click(within(await screen.findByTestId('unfreeze-dialog')).getByTestId('unfreeze-confirm'));
    expect((await screen.findByText(`Not unfrozen: ${why}`)).getAttribute('role')).toBe('alert');
    expect(screen.getByTestId('freeze-status').getAttribute('data-status')).toBe('active');
  });

  it('a viewer sees the actions disabled, with why', async () => {
    renderPage(freeze({ canEnd: false }), 'viewer');
    await screen.findAllByTestId('freeze-change');
    expect(screen.getByTestId('unfreeze')).toHaveProperty('disabled', true);
    expect(screen.getByTestId('unfreeze-disabled-reason').textContent).toMatch(/oncall/);
    expect(screen.getByTestId('extend')).toHaveProperty('disabled', true);
  });

  it('a stalled end says so as an alert (automation not restored)', async () => {
    const stall = 'end stalled: write-back could not be completed, automation NOT restored (push refused)';
    renderPage(freeze({ status: 'ending', active: false, endReason: stall }));
    expect((await screen.findByTestId('freeze-end-stalled')).textContent).toBe(stall);
    expect(screen.getByRole('alert').textContent).toContain('NOT restored');
  });

  it('says per app whether the Flux controller confirmed the pause, and until then that an edit may be reverted', async () => {
    renderPage(
      freeze({
        targets: [
          { ...target(DEV, 'dev'), controllerPause: { requested: '2026-12-01T10:00:00Z' } },
          {
            ...target(STAGING, 'staging'),
            controllerPause: { requested: '2026-12-01T10:00:00Z', confirmed: '2026-12-01T10:00:01Z' },
          },
        ],
      }),
    );
    const pending = await screen.findAllByTestId('freeze-pause-pending');
    expect(pending).toHaveLength(1);
    expect(pending[0]?.textContent).toMatch(/may still apply and revert a live edit/);
    expect(screen.getAllByTestId('freeze-pause-confirmed')).toHaveLength(1);
  });

  it('an ending freeze without a reason shows no alert', async () => {
    renderPage(freeze({ status: 'ending', active: false }));
    await screen.findByTestId('freeze-page');
    expect(screen.queryByTestId('freeze-end-stalled')).toBeNull();
  });

  it('an ended freeze shows its decisions and write-back read-only', async () => {
    renderPage(
      freeze({
        status: 'ended',
        active: false,
        canEnd: false,
        endReason: 'unfrozen',
        decisions: [{ change: REPLICAS, action: 'write-back' }],
        writeBack: [
          {
            appId: DEV,
            branch: `freeze/${ID}`,
            commit: null,
            placements: [
              { changeId: REPLICAS, placed: false, reason: 'no file sets it', yaml: 'spec:\n  replicas: 12\n' },
            ],
          },
        ],
      }),
    );
    expect((await screen.findByTestId('freeze-decisions')).textContent).toContain('write back to Git');
    const p = screen.getByTestId('placement');
    expect(p.getAttribute('data-placed')).toBe('false');
    expect(p.querySelector('pre')?.textContent).toBe('spec:\n  replicas: 12\n');
    expect(screen.queryByTestId('unfreeze')).toBeNull();
    expect(screen.queryByTestId('freeze-change')).toBeNull();
  });
});
