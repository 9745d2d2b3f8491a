// @vitest-environment jsdom
// The stale banner says since when an unreachable or reconnecting cluster's data is stale as every time in the
// console (a <time> with the zone, UTC on hover), never as a raw ISO string.
import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { ClusterStateDto } from '../../../../api/schemas.ts';
import { StaleBanner } from './stale-banner.tsx';

afterEach(cleanup);

const cluster = (over: Partial<ClusterStateDto>): ClusterStateDto =>
  ({
    name: 'prod',
    server: 'https://prod:6443',
    status: 'unreachable',
    since: '2026-12-01T08:47:12Z',
    ...over,
  }) as ClusterStateDto;

describe('StaleBanner', () => {
  it.each([
    ['unreachable', cluster({ staleSince: '2026-12-01T08:40:00Z' })],
    ['reconnecting', cluster({ status: 'connecting', staleSince: '2026-12-01T08:40:00Z' })],
  ])('%s: stale since a <time> in the one format', (_, c) => {
    render(<StaleBanner clusters={[c]} />);
    const banner = screen.getByTestId('stale-banner');
    const time = [...banner.querySelectorAll('time')].find((t) => /^\d{4}-/.test(t.textContent ?? ''));
    expect(time?.getAttribute('dateTime')).toBe('2026-12-01T08:40:00Z');
    expect(time?.textContent).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+$/);
    expect(time?.getAttribute('title')).toBe('2026-12-01 08:40:00 UTC');
    expect(banner.textContent).not.toContain('2026-12-01T08:40:00Z');
  });
});
