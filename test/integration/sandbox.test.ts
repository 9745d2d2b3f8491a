// Issue #2 acceptance: the sandbox is a real control plane with real Flux.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { BIN_DIR, bin, mustState, kubectl, startApiserver, stopApiserver } from '../../sandbox/sandbox.ts';
import {
  getJson,
  kubectlEdit,
  repoHead,
  requestReconcile,
  waitForDeploymentAvailable,
  waitForKustomizationRevision,
} from '../../sandbox/scenario.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { listenersOf } from '../support/listeners.ts';

type Json = Record<string, unknown>;
const managers = (o: Json) =>
  ((o.metadata as Json).managedFields as Array<{ manager: string; operation: string; fieldsV1?: Json }>) ?? [];

describe('sandbox', () => {
  it('brings the dev Kustomization to Ready at the repo HEAD', async () => {
    const head = repoHead();
    expect(head).toMatch(/^[0-9a-f]{40}$/);
    await waitForKustomizationRevision('nonprod', 'digital-human-dev', head);
    const k = getJson('nonprod', ['-n', 'flux-system', 'get', 'kustomization', 'digital-human-dev']);
    expect((k.status as Json).lastAppliedRevision).toBe(`main@sha1:${head}`);
  });

  it('runs the render worker with Running pods on kwok nodes, applied by kustomize-controller', async () => {
    const d = await waitForDeploymentAvailable('nonprod', 'dev', 'render-worker');
    expect((d.spec as Json).replicas).toBe(4);
    expect(managers(d).map((m) => m.manager)).toContain('kustomize-controller');
    const pods = getJson('nonprod', ['-n', 'dev', 'get', 'pods', '-l', 'app.kubernetes.io/name=render-worker'])
      .items as Json[];
    expect(pods.length).toBe(4);
    for (const p of pods) {
      expect((p.status as Json).phase).toBe('Running');
      expect(String((p.spec as Json).nodeName)).toMatch(/^nonprod-node-\d$/);
    }
  });

  it('shows a kubectl-edit change in managedFields, and Flux puts the Git value back', async () => {
    // The object as the patch wrote it: Flux may revert it before a separate GET (that revert is what this test waits for).
    const edited = kubectlEdit('nonprod', 'deployment/render-worker', 'dev', { spec: { replicas: 12 } });
    expect((edited.spec as Json).replicas).toBe(12);
    const editor = managers(edited).find((m) => m.manager === 'kubectl-edit');
    expect(editor?.operation).toBe('Update');
    expect(JSON.stringify(editor?.fieldsV1)).toContain('f:replicas');
    requestReconcile('nonprod', 'kustomization', 'digital-human-dev');
    await waitFor(
      'Flux to restore replicas 4',
      async () => {
        requestReconcile('nonprod', 'kustomization', 'digital-human-dev');
        const d = getJson('nonprod', ['-n', 'dev', 'get', 'deployment', 'render-worker']);
        return (d.spec as Json).replicas === 4;
      },
      { timeoutMs: 90_000, intervalMs: 2000 },
    );
  });

  it('cascades a Deployment delete to its ReplicaSets and Pods', async () => {
    const sel = ['-l', 'app.kubernetes.io/name=session-cache'];
    const rsUids = (getJson('nonprod', ['-n', 'staging', 'get', 'replicasets', ...sel]).items as Json[]).map(
      (r) => (r.metadata as Json).uid,
    );
    const podUids = (getJson('nonprod', ['-n', 'staging', 'get', 'pods', ...sel]).items as Json[]).map(
      (r) => (r.metadata as Json).uid,
    );
    expect(rsUids.length).toBeGreaterThan(0);
    expect(podUids.length).toBeGreaterThan(0);
    kubectl('nonprod', ['-n', 'staging', 'delete', 'deployment', 'session-cache', '--wait=false']);
    await waitFor(
      'garbage collection of ReplicaSets and Pods',
      async () => {
        const rs = (getJson('nonprod', ['-n', 'staging', 'get', 'replicasets', ...sel]).items as Json[]).map(
          (r) => (r.metadata as Json).uid,
        );
        const pods = (getJson('nonprod', ['-n', 'staging', 'get', 'pods', ...sel]).items as Json[]).map(
          (r) => (r.metadata as Json).uid,
        );
        return !rsUids.some((u) => rs.includes(u)) && !podUids.some((u) => pods.includes(u));
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    // Flux recreates it from Git
    requestReconcile('nonprod', 'kustomization', 'digital-human-staging');
    await waitForDeploymentAvailable('nonprod', 'staging', 'session-cache');
  });

  it('fault helper: stopping the apiserver makes calls fail; starting it recovers', async () => {
    await stopApiserver('prod');
    expect(() => kubectl('prod', ['get', 'namespaces', '--request-timeout=3s'])).toThrow(
      /refused|unable to connect|timeout|connection/i,
    );
    await startApiserver('prod');
    expect(kubectl('prod', ['get', 'namespace', 'prod', '-o', 'name']).trim()).toBe('namespace/prod');
  });

  it('binds nothing but 127.0.0.1', () => {
    const st = mustState();
    const pids = [st.git.proc.pid, ...st.clusters.flatMap((c) => c.procs.map((p) => p.pid))];
    const ls = listenersOf(pids);
    expect(ls.length).toBeGreaterThan(10);
    const bad = ls.filter((l) => !l.address.startsWith('127.0.0.1:'));
    expect(bad).toEqual([]);
  });

  it('built real binaries with stamped versions', () => {
    const v = JSON.parse(kubectl('nonprod', ['version', '-o', 'json'])) as {
      serverVersion: { gitVersion: string };
      clientVersion: { gitVersion: string };
    };
    expect(v.serverVersion.gitVersion).toBe('v1.36.3');
    expect(v.clientVersion.gitVersion).toBe('v1.36.3');
    // .sandbox/bin, or the bin/ of a sandbox in GITOPS_SANDBOX_DIR
    expect(bin('kube-apiserver')).toBe(join(BIN_DIR, 'kube-apiserver'));
  });
});
