// Which environment the adapters give an app: the console's mapping of cluster + destination namespace when one
// is configured (the label only reported), else the label, else the namespace (as before).
import { describe, expect, it } from 'vitest';
import { parseEnvMapping } from '../../domain/environments.ts';
import { applicationToApp } from './argocd.ts';
import { helmReleaseToApp, kustomizationToApp } from './flux.ts';

const rules = parseEnvMapping('nonprod/dev=dev,nonprod/staging=staging,prod/prod=prod');
const mapped = { label: 'env', rules };
const none = () => undefined;

const ks = (o: { label?: string; targetNamespace?: string; inventory?: string[]; namespace?: string }) => ({
  apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
  kind: 'Kustomization',
  metadata: {
    name: 'app',
    namespace: o.namespace ?? 'flux-system',
    labels: o.label ? { env: o.label } : {},
  },
  spec: {
    path: './x',
    sourceRef: { kind: 'GitRepository', name: 'repo' },
    ...(o.targetNamespace ? { targetNamespace: o.targetNamespace } : {}),
  },
  status: o.inventory
    ? {
        conditions: [{ type: 'Ready', status: 'True' }],
        inventory: { entries: o.inventory.map((id) => ({ id, v: 'v1' })) },
      }
    : undefined,
});

const argo = (o: {
  label?: string;
  destination?: string;
  resources?: Array<{ namespace?: string; kind: string }>;
}) => ({
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'Application',
  metadata: { name: 'edge', namespace: 'argocd', labels: o.label ? { env: o.label } : {} },
  spec: {
    source: { repoURL: 'https://git.example/x.git', path: 'edge' },
    destination: o.destination ? { namespace: o.destination } : {},
  },
  status: {
    resources: (o.resources ?? []).map((r, i) => ({ group: '', version: 'v1', name: `r${i}`, ...r })),
  },
});

const envOf = (a: { env: string; envSource?: string; envConflict?: string }) => ({
  env: a.env,
  envSource: a.envSource,
  envConflict: a.envConflict,
});

describe('Kustomization: the namespaces it applies to decide', () => {
  it.each([
    [
      'objects in prod, labelled dev: prod, flagged',
      'prod',
      ks({ label: 'dev', inventory: ['prod_web_apps_Deployment'] }),
      { env: 'prod', envSource: 'mapping', envConflict: "label says dev; the console's mapping says prod" },
    ],
    [
      'objects in dev, labelled dev: dev',
      'nonprod',
      ks({ label: 'dev', inventory: ['dev_web_apps_Deployment', '_dev__Namespace'] }),
      { env: 'dev', envSource: 'mapping', envConflict: undefined },
    ],
    [
      'targetNamespace decides before the first apply',
      'nonprod',
      ks({ targetNamespace: 'staging' }),
      { env: 'staging', envSource: 'mapping', envConflict: undefined },
    ],
    [
      'a Namespace object it applies counts as a destination',
      'nonprod',
      ks({ label: 'dev', inventory: ['dev_web_apps_Deployment', '_staging__Namespace'] }),
      {
        env: 'unknown',
        envSource: 'unmapped',
        envConflict:
          'deploys to several environments (dev → dev, staging → staging) (label says dev): environment unknown',
      },
    ],
    [
      'nothing applied and no targetNamespace: its own namespace, which no rule covers',
      'nonprod',
      ks({ label: 'dev' }),
      {
        env: 'unknown',
        envSource: 'unmapped',
        envConflict:
          "no rule of the console's environment mapping covers nonprod/flux-system (label says dev): environment unknown",
      },
    ],
    [
      'cluster-scoped objects only: its own namespace',
      'nonprod',
      ks({ namespace: 'dev', inventory: ['_view-all_rbac.authorization.k8s.io_ClusterRole'] }),
      { env: 'dev', envSource: 'mapping', envConflict: undefined },
    ],
  ] as const)('%s', (_n, cluster, obj, want) => {
    expect(envOf(kustomizationToApp(cluster, obj, none, mapped))).toEqual(want);
  });

  it('without a mapping: the label as before ("from a label"), else the target namespace', () => {
    const labelled = ks({ label: 'dev', inventory: ['prod_web_apps_Deployment'] });
    expect(envOf(kustomizationToApp('prod', labelled, none, 'env'))).toEqual({
      env: 'dev',
      envSource: 'label',
      envConflict: undefined,
    });
    expect(envOf(kustomizationToApp('prod', labelled, none, { label: 'env', rules: [] }))).toMatchObject({
      env: 'dev',
      envSource: 'label',
    });
    expect(envOf(kustomizationToApp('prod', ks({ targetNamespace: 'qa' }), none, 'env'))).toEqual({
      env: 'qa',
      envSource: 'namespace',
      envConflict: undefined,
    });
  });

  it('reads the configured label name', () => {
    const o = ks({ inventory: ['prod_web_apps_Deployment'] });
    (o.metadata.labels as Record<string, string>)['team.example/env'] = 'dev';
    expect(kustomizationToApp('prod', o, none, { label: 'team.example/env', rules }).envConflict).toBe(
      "label says dev; the console's mapping says prod",
    );
  });
});

describe('Application: its destination namespace and the namespaces of its objects decide', () => {
  it.each([
    [
      'destination prod, labelled dev: prod, flagged',
      argo({ label: 'dev', destination: 'prod', resources: [{ namespace: 'prod', kind: 'Service' }] }),
      { env: 'prod', envSource: 'mapping', envConflict: "label says dev; the console's mapping says prod" },
    ],
    [
      'destination dev but an object placed in prod: unknown',
      argo({ label: 'dev', destination: 'dev', resources: [{ namespace: 'prod', kind: 'Service' }] }),
      {
        env: 'unknown',
        envSource: 'unmapped',
        envConflict:
          "no rule of the console's environment mapping covers prod/dev (label says dev): environment unknown",
      },
    ],
    [
      'no destination namespace, objects in prod',
      argo({ resources: [{ namespace: 'prod', kind: 'Service' }, { kind: 'ClusterRole' }] }),
      { env: 'prod', envSource: 'mapping', envConflict: undefined },
    ],
  ] as const)('%s', (_n, obj, want) => {
    expect(envOf(applicationToApp('prod', obj, mapped))).toEqual(want);
  });
});

describe('HelmRelease: spec.targetNamespace, else its own namespace', () => {
  const hr = (targetNamespace?: string) => ({
    kind: 'HelmRelease',
    metadata: { name: 'podinfo', namespace: 'staging', labels: { env: 'dev' } },
    spec: { chart: { spec: { chart: 'podinfo' } }, ...(targetNamespace ? { targetNamespace } : {}) },
  });
  it('maps its namespace', () => {
    expect(envOf(helmReleaseToApp('nonprod', hr(), none, mapped))).toEqual({
      env: 'staging',
      envSource: 'mapping',
      envConflict: "label says dev; the console's mapping says staging",
    });
  });
  it('maps its target namespace', () => {
    expect(envOf(helmReleaseToApp('nonprod', hr('dev'), none, mapped))).toEqual({
      env: 'dev',
      envSource: 'mapping',
      envConflict: undefined,
    });
  });
});
