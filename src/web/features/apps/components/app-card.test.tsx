// @vitest-environment jsdom
// The card says where an app's environment came from, and flags one the console's mapping and the label dispute.
import { cleanup, render, screen } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, describe, expect, it } from 'vitest';
import type { AppSummary } from '../../../../api/schemas.ts';
import { appsFixture } from '../../../../../mocks/handlers.ts';
import { AppCard } from './app-card.tsx';

afterEach(cleanup);

const base = appsFixture.apps.find((a) => a.env === 'prod') ?? appsFixture.apps[0];
if (!base) throw new Error('no fixture app');

function renderCard(app: AppSummary) {
  const router = createMemoryRouter([{ path: '/', element: <AppCard app={app} stale={false} /> }], {
    initialEntries: ['/'],
  });
  render(<RouterProvider router={router} />);
}

describe('AppCard: where the environment came from', () => {
  it('flags a label that disagrees with the console mapping, in words', () => {
    renderCard({
      ...base,
      env: 'prod',
      envSource: 'mapping',
      envConflict: "label says dev; the console's mapping says prod",
    });
    expect(screen.getByTestId('env-conflict').textContent).toBe("label says dev; the console's mapping says prod");
    expect(screen.getByTestId('env-conflict-badge').textContent).toBe('env conflict');
    expect(screen.queryByTestId('env-source')).toBeNull();
  });

  it('says "env from a label" when no mapping is configured', () => {
    renderCard({ ...base, envSource: 'label' });
    expect(screen.getByTestId('env-source').textContent).toBe('env from a label');
    expect(screen.queryByTestId('env-conflict')).toBeNull();
  });

  it('says "env from its namespace" without a mapping or a label', () => {
    renderCard({ ...base, envSource: 'namespace' });
    expect(screen.getByTestId('env-source').textContent).toBe('env from its namespace');
  });

  it('shows nothing more for an app the mapping places without dispute', () => {
    const { envConflict: _c, ...plain } = base;
    renderCard({ ...plain, envSource: 'mapping' });
    expect(screen.queryByTestId('env-source')).toBeNull();
    expect(screen.queryByTestId('env-conflict')).toBeNull();
  });

  it('flags an app no rule covers (environment unknown)', () => {
    renderCard({
      ...base,
      env: 'unknown',
      envSource: 'unmapped',
      envConflict: "no rule of the console's environment mapping covers prod/team-x: environment unknown",
    });
    expect(screen.getByTestId('env-conflict').textContent).toMatch(/covers prod\/team-x: environment unknown/);
  });
});

describe('AppCard: held by the prune policy (issue 39)', () => {
  it('says "held: prune needs approval" with the line in its title and the reason, never "waiting for the controller"', () => {
    const line = 'held by the prune policy: deleting ConfigMap/render-worker-config needs an approved prune preview';
    renderCard({
      ...base,
      sync: 'OutOfSync',
      health: 'Degraded',
      healthMessage: line,
      pruneHold: { objects: ['ConfigMap/render-worker-config'], count: 1, message: 'prune of ConfigMap/…' },
    });
    expect(screen.getByTestId('prune-hold-badge').textContent).toBe('held: prune needs approval');
    expect(screen.getByTestId('prune-hold-badge').querySelector('[title]')?.getAttribute('title')).toBe(line);
    expect(screen.getByTestId('health-reason').textContent).toBe(line);
  });

  it('no badge without a hold', () => {
    renderCard({ ...base });
    expect(screen.queryByTestId('prune-hold-badge')).toBeNull();
  });
});
