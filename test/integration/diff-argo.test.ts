// Issue #5 for Argo CD: a Helm source rendered with `helm template` at the app's revision, the diff as
// argocd-controller, and ignoreDifferences honoured (jqPathExpressions via gojq, managedFieldsManagers).
// The chart is the file's own estate's (a repository of its own, a namespace of its own mapped to staging); the
// Application is its own too (`<estate id>-hello`: helm parameters and ignoreDifferences are more than the
// estate's argoApps say), removed before the estate.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DiffResponse } from '../../src/api/schemas.ts';
import { kubectl, mustState } from '../../sandbox/state.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { kubectlEdit } from '../../sandbox/scenario.ts';
import { authedFetch, startTestConsole } from '../support/console.ts';
import { ownEstate, type Estate } from '../support/own-estate.ts';

const CHART = {
  'hello-chart/Chart.yaml': 'apiVersion: v2\nname: hello\nversion: 0.1.0\n',
  'hello-chart/values.yaml': 'replicas: 1\nimage: registry.example.com/hello:1.0\n',
  'hello-chart/templates/deployment.yaml':
    'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  replicas: {{ .Values.replicas }}\n  selector:\n    matchLabels: {app: hello}\n  template:\n    metadata:\n      labels: {app: hello}\n    spec:\n      containers:\n        - name: hello\n          image: {{ .Values.image }}\n',
};

let estate: Estate;
let APP: string;
let con: Awaited<ReturnType<typeof startTestConsole>>;

beforeAll(async () => {
  // no Flux app and no estate-made Application: the test's own Application below
  estate = await ownEstate({ name: 'diff-argo', env: 'staging', files: CHART, apps: [] });
  APP = estate.application('hello');
  const server = mustState().clusters.find((c) => c.name === estate.cluster)?.apiserver;
  kubectl(
    estate.cluster,
    ['apply', '-f', '-'],
    `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: ${APP}
  namespace: argocd
  labels: {env: staging, gitops-console.dev/test-estate: ${estate.id}}
spec:
  project: default
  source:
    repoURL: ${estate.forge.repo.cloneUrl}
    targetRevision: main
    path: hello-chart
    helm:
      releaseName: hello
      parameters:
        - {name: replicas, value: "3"}
  destination: {server: ${server}, namespace: ${estate.namespace}}
  ignoreDifferences:
    - group: apps
      kind: Deployment
      jqPathExpressions:
        - '.spec.template.spec.containers[] | select(.name == "hello") | .image'
  syncPolicy:
    # no self-heal: the test's hand edit must stay for the diff to show it
    automated: {prune: true, selfHeal: false}
`,
  );
  await estate.waitArgoSynced('hello', estate.seedCommit);
  con = await startTestConsole();
  await waitFor(
    'app listed',
    async () => (await authedFetch(`${con.url}/api/apps/${estate.argoAppId('hello')}`)).status === 200,
    { timeoutMs: 60_000, intervalMs: 500 },
  );
}, 300_000);

afterAll(async () => {
  await con?.close();
  if (estate) {
    kubectl(estate.cluster, ['-n', 'argocd', 'delete', 'application', APP, '--ignore-not-found', '--wait=false']);
    await estate.teardown();
  }
}, 120_000);

describe('Argo CD Helm app diff', () => {
  it('renders with helm at the synced revision; drift is drift, jq-ignored fields are ignored', async () => {
    kubectlEdit(estate.cluster, 'deployment/hello', estate.namespace, {
      spec: {
        replicas: 5,
        template: { spec: { containers: [{ name: 'hello', image: 'registry.example.com/hello:hotfix' }] } },
      },
    });
    const d = (await (
      await authedFetch(`${con.url}/api/apps/${estate.argoAppId('hello')}/diff`)
    ).json()) as DiffResponse;
    expect(d.state).toBe('ok');
    expect(d.render?.renderer).toMatch(/^helm v3\./);
    const dep = d.objects.find((o) => o.ref.kind === 'Deployment' && o.ref.name === 'hello');
    const byPath = Object.fromEntries((dep?.changes ?? []).map((c) => [c.path, c]));
    expect(byPath['spec.replicas']).toMatchObject({
      predicted: 3,
      live: 5,
      class: 'drift',
      owners: [expect.objectContaining({ manager: 'kubectl-edit' })],
    });
    expect(byPath['spec.template.spec.containers[name=hello].image']).toMatchObject({
      live: 'registry.example.com/hello:hotfix',
      class: 'ignored',
    });
    expect(d.summary).toContain('1 field drifted, written by kubectl-edit');
  });
});
