// The tree route's window parameters (api/tree.ts TreeWindowQuery): `after` is a keyset cursor (a node id, or
// `^`), `through` the end of a range (a node id, or `$`), checked before the tree is cut; a malformed one is a
// 400 that says what one is, and `offset` (the paging they replaced, which skipped nodes when health changed
// between pages) is gone.
import { describe, expect, it } from 'vitest';
import { HttpError } from '../http/errors.ts';
import type { TreeNode } from '../../domain/tree.ts';
import { treeWindowOf, withDrift } from './routes.ts';

describe('treeWindowOf', () => {
  it('passes a node id or the walk start as `after`, and an empty one as none', () => {
    const id = 'nonprod/apps/Deployment/dev/tts-gateway';
    expect(treeWindowOf({ window: '2', depth: '0', after: id })).toMatchObject({ window: 2, depth: 0, after: id });
    expect(treeWindowOf({ window: '2', after: '^' })?.after).toBe('^');
    expect(treeWindowOf({ window: '2', after: '' })).not.toHaveProperty('after');
    expect(treeWindowOf({ window: '2', offset: '4' })).not.toHaveProperty('offset');
    expect(treeWindowOf({ window: '2', after: '^', through: '$' })).toMatchObject({ after: '^', through: '$' });
    expect(treeWindowOf({ window: '2', after: '^', through: id })?.through).toBe(id);
  });

  it('answers a malformed cursor or range with a 400 that says what one is', () => {
    const refused = (q: Record<string, unknown>) => {
      try {
        treeWindowOf({ window: '2', ...q });
      } catch (e) {
        expect(e).toBeInstanceOf(HttpError);
        expect((e as HttpError).status).toBe(400);
        return (e as HttpError).message;
      }
      return 'accepted';
    };
    for (const after of ['tts-gateway', 'apps/Deployment/dev/x', 'c/apps/Deployment//x', '$', ['a', 'b']])
      expect(refused({ after })).toMatch(/^invalid tree window: after/);
    expect(refused({ after: 'tts-gateway' })).toContain('is not a node id (cluster/group/Kind/namespace-or-_/name)');
    // a range: from a cursor, to a node id or the end
    expect(refused({ through: '$' })).toBe('invalid tree window: through needs after');
    for (const through of ['^', 'x'])
      expect(refused({ after: '^', through })).toMatch(/^invalid tree window: through is not a node id/);
  });
});

describe('withDrift: a drifted row is never Synced (issue 39)', () => {
  const node = (name: string, sync: TreeNode['sync']): TreeNode => ({
    id: `nonprod/apps/Deployment/dev/${name}`,
    ref: { cluster: 'nonprod', group: 'apps', version: 'v1', kind: 'Deployment', namespace: 'dev', name },
    depth: 0,
    childCount: 0,
    managed: true,
    health: 'Healthy',
    ...(sync ? { sync } : {}),
    reason: '',
  });
  const episode = {
    kind: 'person' as const,
    managers: ['kubectl-edit'],
    fields: [{ path: 'spec.replicas', from: 2, to: 5 }],
    since: '2026-12-06T17:00:00Z',
    lastWriteAt: '2026-12-06T17:00:01Z',
    writes: 1,
  };
  it('marks the drifted row OutOfSync with its episode, leaves the others, and counts what it flipped', () => {
    const nodes = [node('a', 'Synced'), node('b', 'Synced'), node('c', 'Extraneous')];
    const drifted = new Set([nodes[0]?.id, nodes[2]?.id]);
    const tracker = {
      openCount: 2,
      forId: (id: string) => (drifted.has(id) ? (episode as never) : undefined),
    };
    const out = withDrift(nodes, tracker);
    expect(out.flipped).toBe(1);
    expect(out.nodes.map((n) => [n.ref.name, n.sync, !!n.drift])).toEqual([
      ['a', 'OutOfSync', true],
      ['b', 'Synced', false],
      // live but no longer in Git stays Extraneous: that says more than OutOfSync
      ['c', 'Extraneous', true],
    ]);
    expect(nodes[0]?.sync).toBe('Synced'); // the memo's nodes are shared: never changed in place
    expect(withDrift(nodes, { openCount: 0, forId: () => undefined })).toEqual({ nodes, flipped: 0 });
  });
});
