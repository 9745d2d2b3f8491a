// @vitest-environment jsdom
// A tree row's write facts say their times as every time in the console (local with the zone, UTC on hover), never
// as a raw ISO string.
import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { LastWrite, NodeDriftMark } from './node-write.tsx';

afterEach(cleanup);

const LOCAL = /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+/;

describe('NodeDriftMark and LastWrite', () => {
  it('the drift mark says since when in the one time format', () => {
    render(
      <NodeDriftMark
        drift={{
          kind: 'person',
          managers: ['kubectl-scale'],
          fields: [{ path: 'spec.replicas', from: 1, to: 3 }],
          since: '2026-12-01T08:47:12Z',
          lastWriteAt: '2026-12-01T08:48:00Z',
          writes: 2,
        }}
      />,
    );
    const title = screen.getByTestId('node-drift').getAttribute('title') ?? '';
    expect(title).toMatch(new RegExp(`\\(2 writes since ${LOCAL.source}\\)$`));
    expect(title).not.toContain('2026-12-01T08:47:12Z');
  });

  it('the last write names the time, local and UTC, on hover', () => {
    render(
      <LastWrite
        node={{ lastManager: { manager: 'kubectl-edit', operation: 'Update', time: '2026-12-01T08:47:12Z' } }}
      />,
    );
    expect(screen.getByTestId('last-write').getAttribute('title')).toMatch(
      new RegExp(`^last write ${LOCAL.source} · 2026-12-01 08:47:12 UTC$`),
    );
  });
});
