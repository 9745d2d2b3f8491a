import { describe, expect, it } from 'vitest';
import type { ObjectRef } from './refs.ts';
import { buildTree, UNREAD_SECRET_REASON } from './tree.ts';

const ref = (group: string, kind: string, name: string): ObjectRef => ({
  cluster: 'nonprod',
  group,
  version: 'v1',
  kind,
  namespace: 'dev',
  name,
});
const live = (kind: string, name: string) => ({
  apiVersion: kind === 'Deployment' ? 'apps/v1' : 'v1',
  kind,
  metadata: { name, namespace: 'dev', uid: `uid-${name}` },
  status: kind === 'Deployment' ? { replicas: 1, availableReplicas: 1, updatedReplicas: 1, readyReplicas: 1 } : {},
  spec: kind === 'Deployment' ? { replicas: 1 } : {},
});

describe('buildTree: kinds the console never reads', () => {
  const inventory = [ref('', 'ConfigMap', 'cfg'), ref('', 'Secret', 'api-token'), ref('', 'ConfigMap', 'gone')];
  const objects = new Map([['cfg', live('ConfigMap', 'cfg')]]);
  const src = {
    get: (r: ObjectRef) => objects.get(r.name),
    childrenOf: () => [],
    extraneous: () => [],
  };

  it('a Secret in the desired state is Unknown (never read), not Missing, and leaves the app health alone', () => {
    const { nodes, summary } = buildTree('nonprod', inventory, src);
    const secret = nodes.find((n) => n.ref.kind === 'Secret');
    expect(secret).toMatchObject({ health: 'Unknown', sync: 'Unknown', reason: UNREAD_SECRET_REASON, unread: true });
    // a ConfigMap that is not live is still Missing, and it is what the app's health names
    expect(nodes.find((n) => n.ref.name === 'gone')).toMatchObject({ health: 'Missing', sync: 'Missing' });
    expect(summary.health).toBe('Missing');
    expect(summary.reason).toContain('ConfigMap dev/gone');
    // without the missing ConfigMap the app is Healthy although the Secret's state is unknown
    const healthy = buildTree('nonprod', inventory.slice(0, 2), src);
    expect(healthy.summary.health).toBe('Healthy');
    expect(healthy.summary.counts.Unknown).toBe(1);
  });
});
