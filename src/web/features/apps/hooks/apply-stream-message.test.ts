// The stream's pure cache updates (the live-updates hook in src/web/app only wires them).
import { describe, expect, it } from 'vitest';
import { appsFixture } from '../../../../../mocks/handlers.ts';
import type { AppResponse, AppsResponse, ClusterStateDto } from '../../../../api/schemas.ts';
import { applyToAppDetail, applyToAppList, applyToClusters } from './apply-stream-message.ts';

const list: AppsResponse = { apps: appsFixture.apps.slice(0, 2), total: 2, envs: ['dev', 'prod'] };
const first = list.apps[0]!;
const cluster = appsFixture.clusters[0]!;

describe('applyToAppList', () => {
  it('replaces an app it has, keeping the total', () => {
    const next = applyToAppList(list, { type: 'app-upsert', app: { ...first, health: 'Degraded' } });
    expect(next?.apps[0]?.health).toBe('Degraded');
    expect(next?.total).toBe(2);
  });
  it('adds a new app and its env', () => {
    const next = applyToAppList(list, { type: 'app-upsert', app: { ...first, id: 'x/y/kustomization/z', env: 'qa' } });
    expect(next?.apps).toHaveLength(3);
    expect(next?.total).toBe(3);
    expect(next?.envs).toEqual(['dev', 'prod', 'qa']);
  });
  it('removes a deleted app', () => {
    const next = applyToAppList(list, { type: 'app-delete', id: first.id });
    expect(next?.apps.map((a) => a.id)).not.toContain(first.id);
    expect(next?.total).toBe(1);
  });
  it('leaves an unloaded list alone', () => {
    expect(applyToAppList(undefined, { type: 'app-delete', id: first.id })).toBeUndefined();
  });
});

describe('applyToClusters', () => {
  it('replaces a known cluster and adds a new one', () => {
    const down: ClusterStateDto = { ...cluster, status: 'unreachable' };
    expect(applyToClusters({ clusters: [cluster] }, { type: 'cluster', cluster: down })?.clusters).toEqual([down]);
    const other: ClusterStateDto = { ...cluster, name: 'other' };
    expect(applyToClusters({ clusters: [cluster] }, { type: 'cluster', cluster: other })?.clusters).toHaveLength(2);
  });
  it('ignores other messages', () => {
    const data = { clusters: [cluster] };
    expect(applyToClusters(data, { type: 'app-objects', id: 'a' })).toBe(data);
  });
});

describe('applyToAppDetail', () => {
  const { inventoryCount: _n, ...app } = first;
  const detail: AppResponse = { app: { ...app, inventory: [] } };
  const drift = {
    since: '2026-12-01T10:00:00Z',
    lastWriteAt: '2026-12-01T10:00:00Z',
    kind: 'person' as const,
    managers: ['kubectl'],
    objectCount: 0,
    objects: [],
  };
  it('shows an upsert at once (drift appears and ends), keeping the inventory', () => {
    const drifted = applyToAppDetail(detail, { type: 'app-upsert', app: { ...first, drift } });
    expect(drifted?.app.drift).toEqual(drift);
    expect(drifted?.app.inventory).toBe(detail.app.inventory);
    expect(applyToAppDetail(drifted, { type: 'app-upsert', app: first })?.app.drift).toBeUndefined();
  });
  it('leaves another app, a delete and an empty cache alone', () => {
    expect(applyToAppDetail(detail, { type: 'app-upsert', app: { ...first, id: 'other' } })).toBe(detail);
    expect(applyToAppDetail(detail, { type: 'app-delete', id: first.id })).toBe(detail);
    expect(applyToAppDetail(undefined, { type: 'app-upsert', app: first })).toBeUndefined();
  });
});
