// @vitest-environment jsdom
// The stream's first open: the app list is read again 3 s later only when it may have missed a change (it was
// read before the stream began, on another replica, or without a version); the apps' other views always are.
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, render } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AppsResponse } from '../../api/schemas.ts';
import { appKeys } from '../features/apps/api/apps-queries.ts';
import { parsers } from '../lib/lazy-parsers.ts';
import { useLiveUpdates } from './use-live-updates.ts';

class FakeEventSource {
  static last: FakeEventSource | undefined;
  onopen: (() => void) | null = null;
  onerror: (() => void) | null = null;
  onmessage: ((ev: MessageEvent<string>) => void) | null = null;
  constructor(readonly url: string) {
    FakeEventSource.last = this;
  }
  close() {}
}

function Live() {
  useLiveUpdates();
  return null;
}

const list = (version?: string): AppsResponse => ({ apps: [], total: 0, envs: [], ...(version ? { version } : {}) });

/** Mounts the stream with the list cached at `listVersion`, opens it with hello `helloVersion`: is the list refetched? */
async function listRefetched(listVersion: string | undefined, helloVersion: string): Promise<boolean> {
  await parsers(); // the stream parses with the lazily loaded schemas: loaded before the fake clock runs
  vi.useFakeTimers();
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  qc.setQueryData(appKeys.list(), list(listVersion));
  qc.setQueryData(appKeys.detail('c/ns/kustomization/a'), { app: {} });
  render(
    <QueryClientProvider client={qc}>
      <Live />
    </QueryClientProvider>,
  );
  const es = FakeEventSource.last as FakeEventSource;
  es.onopen?.();
  es.onmessage?.({ data: JSON.stringify({ type: 'hello', version: helloVersion }) } as MessageEvent<string>);
  await vi.advanceTimersByTimeAsync(3_100);
  // the detail is always marked stale; the list only when it may have missed something
  expect(qc.getQueryState(appKeys.detail('c/ns/kustomization/a'))?.isInvalidated).toBe(true);
  return qc.getQueryState(appKeys.list())?.isInvalidated ?? false;
}

beforeEach(() => {
  vi.stubGlobal('EventSource', FakeEventSource);
});
afterEach(() => {
  cleanup();
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe('useLiveUpdates: the first open', () => {
  it('a list read at or after the stream began is kept (no second copy of the whole list)', async () => {
    expect(await listRefetched('ab12:7', 'ab12:7')).toBe(false);
    expect(await listRefetched('ab12:8', 'ab12:7')).toBe(false);
  });
  it('a list read before it, on another replica or without a version is read again', async () => {
    expect(await listRefetched('ab12:6', 'ab12:7')).toBe(true);
    expect(await listRefetched('cd34:9', 'ab12:7')).toBe(true);
    expect(await listRefetched(undefined, 'ab12:7')).toBe(true);
  });
});
