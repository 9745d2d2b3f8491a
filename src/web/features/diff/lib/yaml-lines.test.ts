import { describe, expect, it } from 'vitest';
import { lineOfPath, parsePath } from './yaml-lines.ts';

const y = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: render-worker
  labels:
    app.kubernetes.io/name: render-worker
spec:
  replicas: 12
  template:
    spec:
      containers:
        - name: sidecar
          image: s:1
        - name: render
          image: r:1
          env:
            - name: RENDER_QUALITY
              value: standard
            - name: DEBUG_TRACE
              value: "1"
`;

describe('yaml line locator', () => {
  it('parses managed-field paths', () => {
    expect(parsePath('metadata.labels["app.kubernetes.io/name"]')).toEqual([
      { field: 'metadata' },
      { field: 'labels' },
      { field: 'app.kubernetes.io/name' },
    ]);
    expect(parsePath('spec.ports[port=80,protocol=TCP].targetPort')).toEqual([
      { field: 'spec' },
      { field: 'ports' },
      {
        keys: [
          ['port', '80'],
          ['protocol', 'TCP'],
        ],
      },
      { field: 'targetPort' },
    ]);
  });
  it.each([
    ['spec.replicas', 8],
    ['metadata.labels["app.kubernetes.io/name"]', 6],
    ['spec.template.spec.containers[name=render].image', 15],
    ['spec.template.spec.containers[name=sidecar].image', 13],
    ['spec.template.spec.containers[name=render].env[name=DEBUG_TRACE].value', 20],
    ['spec.template.spec.containers[name=render].env[name=RENDER_QUALITY].value', 18],
  ])('%s → line %i', (path, line) => expect(lineOfPath(y, path)).toBe(line));
  it('returns the deepest line found for a missing field', () => {
    expect(lineOfPath(y, 'spec.template.spec.containers[name=render].resources.limits.cpu')).toBe(14);
  });
});
