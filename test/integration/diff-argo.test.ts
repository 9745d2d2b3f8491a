// Issue #5 for Argo CD: a Helm source rendered with `helm template` at the app's revision, the diff as
// argocd-controller, and ignoreDifferences honoured (jqPathExpressions via gojq, managedFieldsManagers).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DiffResponse } from '../../src/api/schemas.ts';
import { kubectl, mustState } from '../../sandbox/sandbox.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { commitAndPush, kubectlEdit, waitForArgoSynced, writeRepoFile } from '../../sandbox/scenario.ts';
import { authedFetch, startTestConsole } from '../support/console.ts';

const APP = 'hello-chart-staging';
let con: Awaited<ReturnType<typeof startTestConsole>>;

beforeAll(async () => {
  commitAndPush('Add hello chart', (w) => {
    writeRepoFile(w, 'argo/hello-chart/Chart.yaml', 'apiVersion: v2\nname: hello\nversion: 0.1.0\n');
    writeRepoFile(w, 'argo/hello-chart/values.yaml', 'replicas: 1\nimage: registry.example.com/hello:1.0\n');
    writeRepoFile(
      w,
      'argo/hello-chart/templates/deployment.yaml',
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  replicas: {{ .Values.replicas }}\n  selector:\n    matchLabels: {app: hello}\n  template:\n    metadata:\n      labels: {app: hello}\n    spec:\n      containers:\n        - name: hello\n          image: {{ .Values.image }}\n',
    );
  });
  const st = mustState();
  kubectl(
    'nonprod',
    ['apply', '-f', '-'],
    `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: ${APP}
  namespace: argocd
  labels: {env: staging}
spec:
  project: default
  source:
    repoURL: ${st.git.url}
    targetRevision: main
    path: argo/hello-chart
    helm:
      releaseName: hello
      parameters:
        - {name: replicas, value: "3"}
  destination: {server: ${st.clusters.find((c) => c.name === 'nonprod')?.apiserver}, namespace: staging}
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
  await waitForArgoSynced('nonprod', APP);
  con = await startTestConsole();
  await waitFor(
    'app listed',
    async () => (await authedFetch(`${con.url}/api/apps/nonprod/argocd/application/${APP}`)).status === 200,
    { timeoutMs: 60_000 },
  );
});

afterAll(async () => {
  await con?.close();
  kubectl('nonprod', ['-n', 'argocd', 'delete', 'application', APP, '--ignore-not-found', '--wait=false']);
  kubectl('nonprod', ['-n', 'staging', 'delete', 'deployment', 'hello', '--ignore-not-found', '--wait=false']);
});

describe('Argo CD Helm app diff', () => {
  it('renders with helm at the synced revision; drift is drift, jq-ignored fields are ignored', async () => {
    kubectlEdit('nonprod', 'deployment/hello', 'staging', {
      spec: {
        replicas: 5,
        template: { spec: { containers: [{ name: 'hello', image: 'registry.example.com/hello:hotfix' }] } },
      },
    });
    const d = (await (
      await authedFetch(`${con.url}/api/apps/nonprod/argocd/application/${APP}/diff`)
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
