import { describe, expect, it } from 'vitest';
import { maskSecrets, maskValue } from './secret-mask.ts';

const LAST = 'kubectl.kubernetes.io/last-applied-configuration';

describe('maskSecrets', () => {
  const s = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'db', annotations: { [LAST]: '{"stringData":{"password":"hunter2"}}', team: 'core' } },
    data: { password: Buffer.from('hunter2').toString('base64'), user: Buffer.from('app').toString('base64') },
    stringData: { token: 'tok-123' },
  };
  const m = maskSecrets(s);
  const text = JSON.stringify(m);
  it('masks data, stringData and the last-applied annotation; keeps other metadata', () => {
    for (const leak of [
      'hunter2',
      Buffer.from('hunter2').toString('base64'),
      'tok-123',
      Buffer.from('app').toString('base64'),
    ])
      expect(text).not.toContain(leak);
    expect(m.metadata.annotations.team).toBe('core');
    expect(m.metadata.annotations[LAST]).toMatch(/^<secret [0-9a-f]{12}>$/);
  });
  it('gives the same mask to the same value and different masks to different values', () => {
    expect(maskSecrets({ ...s }).data.password).toBe(m.data.password);
    expect(m.data.password).not.toBe(m.data.user);
    expect(maskValue('a')).not.toBe(maskValue('b'));
  });
  it('masks invalid Secrets (data not a map) instead of passing them through', () => {
    const bad = maskSecrets({ kind: 'Secret', metadata: { name: 'x' }, data: 'c2VjcmV0', stringData: ['s3cret'] });
    expect(JSON.stringify(bad)).not.toMatch(/c2VjcmV0|s3cret/);
  });
  it('masks Secrets inside a List and leaves other kinds alone', () => {
    const list = maskSecrets({ kind: 'List', items: [s, { kind: 'ConfigMap', data: { a: 'visible' } }] });
    expect(JSON.stringify(list)).not.toContain('hunter2');
    expect(JSON.stringify(list)).toContain('visible');
  });
});
