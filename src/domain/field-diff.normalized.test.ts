// fieldDiff without the server-side dry-run ('normalized' mode, the fallback when the dry-run is forbidden or
// fails): Git's fields are compared with what the apiserver returns, merge keys with their defaults filled in
// (a port's protocol is TCP), and fields Git does not set are defaulted, never pending. The objects are a
// Deployment and a Service as kube-apiserver returns them after kustomize-controller applied Git
// (fixtures/apiserver-defaults.json), then changed the way each row says.
import { describe, expect, it } from 'vitest';
import fixture from './fixtures/apiserver-defaults.json' with { type: 'json' };
import paths from './fixtures/field-paths-handwritten.json' with { type: 'json' };
import { fieldDiff, type ChangeClass, type FieldChange, type IgnoreRule } from './field-diff.ts';

type Obj = Record<string, unknown>;
const FLUX = ['kustomize-controller'];
const C = 'spec.template.spec.containers[name=render]';
const clone = <T>(o: T): T => structuredClone(o);

const normalized = (git: unknown, live: unknown, ignore?: IgnoreRule): FieldChange[] =>
  fieldDiff({
    desired: git,
    // what app-diff passes when the dry-run is unavailable
    predicted: git,
    live,
    controllerManagers: FLUX,
    mode: 'normalized',
    ...(ignore ? { ignore } : {}),
  });
const notDefaulted = (changes: FieldChange[]) =>
  changes
    .filter((c) => c.class !== 'defaulted')
    .map((c) => [c.path, c.class, [...new Set(c.owners.map((o) => o.manager))]]);

const container = (d: Obj): Obj => ((((d.spec as Obj).template as Obj).spec as Obj).containers as Obj[])[0] as Obj;
const managedFields = (d: Obj): Obj[] => (d.metadata as Obj).managedFields as Obj[];
const kustomizeSpec = (d: Obj): Obj => ((managedFields(d)[0] as Obj).fieldsV1 as Obj)['f:spec'] as Obj;
const update = (manager: string, fieldsV1: Obj, subresource?: string): Obj => ({
  apiVersion: 'apps/v1',
  fieldsType: 'FieldsV1',
  fieldsV1,
  manager,
  operation: 'Update',
  ...(subresource ? { subresource } : { time: '2026-11-30T12:10:00Z' }),
});

describe('normalized mode on objects as the apiserver returns them', () => {
  it.each([
    ['Deployment', fixture.deployment],
    ['Service', fixture.service],
  ])('reports nothing but defaults for an unchanged %s', (_kind, { git, live }) => {
    expect(notDefaulted(normalized(git, live))).toEqual([]);
  });

  it.each([
    'spec.progressDeadlineSeconds',
    'spec.revisionHistoryLimit',
    'spec.strategy.rollingUpdate.maxSurge',
    'spec.strategy.rollingUpdate.maxUnavailable',
    'spec.strategy.type',
    `${C}.imagePullPolicy`,
    `${C}.terminationMessagePath`,
    `${C}.terminationMessagePolicy`,
    'spec.template.spec.dnsPolicy',
    'spec.template.spec.restartPolicy',
    'spec.template.spec.schedulerName',
    'spec.template.spec.securityContext',
    'spec.template.spec.terminationGracePeriodSeconds',
  ])('Deployment default %s is defaulted, with the live value', (path) => {
    const c = normalized(fixture.deployment.git, fixture.deployment.live).find((x) => x.path === path);
    expect(c).toMatchObject({ class: 'defaulted' });
    expect(c?.desired).toBeUndefined();
    expect(c?.live).toBeDefined();
  });

  it.each([
    'spec.clusterIP',
    'spec.clusterIPs',
    'spec.internalTrafficPolicy',
    'spec.ipFamilies',
    'spec.ipFamilyPolicy',
    'spec.sessionAffinity',
    'spec.type',
  ])('Service default %s is defaulted', (path) => {
    expect(normalized(fixture.service.git, fixture.service.live).find((x) => x.path === path)).toMatchObject({
      class: 'defaulted',
    });
  });

  it('matches the port Git keys [containerPort=8080] with the live [containerPort=8080,protocol=TCP]', () => {
    const changes = normalized(fixture.deployment.git, fixture.deployment.live);
    expect(changes.filter((c) => c.path.includes('.ports'))).toEqual([]);
  });
});

describe('normalized mode: real changes keep their class', () => {
  type Case = [name: string, change: (git: Obj, live: Obj) => void, want: unknown[][], ignore?: IgnoreRule];
  it.each<Case>([
    [
      'Git changes an env value: pending',
      (git) => ((container(git).env as Obj[])[0]!.value = 'ultra'),
      [[`${C}.env[name=RENDER_QUALITY].value`, 'pending', ['kustomize-controller']]],
    ],
    [
      'Git renames the port (Git has no protocol): pending under the defaulted key',
      (git) => ((container(git).ports as Obj[])[0]!.name = 'web'),
      [[`${C}.ports[containerPort=8080,protocol=TCP].name`, 'pending', ['kustomize-controller']]],
    ],
    [
      'Git changes a request: pending (quantities compared by value)',
      (git) => (((container(git).resources as Obj).requests as Obj).cpu = '750m'),
      [[`${C}.resources.requests.cpu`, 'pending', ['kustomize-controller']]],
    ],
    [
      'Git sets a field the apiserver had defaulted: pending',
      (git) => (container(git).imagePullPolicy = 'Always'),
      // nobody owns the default; the container item (".") is kustomize-controller's
      [[`${C}.imagePullPolicy`, 'pending', ['kustomize-controller']]],
    ],
    [
      'kubectl edit changed replicas: drift',
      (_git, live) => {
        (live.spec as Obj).replicas = 5;
        delete kustomizeSpec(live)['f:replicas'];
        managedFields(live).push(update('kubectl-edit', { 'f:spec': { 'f:replicas': {} } }));
      },
      [['spec.replicas', 'drift', ['kubectl-edit']]],
    ],
    [
      'kubectl edit added an env var Git does not have: drift',
      (_git, live) => {
        (container(live).env as Obj[]).push({ name: 'DEBUG', value: '1' });
        managedFields(live).push(
          update('kubectl-edit', {
            'f:spec': {
              'f:template': {
                'f:spec': {
                  'f:containers': {
                    'k:{"name":"render"}': {
                      'f:env': { 'k:{"name":"DEBUG"}': { '.': {}, 'f:name': {}, 'f:value': {} } },
                    },
                  },
                },
              },
            },
          }),
        );
      },
      [[`${C}.env[name=DEBUG].value`, 'drift', ['kubectl-edit']]],
    ],
    [
      'an HPA scaled the Deployment Git sizes: conflict',
      (_git, live) => {
        (live.spec as Obj).replicas = 7;
        delete kustomizeSpec(live)['f:replicas'];
        managedFields(live).push(update('kube-controller-manager', { 'f:spec': { 'f:replicas': {} } }, 'scale'));
      },
      [['spec.replicas', 'conflict', ['kube-controller-manager']]],
    ],
    [
      'an HPA scaled it and an Argo CD jsonPointer ignores /spec/replicas: ignored',
      (_git, live) => {
        (live.spec as Obj).replicas = 7;
        delete kustomizeSpec(live)['f:replicas'];
        managedFields(live).push(update('kube-controller-manager', { 'f:spec': { 'f:replicas': {} } }, 'scale'));
      },
      [['spec.replicas', 'ignored', ['kube-controller-manager']]],
      { jsonPointers: ['/spec/replicas'] },
    ],
    [
      'an Argo CD jsonPointer with a list index names the keyed item',
      (git) => (container(git).image = 'registry.local/render-worker:1.5.0'),
      [[`${C}.image`, 'ignored', ['kustomize-controller']]],
      { jsonPointers: ['/spec/template/spec/containers/0/image'] },
    ],
  ])('%s', (_name, change, want, ignore) => {
    const git = clone(fixture.deployment.git) as Obj;
    const live = clone(fixture.deployment.live) as Obj;
    change(git, live);
    expect(notDefaulted(normalized(git, live, ignore))).toEqual(want);
  });
});

describe('server-dry-run mode with a Git port that has no protocol', () => {
  it('keys Git’s port with protocol=TCP, so its name is Git’s (not defaulted) and equal', () => {
    const { managedFields: _mf, ...meta } = fixture.deployment.live.metadata;
    const predicted = { ...fixture.deployment.live, metadata: meta };
    const changes = fieldDiff({
      desired: fixture.deployment.git,
      predicted,
      live: fixture.deployment.live,
      controllerManagers: FLUX,
      mode: 'server-dry-run',
    });
    expect(notDefaulted(changes)).toEqual([]);
    expect(changes.filter((c) => c.path.includes('.ports'))).toEqual([]);
  });
});

describe('normalized mode on non-identifier keys classifies as the dry-run does', () => {
  it.each([
    ['Secret', paths.secret],
    ['ConfigMap', paths.configMap],
    ['Service', paths.service],
  ])('%s', (_kind, s) => {
    const classes = (changes: FieldChange[]): Array<[string, ChangeClass]> =>
      changes.filter((c) => !c.path.startsWith('spec.')).map((c) => [c.path, c.class]);
    const dryRun = fieldDiff({
      desired: s.git,
      predicted: s.dryRun,
      live: s.live,
      controllerManagers: FLUX,
      mode: 'server-dry-run',
    });
    expect(classes(normalized(s.git, s.live))).toEqual(classes(dryRun));
  });
});
