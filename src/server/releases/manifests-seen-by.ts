// A release's stored manifests as one reader may see them (issue 40, items 8 and 9): an object whose namespace the
// console's mapping puts in an environment the reader may not read (release.read there), and in impersonation mode
// an object its Kubernetes RBAC does not let it get, is left out and counted with why, never dropped silently.
// The stored render is the console's (recorded with its own identity); this runs per request.
import type { FastifyRequest } from 'fastify';
import { hiddenEnvLine } from '../../domain/env-visibility.ts';
import type { Obj } from '../../domain/object-meta.ts';
import { splitApiVersion } from '../../domain/refs.ts';
import { AccessReviewer, envFilter } from '../auth/index.ts';
import type { AppCatalog } from '../apps/index.ts';

const refOf = (cluster: string, o: Obj) => {
  const md = (o.metadata ?? {}) as { namespace?: unknown; name?: unknown };
  return {
    cluster,
    ...splitApiVersion(String(o.apiVersion ?? 'v1')),
    kind: String(o.kind ?? ''),
    ...(typeof md.namespace === 'string' && md.namespace ? { namespace: md.namespace } : {}),
    name: typeof md.name === 'string' ? md.name : '',
  };
};

export async function manifestsSeenBy(
  req: FastifyRequest,
  deps: { catalog: Pick<AppCatalog, 'envOfNamespace'>; reviewer?: AccessReviewer | undefined },
  cluster: string,
  objects: Obj[],
): Promise<{ objects: Obj[]; hidden?: { objects: number; reasons: string[] } }> {
  const byEnv = envFilter(req, deps.catalog, cluster, 'release.read').split(objects, (o) => refOf(cluster, o));
  const byRbac = await AccessReviewer.split(deps.reviewer, req.principal, byEnv.visible, (o) => refOf(cluster, o));
  const count = byEnv.hidden.length + byRbac.hidden.length;
  if (!count) return { objects };
  return {
    objects: byRbac.visible,
    hidden: {
      objects: count,
      reasons: [
        ...(byEnv.hidden.length ? [hiddenEnvLine(byEnv.hidden.length)] : []),
        ...(byRbac.message ? [byRbac.message] : []),
      ],
    },
  };
}
