// A freeze's decisions name objects by `<ref id>#<path>`: the reader of a partly visible freeze sees only the decisions
// on objects in environments they may read (routes.ts seenBy); this is how the object is read back from the id.
import { describe, expect, it } from 'vitest';
import { refId } from '../../domain/refs.ts';
import { decisionRef } from './routes.ts';

describe('decisionRef', () => {
  it('reads the object back from the change id refId made, whatever the cluster name holds', () => {
    for (const ref of [
      { cluster: 'nonprod', group: 'apps', version: 'v1', kind: 'Deployment', namespace: 'staging', name: 'web' },
      { cluster: 'eu/west', group: '', version: 'v1', kind: 'ConfigMap', namespace: 'dev', name: 'settings' },
      { cluster: 'prod', group: '', version: 'v1', kind: 'Namespace', name: 'payments' },
    ]) {
      const { cluster: _c, version: _v, ...want } = ref;
      expect(decisionRef(`${refId(ref)}#spec.replicas`)).toEqual(want);
    }
  });
});
