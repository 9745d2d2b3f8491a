// Whether what the console shows of a cluster's apps is stale, and since when: the one derivation every screen
// uses (the stale banner, the overview's cards, the app header), so no screen shows green while another says the
// cluster is gone (issue 39). Stale: the cluster is unreachable, or reconnecting after it was (the informers'
// last list is older than the outage). Pure, no I/O.

export interface ClusterLiveness {
  status: 'connecting' | 'connected' | 'unreachable';
  since: string;
  staleSince?: string | undefined;
  reason?: string | undefined;
}

export type Staleness = { stale: false } | { stale: true; since: string; reason: string };

export function staleness(cluster: ClusterLiveness | undefined): Staleness {
  if (!cluster) return { stale: false };
  if (cluster.status === 'unreachable')
    return { stale: true, since: cluster.staleSince ?? cluster.since, reason: cluster.reason ?? 'no answer' };
  if (cluster.status === 'connecting' && cluster.staleSince)
    return { stale: true, since: cluster.staleSince, reason: cluster.reason ?? 'reconnecting' };
  return { stale: false };
}
