// The live canary object a governed action acts on (an Argo Rollout or a Flagger Canary): it must be one the app
// manages (its inventory), and it is read fresh through the user's connection (404 when it is gone).
import type { App } from '../../domain/app.ts';
import { HttpError } from '../http/errors.ts';
import type { ClusterConnection } from '../kube/connection.ts';

export async function readCanaryObject(
  a: App,
  ref: { namespace: string; name: string },
  kind: { group: string; version: string; kind: string; plural: string; what: string },
  conn: ClusterConnection,
): Promise<{ obj: Record<string, unknown>; path: string }> {
  const inApp = a.inventory.some(
    (r) => r.group === kind.group && r.kind === kind.kind && r.namespace === ref.namespace && r.name === ref.name,
  );
  if (!inApp) throw new HttpError(404, 'NotFound', `${a.name} manages no ${kind.what} ${ref.namespace}/${ref.name}`);
  const path = `/apis/${kind.group}/${kind.version}/namespaces/${encodeURIComponent(ref.namespace)}/${kind.plural}/${encodeURIComponent(ref.name)}`;
  const res = await conn.request('GET', path, { timeoutMs: 10_000 });
  if (res.status === 404) throw new HttpError(404, 'NotFound', `no ${kind.kind} ${ref.namespace}/${ref.name}`);
  if (res.status !== 200) throw conn.httpError(res, `GET ${kind.kind} ${ref.name}`);
  return { obj: JSON.parse(res.body) as Record<string, unknown>, path };
}
