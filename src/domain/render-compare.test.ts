import { describe, expect, it } from 'vitest';
import { compareRenders } from './render-compare.ts';

const deploy = (image: string, replicas = 2) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'render-worker', namespace: 'dev', labels: { app: 'render-worker' } },
  spec: {
    replicas,
    template: {
      spec: {
        containers: [
          { name: 'render', image },
          { name: 'sidecar', image: 'envoy:1' },
        ],
      },
    },
  },
});
const cm = (name: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'dev' },
  data: { a: '1' },
});

describe('two renders compared', () => {
  it('names the changed image by its container, the added and removed objects, and counts the rest', () => {
    const c = compareRenders(
      [deploy('render:1.4.2'), cm('settings-abc'), cm('kept')],
      [deploy('render:1.4.3'), cm('settings-def'), cm('kept')],
    );
    expect(c.changed).toEqual([
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        namespace: 'dev',
        name: 'render-worker',
        fields: [
          { path: 'spec.template.spec.containers[name=render].image', from: 'render:1.4.2', to: 'render:1.4.3' },
        ],
      },
    ]);
    expect(c.added.map((r) => r.name)).toEqual(['settings-def']);
    expect(c.removed.map((r) => r.name)).toEqual(['settings-abc']);
    expect(c.unchanged).toBe(1);
  });

  it('a field only on one side has only that side; identical renders compare empty', () => {
    const c = compareRenders([deploy('x:1')], [{ ...deploy('x:1'), spec: { ...deploy('x:1').spec, paused: true } }]);
    expect(c.changed[0]?.fields).toEqual([{ path: 'spec.paused', to: true }]);
    expect(compareRenders([deploy('x:1')], [deploy('x:1')])).toEqual({
      added: [],
      removed: [],
      changed: [],
      unchanged: 1,
    });
  });
});
