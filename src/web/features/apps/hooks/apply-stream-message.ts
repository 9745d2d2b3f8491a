// Pure cache updates for stream messages (unit-tested; the hook only wires them).
import type { AppResponse, AppsResponse, ClusterStateDto, StreamMessage } from '../../../../api/schemas.ts';

export function applyToAppList(list: AppsResponse | undefined, m: StreamMessage): AppsResponse | undefined {
  if (!list) return list;
  if (m.type === 'app-upsert') {
    const i = list.apps.findIndex((a) => a.id === m.app.id);
    const apps = i >= 0 ? list.apps.map((a, j) => (j === i ? m.app : a)) : [...list.apps, m.app];
    const envs = list.envs.includes(m.app.env) ? list.envs : [...list.envs, m.app.env];
    return { ...list, apps, envs, total: i >= 0 ? list.total : list.total + 1 };
  }
  if (m.type === 'app-delete') {
    const apps = list.apps.filter((a) => a.id !== m.id);
    return { ...list, apps, total: list.total - (list.apps.length - apps.length) };
  }
  return list;
}

export function applyToClusters(
  data: { clusters: ClusterStateDto[] } | undefined,
  m: StreamMessage,
): { clusters: ClusterStateDto[] } | undefined {
  if (m.type !== 'cluster') return data;
  const clusters = data?.clusters ?? [];
  const i = clusters.findIndex((c) => c.name === m.cluster.name);
  return { clusters: i >= 0 ? clusters.map((c, j) => (j === i ? m.cluster : c)) : [...clusters, m.cluster] };
}

/**
 * The app page's cached detail updated from an upsert at once (drift, sync, health… show without waiting for
 * the refetch); the summary has no inventory, so the cached one is kept until the refetch brings the new one.
 */
export function applyToAppDetail(detail: AppResponse | undefined, m: StreamMessage): AppResponse | undefined {
  if (!detail || m.type !== 'app-upsert' || m.app.id !== detail.app.id) return detail;
  // the summary is the whole app but its inventory: a field it no longer has (drift ended) is gone here too
  const { inventoryCount: _count, ...summary } = m.app;
  return { ...detail, app: { ...summary, inventory: detail.app.inventory } };
}
