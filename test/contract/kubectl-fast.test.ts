// The scenario helpers' in-process kubectl (sandbox/kubectl-fast.ts) against kubectl itself, on the bare cluster:
// every mapped command run both ways on twin objects must leave the same objects (content and every field
// manager's entry) and print the same output and errors. A test that reads an SSA manager badge depends on it.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseKubectlArgs } from '../../sandbox/kubectl-fast.ts';
import { kubectl } from '../../sandbox/state.ts';

type Json = Record<string, unknown>;
const CLUSTER = 'nonprod';
const ns = `t-kubectl-fast-${randomBytes(3).toString('hex')}`;

/** kubectl's output (or its error's text after the command line) with the mapping off, or on */
function run(spawn: boolean, args: string[], input?: string): string {
  const before = process.env.SANDBOX_KUBECTL;
  if (spawn) process.env.SANDBOX_KUBECTL = 'spawn';
  try {
    return kubectl(CLUSTER, args, input);
  } catch (e) {
    return `ERR ${(e as Error).message.replace(/^kubectl .*? \(nonprod\): /s, '')}`;
  } finally {
    if (before === undefined) delete process.env.SANDBOX_KUBECTL;
    else process.env.SANDBOX_KUBECTL = before;
  }
}

/** the same command for both twins: `a` in process, `b` by kubectl; outputs compared with the name masked */
function both(args: (name: string) => string[], input?: (name: string) => string): void {
  const a = run(false, args('twin-a'), input?.('twin-a'));
  const b = run(true, args('twin-b'), input?.('twin-b'));
  expect(a.replaceAll('twin-a', 'N')).toBe(b.replaceAll('twin-b', 'N'));
}

function shape(kind: string, name: string) {
  const o = JSON.parse(kubectl(CLUSTER, ['-n', ns, 'get', kind, name, '-o', 'json', '--show-managed-fields'])) as Json;
  const meta = o.metadata as Json;
  const managers = (meta.managedFields as Json[]).map((m) =>
    JSON.stringify([m.manager, m.operation, m.subresource ?? '', m.fieldsV1]),
  );
  return { managers: managers.sort(), data: o.data, spec: o.spec, annotations: meta.annotations, labels: meta.labels };
}

const manifests = (name: string) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
  namespace: ${ns}
  labels: { twin: "yes" }
data:
  a: "1"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  namespace: ${ns}
spec:
  replicas: 1
  selector: { matchLabels: { app: ${name} } }
  template:
    metadata: { labels: { app: ${name} } }
    spec: { containers: [{ name: c, image: registry.invalid/c:1 }] }
`;

describe('the in-process kubectl of the scenario helpers, against kubectl', () => {
  beforeAll(() => {
    kubectl(CLUSTER, ['create', 'namespace', ns]);
  });
  afterAll(() => {
    kubectl(CLUSTER, ['delete', 'namespace', ns, '--ignore-not-found', '--wait=false']);
  });

  it('writes the same objects with the same field managers, and prints the same', () => {
    both(() => ['apply', '--server-side', '--field-manager=sandbox', '-f', '-'], manifests);
    both((n) => ['-n', ns, 'patch', 'configmap', n, '--type', 'merge', '-p', '{"data":{"b":"2"}}']);
    both((n) => [
      '-n',
      ns,
      'patch',
      'configmap',
      n,
      '--type',
      'json',
      '-p',
      '[{"op":"add","path":"/data/c","value":"3"}]',
    ]);
    const env = { spec: { template: { spec: { containers: [{ name: 'c', env: [{ name: 'X', value: '1' }] }] } } } };
    both((n) => ['-n', ns, 'patch', 'deployment', n, '--field-manager', 'kubectl-edit', '-p', JSON.stringify(env)]);
    both((n) => [
      ...['-n', ns, 'patch', 'deployment', n, '--subresource=scale', '--type', 'merge'],
      ...['--field-manager', 'kube-controller-manager', '-p', '{"spec":{"replicas":3}}'],
    ]);
    both((n) => ['-n', ns, 'annotate', 'configmap', n, 'example.dev/x=y', 'q=1', '--overwrite']);
    both((n) => ['-n', ns, 'annotate', 'configmap', n, 'q-', '--overwrite']);
    both((n) => ['-n', ns, 'label', `deployment/${n}`, 'env=dev', '--overwrite']);
    both(
      () => ['apply', '--server-side', '--field-manager=other', '-f', '-'],
      (n) => manifests(n).replace('"1"', '"9"'),
    );

    for (const kind of ['configmap', 'deployment']) {
      const a = JSON.stringify(shape(kind, 'twin-a')).replaceAll('twin-a', 'N');
      expect(a).toBe(JSON.stringify(shape(kind, 'twin-b')).replaceAll('twin-b', 'N'));
    }
    // the badge's source: the scale came from kube-controller-manager on the scale subresource
    expect(shape('deployment', 'twin-a').managers.join()).toMatch(/kube-controller-manager","Update","scale"/);
  });

  it('reads as kubectl prints: json, name, a field, lists by label', () => {
    both((n) => ['-n', ns, 'get', 'configmap', n, '-o', 'jsonpath={.data.a}']);
    both((n) => ['-n', ns, 'get', `deploy/${n}`, '-o', 'jsonpath={.metadata.labels}']);
    both((n) => ['-n', ns, 'get', 'configmap', n, '-o', 'name']);
    const list = (spawn: boolean) => {
      const o = JSON.parse(run(spawn, ['-n', ns, 'get', 'configmaps', '-l', 'twin', '-o', 'json'])) as Json;
      return (o.items as Json[]).map(
        (i) => `${String(i.apiVersion)} ${String(i.kind)} ${String((i.metadata as Json).name)}`,
      );
    };
    expect(list(false)).toEqual(list(true));
    expect(list(false)).toEqual(['v1 ConfigMap twin-a', 'v1 ConfigMap twin-b']);
    const one = JSON.parse(run(false, ['-n', ns, 'get', 'configmap', 'twin-a', '-o', 'json'])) as Json;
    expect((one.metadata as Json).managedFields).toBeUndefined();
  });

  it('fails as kubectl does, and deletes as it does (waiting until the object is gone)', () => {
    both((n) => ['-n', ns, 'get', 'configmap', `${n}-missing`, '-o', 'json']);
    both((n) => ['-n', ns, 'get', 'configmap', `${n}-missing`, '-o', 'json', '--ignore-not-found']);
    both((n) => ['-n', ns, 'patch', 'deployment', n, '--type', 'merge', '-p', '{"spec":{"replicas":-1}}']);
    both((n) => ['-n', ns, 'delete', 'configmap', n, '--ignore-not-found', '--wait']);
    both((n) => ['-n', ns, 'delete', 'configmap', n]);
    both((n) => ['-n', ns, 'delete', 'configmap', n, '--ignore-not-found']);
    both((n) => ['-n', ns, 'delete', `deployment/${n}`, `configmap/${n}`, '--ignore-not-found', '--wait=false']);
    expect(run(false, ['-n', ns, 'get', 'configmap', 'twin-a', '-o', 'name'])).toMatch(/NotFound/);
  });

  it('leaves to kubectl what it does not map', () => {
    expect(parseKubectlArgs(['get', 'pods', '--sort-by=.metadata.name'])).toBeUndefined();
    expect(parseKubectlArgs(['-n', 'x', 'get', 'ks', 'y', '-o', 'json'])).toMatchObject({
      verb: 'get',
      pos: ['ks', 'y'],
    });
    // table output is kubectl's own: the mapping declines it and the result is kubectl's
    expect(run(false, ['get', 'namespace', ns])).toMatch(/^NAME\s+STATUS\s+AGE\n/);
  });
});
