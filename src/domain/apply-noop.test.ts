// applyChangesNothing: what it proves (a server-side apply would leave live as it is) and every way that proof
// must fail — a value Git changed, a field Git dropped that the controller had applied, a list another manager
// grew, an atomic list or map that differs, an object the controller never applied. The sandbox's real
// apiserver checks the same answers against real dry-runs in test/integration/apply-noop.test.ts.
import { describe, expect, it } from 'vitest';
import { applyChangesNothing } from './apply-noop.ts';

const M = 'kustomize-controller';
const entry = (manager: string, fieldsV1: unknown, operation = 'Apply', subresource?: string, apiVersion = 'v1') => ({
  manager,
  operation,
  apiVersion,
  fieldsType: 'FieldsV1',
  fieldsV1,
  ...(subresource ? { subresource } : {}),
});

const cmDesired = () => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'cfg', namespace: 'dev', labels: { app: 'x', 'kustomize.toolkit.fluxcd.io/name': 'apps' } },
  data: { a: '1', b: '2' },
});
const cmFields = {
  'f:metadata': { 'f:labels': { '.': {}, 'f:app': {}, 'f:kustomize.toolkit.fluxcd.io/name': {} } },
  'f:data': { '.': {}, 'f:a': {}, 'f:b': {} },
};
const cmLive = (
  over: { data?: Record<string, string>; managedFields?: unknown[]; labels?: Record<string, string> } = {},
) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: 'cfg',
    namespace: 'dev',
    uid: 'u1',
    resourceVersion: '42',
    creationTimestamp: '2026-12-01T00:00:00Z',
    labels: over.labels ?? { app: 'x', 'kustomize.toolkit.fluxcd.io/name': 'apps' },
    managedFields: over.managedFields ?? [entry(M, cmFields)],
  },
  data: over.data ?? { a: '1', b: '2' },
});

const container = (extra: Record<string, unknown> = {}) => ({
  name: 'render',
  image: 'registry/render:1.0',
  args: ['--quality', 'high'],
  env: [{ name: 'RENDER_QUALITY', value: 'high' }],
  ...extra,
});
const deployDesired = (c = container()) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'render', namespace: 'dev' },
  spec: { selector: { matchLabels: { app: 'render' } }, template: { spec: { containers: [c] } } },
});
const deployFields = {
  'f:spec': {
    'f:selector': {},
    'f:template': {
      'f:spec': {
        'f:containers': {
          'k:{"name":"render"}': {
            '.': {},
            'f:args': {},
            'f:env': { 'k:{"name":"RENDER_QUALITY"}': { '.': {}, 'f:name': {}, 'f:value': {} } },
            'f:image': {},
            'f:name': {},
          },
        },
      },
    },
  },
};
/** live as the apiserver holds it: defaulted fields no manager owns, status by kube-controller-manager */
const deployLive = (c: Record<string, unknown> = container(), extraEntries: unknown[] = []) => ({
  ...deployDesired(),
  metadata: {
    name: 'render',
    namespace: 'dev',
    generation: 3,
    annotations: { 'deployment.kubernetes.io/revision': '3' },
    managedFields: [
      entry(M, deployFields, 'Apply', undefined, 'apps/v1'),
      entry('kube-controller-manager', { 'f:status': { 'f:replicas': {} } }, 'Update', 'status', 'apps/v1'),
      ...extraEntries,
    ],
  },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'render' } },
    template: {
      spec: {
        containers: [{ ...c, imagePullPolicy: 'IfNotPresent', terminationMessagePath: '/dev/termination-log' }],
        restartPolicy: 'Always',
      },
    },
  },
  status: { replicas: 1 },
});

describe('applyChangesNothing', () => {
  it('proves a ConfigMap the controller applied, unchanged in Git, whatever live bookkeeping it has', () => {
    expect(applyChangesNothing(cmDesired(), cmLive(), M)).toBe(true);
  });

  it('a value Git changed, or one changed live: not proved', () => {
    expect(applyChangesNothing({ ...cmDesired(), data: { a: '1', b: '3' } }, cmLive(), M)).toBe(false);
    expect(applyChangesNothing(cmDesired(), cmLive({ data: { a: '1', b: 'edited' } }), M)).toBe(false);
    expect(applyChangesNothing({ ...cmDesired(), data: { a: 1, b: '2' } }, cmLive(), M)).toBe(false); // 1 ≠ "1"
  });

  it('a field the controller applied and Git dropped would be removed: not proved', () => {
    expect(applyChangesNothing({ ...cmDesired(), data: { a: '1' } }, cmLive(), M)).toBe(false);
    const noLabel = cmDesired();
    noLabel.metadata.labels = { app: 'x' } as typeof noLabel.metadata.labels;
    expect(applyChangesNothing(noLabel, cmLive(), M)).toBe(false);
  });

  it('any other writer of the object itself: not proved, even a key the apply would leave (people’s edits go to the apiserver)', () => {
    const live = cmLive({
      data: { a: '1', b: '2', debug: 'on' },
      managedFields: [entry(M, cmFields), entry('kubectl-edit', { 'f:data': { 'f:debug': {} } }, 'Update')],
    });
    expect(applyChangesNothing(cmDesired(), live, M)).toBe(false);
    // status and scale writers do not count
    const statusOnly = cmLive({
      managedFields: [entry(M, cmFields), entry('some-controller', { 'f:status': {} }, 'Update', 'status')],
    });
    expect(applyChangesNothing(cmDesired(), statusOnly, M)).toBe(true);
  });

  it('the controller’s entry recorded under another apiVersion (its fieldsV1 is that version’s): not proved', () => {
    expect(
      applyChangesNothing(
        cmDesired(),
        cmLive({ managedFields: [entry(M, cmFields, 'Apply', undefined, 'v1beta1')] }),
        M,
      ),
    ).toBe(false);
  });

  it('a dropped key named like an Object.prototype member is still a dropped key', () => {
    const fields = { 'f:data': { '.': {}, 'f:a': {}, 'f:constructor': {} } };
    const live = cmLive({ data: { a: '1', constructor: 'x' }, managedFields: [entry(M, fields)] });
    const desired = { ...cmDesired(), metadata: { name: 'cfg', namespace: 'dev' }, data: { a: '1' } };
    live.metadata.labels = undefined as unknown as Record<string, string>;
    expect(applyChangesNothing(desired, live, M)).toBe(false);
  });

  it('an object the controller never applied, or applied twice over, or of another version: not proved', () => {
    expect(applyChangesNothing(cmDesired(), cmLive({ managedFields: [] }), M)).toBe(false);
    expect(
      applyChangesNothing(
        cmDesired(),
        cmLive({ managedFields: [entry('kubectl-client-side-apply', cmFields, 'Update')] }),
        M,
      ),
    ).toBe(false);
    expect(applyChangesNothing(cmDesired(), cmLive({ managedFields: [entry(M, cmFields, 'Update')] }), M)).toBe(false);
    expect(applyChangesNothing(cmDesired(), cmLive(), 'argocd-controller')).toBe(false);
    expect(applyChangesNothing({ ...cmDesired(), apiVersion: 'v2' }, cmLive(), M)).toBe(false);
  });

  it('proves a Deployment with defaulted container fields and a status manager', () => {
    expect(applyChangesNothing(deployDesired(), deployLive(), M)).toBe(true);
  });

  it('a granular list another manager grew (kubectl edit adds an env var): not proved', () => {
    const edited = container({
      env: [
        { name: 'RENDER_QUALITY', value: 'high' },
        { name: 'DEBUG_TRACE', value: '1' },
      ],
    });
    const kubectlEdit = entry(
      'kubectl-edit',
      {
        'f:spec': {
          'f:template': {
            'f:spec': {
              'f:containers': {
                'k:{"name":"render"}': {
                  'f:env': { 'k:{"name":"DEBUG_TRACE"}': { '.': {}, 'f:name': {}, 'f:value': {} } },
                },
              },
            },
          },
        },
      },
      'Update',
    );
    expect(applyChangesNothing(deployDesired(), deployLive(edited, [kubectlEdit]), M)).toBe(false);
  });

  it('an atomic list (args) or atomic map (selector) that differs in any way: not proved', () => {
    expect(applyChangesNothing(deployDesired(), deployLive(container({ args: ['--quality', 'low'] })), M)).toBe(false);
    expect(applyChangesNothing(deployDesired(), deployLive(container({ args: ['--quality', 'high', '--x'] })), M)).toBe(
      false,
    );
    const d = deployDesired();
    const live = deployLive();
    (live.spec.selector.matchLabels as Record<string, string>).tier = 'edited';
    expect(applyChangesNothing(d, live, M)).toBe(false);
  });

  it('a container Git renamed, reordered lists, a field the controller does not own set to another value: not proved', () => {
    expect(applyChangesNothing(deployDesired(container({ name: 'render2' })), deployLive(), M)).toBe(false);
    expect(applyChangesNothing(deployDesired(container({ imagePullPolicy: 'Always' })), deployLive(), M)).toBe(false);
    expect(applyChangesNothing(deployDesired(container({ image: 'registry/render:1.1' })), deployLive(), M)).toBe(
      false,
    );
  });

  it('a port keyed with its default protocol (TCP) when Git leaves it out; another protocol is not that port', () => {
    const withPort = (port: Record<string, unknown>) => container({ ports: [port] });
    const fields = structuredClone(deployFields) as typeof deployFields;
    (fields['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"render"}'] as Record<string, unknown>)[
      'f:ports'
    ] = { 'k:{"containerPort":8080,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {}, 'f:name': {} } };
    const live = (protocol: string) => {
      const l = deployLive(withPort({ containerPort: 8080, name: 'http', protocol }));
      l.metadata.managedFields[0] = entry(M, fields, 'Apply', undefined, 'apps/v1');
      return l;
    };
    expect(applyChangesNothing(deployDesired(withPort({ containerPort: 8080, name: 'http' })), live('TCP'), M)).toBe(
      true,
    );
    expect(
      applyChangesNothing(
        deployDesired(withPort({ containerPort: 8080, name: 'http', protocol: 'UDP' })),
        live('TCP'),
        M,
      ),
    ).toBe(false);
    expect(applyChangesNothing(deployDesired(withPort({ containerPort: 8080, name: 'http' })), live('UDP'), M)).toBe(
      false,
    );
  });

  it('Git setting a defaulted field to its live value is proved (the apply only takes ownership)', () => {
    expect(applyChangesNothing(deployDesired(container({ imagePullPolicy: 'IfNotPresent' })), deployLive(), M)).toBe(
      true,
    );
  });
});
