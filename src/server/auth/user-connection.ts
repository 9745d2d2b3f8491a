// The one place that decides which identity a request to a cluster goes out as.
import type { Principal } from './sessions.ts';
import { HttpError } from '../http/errors.ts';
import { AccessReviewer } from './access-review.ts';
import type { ClusterManager, ManagedCluster } from '../kube/cluster-manager.ts';
import type { ClusterConnection } from '../kube/connection.ts';

/** A connected cluster by name; 404 when the console has no such cluster. */
export function managedCluster(clusters: ClusterManager, name: string): ManagedCluster {
  const mc = clusters.clusters.get(name);
  if (!mc) throw new HttpError(404, 'NotFound', `no cluster ${name}`, name);
  return mc;
}

/**
 * The connection a user's request uses: in impersonation mode (a reviewer is configured) the console's own
 * connection carrying Impersonate-User/-Group for this user, so the cluster's RBAC decides; otherwise the
 * console's own identity.
 */
export function connectionFor(
  mc: ManagedCluster,
  reviewer: AccessReviewer | undefined,
  user: Principal | undefined,
): ClusterConnection {
  return reviewer && user ? mc.conn.withHeaders(AccessReviewer.headers(user)) : mc.conn;
}
