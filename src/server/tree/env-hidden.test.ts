// An app's tree as one reader sees it (issue 40, item 8): a node whose object the console's mapping puts in an
// environment the reader may not read is left out with what hangs below it, counted, and each childCount says
// what is left below a node. The tree is shared: never changed in place.
import { describe, expect, it } from 'vitest';
import type { TreeNode } from '../../domain/tree.ts';
import type { EnvFilter } from '../auth/index.ts';
import { withoutOtherEnvs } from './routes.ts';

const node = (kind: string, namespace: string, name: string, depth: number, parent?: TreeNode): TreeNode => ({
  id: `nonprod/${kind === 'Deployment' || kind === 'ReplicaSet' ? 'apps' : 'core'}/${kind}/${namespace}/${name}`,
  ref: { cluster: 'nonprod', group: '', version: 'v1', kind, namespace, name },
  ...(parent ? { parentId: parent.id } : {}),
  depth,
  childCount: 0,
  managed: depth === 0,
  health: 'Healthy',
  reason: '',
});

const hidingStaging: EnvFilter = {
  hides: (r) => r.namespace === 'staging',
  split: (items, refOf) => ({
    visible: items.filter((i) => refOf(i).namespace !== 'staging'),
    hidden: items.filter((i) => refOf(i).namespace === 'staging'),
  }),
};

describe('withoutOtherEnvs', () => {
  it('drops a hidden node and its descendants, counts every one, recounts the children left', () => {
    const dep = { ...node('Deployment', 'dev', 'web', 0), childCount: 2 };
    const rsDev = { ...node('ReplicaSet', 'dev', 'web-1', 1, dep), childCount: 1 };
    const pod = node('Pod', 'dev', 'web-1-a', 2, rsDev);
    // a child in another namespace (a controller's) is hidden on its own
    const rsStaging = node('ReplicaSet', 'staging', 'web-2', 1, dep);
    const leak = { ...node('ConfigMap', 'staging', 'labelled', 0), childCount: 1 };
    const below = node('Pod', 'dev', 'under-a-hidden-one', 1, leak);
    const nodes = [dep, rsDev, pod, rsStaging, leak, below];
    const out = withoutOtherEnvs(nodes, hidingStaging);
    expect(out.hidden).toBe(3);
    expect(out.nodes.map((n) => [n.ref.name, n.childCount])).toEqual([
      ['web', 1],
      ['web-1', 1],
      ['web-1-a', 0],
    ]);
    expect(dep.childCount).toBe(2); // the shared tree is untouched
  });

  it('nothing hidden: the same nodes', () => {
    const nodes = [node('ConfigMap', 'dev', 'a', 0)];
    expect(withoutOtherEnvs(nodes, hidingStaging)).toEqual({ nodes, hidden: 0 });
  });
});
