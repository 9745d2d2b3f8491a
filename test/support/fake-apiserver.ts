// A fake apiserver for the diff engine's unit tests (src/server/diff/*.test.ts and others): discovery, server-side
// dry-run apply (counted), live objects by name. Not a Kubernetes: only what the memo and cache tests need
// (the real apiserver is in test/integration/diff-cache.test.ts).
import type { ClusterConnection, KubeResponse } from '../../src/server/kube/connection.ts';
import type { Obj } from '../../src/server/diff/render.ts';

const ok = (body: unknown): KubeResponse => ({ status: 200, headers: {}, body: JSON.stringify(body) });

export class FakeApiserver {
  readonly live = new Map<string, Obj>();
  // shared by views made with Object.create (withHeaders, a counting view): never an own property of a view
  private readonly counts = { dryRuns: 0 };

  get dryRuns(): number {
    return this.counts.dryRuns;
  }

  /** like ClusterConnection.withHeaders: a view of this connection */
  withHeaders(): FakeApiserver {
    return Object.create(this) as FakeApiserver;
  }

  async request(method: string, path: string, opts: { body?: string } = {}): Promise<KubeResponse> {
    if (method === 'GET' && path === '/api/v1')
      return ok({ resources: [{ name: 'configmaps', kind: 'ConfigMap', namespaced: true }] });
    if (method === 'GET' && path === '/apis/apps/v1')
      return ok({ resources: [{ name: 'deployments', kind: 'Deployment', namespaced: true }] });
    if (method === 'PATCH' && path.includes('dryRun=All')) {
      this.counts.dryRuns++;
      const desired = JSON.parse(opts.body ?? '{}') as Obj;
      const name = String((desired.metadata as Obj).name);
      const cur = this.live.get(name);
      const cmd = (cur?.metadata ?? {}) as Obj;
      // the apply's result: Git's fields over live, live's bookkeeping and status kept
      return ok({
        ...cur,
        ...desired,
        metadata: { ...cmd, ...(desired.metadata as Obj), managedFields: cmd.managedFields },
        ...(cur?.status ? { status: cur.status } : {}),
      });
    }
    return { status: 404, headers: {}, body: '{"kind":"Status","code":404}' };
  }

  async json<T>(method: string, path: string, opts: { body?: string } = {}): Promise<T> {
    const res = await this.request(method, path, opts);
    if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status}`);
    return JSON.parse(res.body) as T;
  }

  httpError(res: KubeResponse, what: string): Error {
    return new Error(`${what}: ${res.status}`);
  }

  asConnection(): ClusterConnection {
    return this as unknown as ClusterConnection; // the subset of ClusterConnection the diff engine calls
  }
}

const mf = (manager: string, operation: string, fieldsV1: Obj, time: string, subresource?: string) => ({
  manager,
  operation,
  apiVersion: 'apps/v1',
  time,
  fieldsType: 'FieldsV1',
  fieldsV1,
  ...(subresource ? { subresource } : {}),
});

/** A live Deployment as the apiserver returns it: Git's spec by kustomize-controller, status by the controller. */
export function liveDeployment(opts: {
  replicas: number;
  ready: number;
  rv: string;
  statusTime?: string;
  scaledBy?: string;
}): Obj {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'web',
      namespace: 'dev',
      uid: 'u-web',
      resourceVersion: opts.rv,
      generation: opts.scaledBy ? 2 : 1,
      labels: { app: 'web' },
      annotations: { 'deployment.kubernetes.io/revision': '1' },
      managedFields: [
        mf(
          'kustomize-controller',
          'Apply',
          { 'f:metadata': { 'f:labels': { 'f:app': {} } }, 'f:spec': { 'f:replicas': {}, 'f:template': {} } },
          '2026-01-01T00:00:00Z',
        ),
        mf(
          'kube-controller-manager',
          'Update',
          // as the real one: the deployment controller's status entry also owns the revision annotation
          {
            'f:metadata': { 'f:annotations': { 'f:deployment.kubernetes.io/revision': {} } },
            'f:status': { 'f:readyReplicas': {}, 'f:replicas': {} },
          },
          opts.statusTime ?? '2026-01-01T00:00:01Z',
          'status',
        ),
        ...(opts.scaledBy
          ? [mf(opts.scaledBy, 'Update', { 'f:spec': { 'f:replicas': {} } }, '2026-01-01T00:05:00Z', 'scale')]
          : []),
      ],
    },
    spec: { replicas: opts.replicas, template: { spec: { containers: [{ name: 'web', image: 'web:1' }] } } },
    status: { replicas: opts.replicas, readyReplicas: opts.ready },
  };
}

export const desiredDeployment = (replicas = 2, annotations?: Record<string, string>): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'dev', labels: { app: 'web' }, ...(annotations ? { annotations } : {}) },
  spec: { replicas, template: { spec: { containers: [{ name: 'web', image: 'web:1' }] } } },
});

export const configMap = (name: string, value: string, rv?: string): Obj => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'dev', ...(rv ? { resourceVersion: rv, uid: `u-${name}` } : {}) },
  data: { value },
});
