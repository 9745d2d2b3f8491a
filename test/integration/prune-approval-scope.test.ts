// Issue #21 items 1 and 2 against the real sandbox apiserver, from outside the console: who may write the
// approvals (deploy/rbac.yaml as shipped lets the console; a user with every ConfigMap right in that namespace,
// and the cluster-admin controllers, may not), the policy's scope (a tenant Kustomization's
// `spec.serviceAccountName`, Argo CD's sync impersonation accounts, the governed marker of a Namespace, a
// governed Namespace's own deletion), and approvals that lapse or are withdrawn. No console runs: the console's
// own functions (src/server/prune/approval-params.ts) are called with its identity where it would act.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kubectlAs } from '../../sandbox/identities.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { kubectl } from '../../sandbox/sandbox.ts';
import { commitAndPushRetrying, getJson, requestReconcile, writeRepoFile } from '../../sandbox/scenario.ts';
import type { ApprovalEntry } from '../../src/domain/prune-approval.ts';
import { EvidenceRecorder } from '../../src/server/evidence/recorder.ts';
import { SqliteEvidenceStore } from '../../src/server/evidence/sqlite-store.ts';
import type { ObjectIndex } from '../../src/server/kube/object-index.ts';
import {
  listApproval,
  readApprovals,
  sweepApprovals,
  syncControllerIdentities,
  unlistApprovals,
  withdrawApprovals,
} from '../../src/server/prune/approval-params.ts';
import { pruneContext } from '../../src/server/prune/context.ts';
import type { PruneServiceDeps, StoredPreview } from '../../src/server/prune/model.ts';
import { consoleConnection } from '../support/kubeconfig.ts';

const CLUSTER = 'nonprod';
const NS = 'dev';
const suffix = Date.now().toString(36);
const DENIED = /needs an approved prune preview in the GitOps console/;
const APPROVALS = ['-n', 'gitops-console-approvals'];
const PARAM = 'configmap/gitops-console-prune-approvals';

const live = (kind: string, name: string, ns = NS): boolean =>
  kubectl(CLUSTER, ['-n', ns, 'get', kind, name, '--ignore-not-found', '-o', 'name']).trim() !== '';
const uidOf = (args: string[]): string => kubectl(CLUSTER, [...args, '-o', 'jsonpath={.metadata.uid}']).trim();
const apply = (o: unknown) =>
  kubectl(CLUSTER, ['apply', '--server-side', '--field-manager=admission-test', '-f', '-'], JSON.stringify(o));
const entry = (kind: string, name: string, namespace: string | undefined, o: Partial<ApprovalEntry> = {}) => ({
  preview: '00000000-0000-4000-8000-00000000a11d',
  snapshot: '0123456789abcdef',
  object: `${CLUSTER}/core/${kind}/${namespace ?? '_'}/${name}`,
  ref: { group: '', version: 'v1', kind, ...(namespace ? { namespace } : {}), name },
  app: 'test',
  observed: null,
  expires: new Date(Date.now() + 600_000).toISOString(),
  at: new Date().toISOString(),
  ...o,
});

const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const f of cleanups.reverse())
    try {
      await f();
    } catch {
      /* best effort: each clean-up is independent */
    }
}, 300_000);

describe('only the console writes the approvals', () => {
  it('deploy/rbac.yaml lets the console; a user with every ConfigMap right there, and the controllers, may not', async () => {
    const conn = consoleConnection(CLUSTER);
    cleanups.push(() => conn.close());
    const can = async (verb: string, group: string, resource: string, extra: Record<string, string> = {}) =>
      (
        await conn.json<{ status?: { allowed?: boolean } }>(
          'POST',
          '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
          {
            body: JSON.stringify({
              apiVersion: 'authorization.k8s.io/v1',
              kind: 'SelfSubjectAccessReview',
              spec: { resourceAttributes: { verb, group, resource, ...extra } },
            }),
            contentType: 'application/json',
          },
        )
      ).status?.allowed === true;
    expect(await can('approve', 'gitops-console.dev', 'prune-approvals')).toBe(true);
    const param = { namespace: 'gitops-console-approvals', name: 'gitops-console-prune-approvals' };
    expect(await can('patch', '', 'configmaps', param)).toBe(true);
    expect(await can('update', '', 'configmaps', param)).toBe(true);
    // the console writes and removes an entry
    const key = `00000000-0000-4000-8000-${suffix.padStart(12, '0')}`;
    await listApproval(conn, key, entry('ConfigMap', 'nothing', NS));
    expect((await readApprovals(conn))?.[key]).toBeDefined();
    await unlistApprovals(conn, [key]);
    expect((await readApprovals(conn))?.[key]).toBeUndefined();

    // a user given every right on ConfigMaps in the approvals' namespace (RBAC cannot say "but not this one")
    const intruder = `approvals-intruder-${suffix}`;
    cleanups.push(() => kubectl(CLUSTER, [...APPROVALS, 'delete', 'role,rolebinding', intruder, '--ignore-not-found']));
    kubectl(CLUSTER, [
      ...[...APPROVALS, 'create', 'role', intruder, '--resource=configmaps'],
      '--verb=get,list,create,update,patch,delete',
    ]);
    kubectl(CLUSTER, [...APPROVALS, 'create', 'rolebinding', intruder, `--role=${intruder}`, `--user=${intruder}`]);
    const patch = ['--type=merge', '-p', JSON.stringify({ data: { [key]: 'approved' } })];
    const guard =
      /may not (update|delete) the prune approvals gitops-console-approvals\/gitops-console-prune-approvals/;
    await waitFor(
      'the intruder role in force',
      async () =>
        kubectl(CLUSTER, ['auth', 'can-i', 'patch', PARAM, ...APPROVALS, `--as=${intruder}`]).trim() === 'yes',
      { timeoutMs: 30_000, intervalMs: 500 },
    ).catch(() => undefined);
    expect(() => kubectl(CLUSTER, [`--as=${intruder}`, ...APPROVALS, 'patch', PARAM, ...patch])).toThrow(guard);
    expect(() => kubectl(CLUSTER, [`--as=${intruder}`, ...APPROVALS, 'delete', PARAM])).toThrow(guard);
    // nor a user without those rights (RBAC), nor the controllers (cluster-admin: the policy refuses them by name)
    expect(() => kubectl(CLUSTER, [`--as=someone-${suffix}`, ...APPROVALS, 'patch', PARAM, ...patch])).toThrow(
      /forbidden/,
    );
    for (const sa of ['kustomize-controller', 'argocd-application-controller'] as const) {
      expect(() => kubectlAs(CLUSTER, sa, [...APPROVALS, 'patch', PARAM, ...patch])).toThrow(guard);
      expect(() => kubectlAs(CLUSTER, sa, [...APPROVALS, 'delete', PARAM])).toThrow(guard);
    }
    expect(() =>
      kubectlAs(CLUSTER, 'kustomize-controller', ['delete', 'namespace', 'gitops-console-approvals']),
    ).toThrow(/may not delete the console's prune approvals/);
    expect((await readApprovals(conn))?.[key]).toBeUndefined();
    // applying the install file again (an admin, an unchanged ConfigMap) is fine
    kubectl(CLUSTER, [...APPROVALS, 'label', '--overwrite', PARAM, `admission-test=${suffix}`]);
    kubectl(CLUSTER, [...APPROVALS, 'label', PARAM, 'admission-test-']);
  });
});

describe('the scope cannot be escaped', () => {
  it('a controller may not remove or change the governed marker; a governed Namespace goes only when approved', async () => {
    const ns = `admission-gov-${suffix}`;
    cleanups.push(() => kubectl(CLUSTER, ['delete', 'namespace', ns, '--ignore-not-found', '--wait=false']));
    const manifest = (labels: Record<string, string>) =>
      JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels } });
    const asFlux = ['apply', '--server-side', '--field-manager=kustomize-controller', '-f', '-'];
    // Flux applies it from Git, governed (adding the marker is allowed)
    kubectlAs(CLUSTER, 'kustomize-controller', asFlux, manifest({ 'gitops-console.dev/governed': 'true' }));
    const marker = /a GitOps controller may not remove or change gitops-console.dev\/governed/;
    // the Git change that drops it, as kustomize-controller applies it (its field, so the apply removes it)
    expect(() => kubectlAs(CLUSTER, 'kustomize-controller', asFlux, manifest({}))).toThrow(marker);
    expect(() =>
      kubectlAs(CLUSTER, 'kustomize-controller', asFlux, manifest({ 'gitops-console.dev/governed': 'false' })),
    ).toThrow(marker);
    expect(() =>
      kubectlAs(CLUSTER, 'argocd-application-controller', ['label', 'namespace', ns, 'gitops-console.dev/governed-']),
    ).toThrow(marker);
    expect(kubectl(CLUSTER, ['get', 'namespace', ns, '-o', 'jsonpath={.metadata.labels}'])).toContain(
      '"gitops-console.dev/governed":"true"',
    );
    // other labels are the controller's to change
    kubectlAs(CLUSTER, 'kustomize-controller', asFlux, manifest({ 'gitops-console.dev/governed': 'true', team: 'a' }));
    // the Namespace itself is governed: its deletion by a controller needs its uid listed
    expect(() => kubectlAs(CLUSTER, 'kustomize-controller', ['delete', 'namespace', ns, '--wait=false'])).toThrow(
      /prune of Namespace\/admission-gov-\w+ needs an approved prune preview/,
    );
    const uid = uidOf(['get', 'namespace', ns]);
    const conn = consoleConnection(CLUSTER);
    try {
      await listApproval(conn, uid, entry('Namespace', ns, undefined));
      kubectlAs(CLUSTER, 'kustomize-controller', ['delete', 'namespace', ns, '--wait=false']);
    } finally {
      await unlistApprovals(conn, [uid]).catch(() => undefined);
      conn.close();
    }
    expect(kubectl(CLUSTER, ['get', 'namespace', ns, '--ignore-not-found', '-o', 'jsonpath={.status.phase}'])).toMatch(
      /^(Terminating)?$/,
    );
  });

  it('a Kustomization with spec.serviceAccountName in a governed namespace cannot prune without approval', async () => {
    const name = `tenant-probe-${suffix}`;
    const dir = `tenant-probe-${suffix}`;
    const sa = `tenant-${suffix}`;
    cleanups.push(
      () => kubectl(CLUSTER, ['-n', NS, 'delete', 'configmap', name, '--ignore-not-found', '--wait=false']),
      () => kubectl(CLUSTER, ['-n', NS, 'delete', 'serviceaccount,rolebinding', sa, '--ignore-not-found']),
      () =>
        commitAndPushRetrying('tenant probe: remove', (w) => rmSync(join(w, dir), { recursive: true, force: true })),
      async () => {
        const conn = consoleConnection(CLUSTER);
        try {
          await syncControllerIdentities(conn);
        } finally {
          conn.close();
        }
      },
      () => kubectl(CLUSTER, ['-n', NS, 'delete', 'kustomization', name, '--ignore-not-found', '--wait=true']),
      // its deletion would garbage-collect its objects as the tenant (denied): stop it pruning first
      () =>
        kubectl(CLUSTER, ['-n', NS, 'patch', 'kustomization', name, '--type=merge', '-p', '{"spec":{"prune":false}}']),
    );
    // the tenant: a ServiceAccount that may edit its own namespace (Flux's multi-tenancy set-up)
    kubectl(CLUSTER, ['-n', NS, 'create', 'serviceaccount', sa]);
    kubectl(CLUSTER, ['-n', NS, 'create', 'rolebinding', sa, '--clusterrole=edit', `--serviceaccount=${NS}:${sa}`]);
    const files = (withConfigMap: boolean) => (w: string) => {
      writeRepoFile(
        w,
        `${dir}/kustomization.yaml`,
        `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:${withConfigMap ? '\n  - configmap.yaml' : ' []'}\n`,
      );
      if (withConfigMap)
        writeRepoFile(
          w,
          `${dir}/configmap.yaml`,
          `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${NS}\ndata:\n  a: "1"\n`,
        );
      else rmSync(join(w, dir, 'configmap.yaml'), { force: true });
    };
    const added = commitAndPushRetrying('tenant probe: add', files(true));
    // a Kustomization may name an account only of a namespace the console covers (policy 8): dev is governed, so
    // the console's sweep lists it
    const first = consoleConnection(CLUSTER);
    try {
      await syncControllerIdentities(first);
    } finally {
      first.close();
    }
    apply({
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name, namespace: NS },
      spec: {
        interval: '10s',
        retryInterval: '5s',
        path: `./${dir}`,
        prune: true,
        serviceAccountName: sa,
        sourceRef: { kind: 'GitRepository', name: 'digital-human', namespace: 'flux-system' },
      },
    });
    // the console lists the tenant's namespace for the policy (governed, and now holding a Flux object)
    const conn = consoleConnection(CLUSTER);
    try {
      await syncControllerIdentities(conn);
      expect((await readApprovals(conn))?.[`ns.${NS}`]).toBeDefined();
    } finally {
      conn.close();
    }
    type Status = {
      lastAppliedRevision?: string;
      lastAttemptedRevision?: string;
      lastHandledReconcileAt?: string;
      conditions?: Array<{ type: string; status: string; message?: string }>;
    };
    const status = () => (getJson(CLUSTER, ['-n', NS, 'get', 'kustomization', name]).status ?? {}) as Status;
    const nudge = (at = new Date().toISOString()) => {
      requestReconcile(CLUSTER, 'gitrepository', 'digital-human');
      kubectl(CLUSTER, [
        '-n',
        NS,
        'annotate',
        '--overwrite',
        `kustomization/${name}`,
        `reconcile.fluxcd.io/requestedAt=${at}`,
      ]);
      return at;
    };
    let nudged = 0;
    const nudging = () => {
      if (Date.now() - nudged > 5000) {
        nudged = Date.now();
        nudge();
      }
    };
    await waitFor(
      `${name} applied ${added.slice(0, 8)}`,
      async () => {
        nudging();
        return String(status().lastAppliedRevision ?? '').endsWith(added) && live('configmap', name);
      },
      { timeoutMs: 180_000, intervalMs: 1000 },
    );
    // applied as the tenant (kustomize-controller impersonates it)
    const removed = commitAndPushRetrying('tenant probe: remove the ConfigMap', files(false));
    const denied = (st: Status) => {
      const ready = st.conditions?.find((c) => c.type === 'Ready');
      return (
        String(st.lastAttemptedRevision ?? '').endsWith(removed) &&
        ready?.status === 'False' &&
        DENIED.test(ready.message ?? '')
      );
    };
    await waitFor(
      `${name} prune denied at ${removed.slice(0, 8)}`,
      async () => {
        nudging();
        return denied(status());
      },
      { timeoutMs: 180_000, intervalMs: 1000 },
    );
    const at = nudge();
    await waitFor(
      `${name} denied again`,
      async () => {
        const st = status();
        return st.lastHandledReconcileAt === at && denied(st);
      },
      { timeoutMs: 120_000, intervalMs: 1000 },
    );
    expect(live('configmap', name)).toBe(true);
  });

  it("Argo CD's sync impersonation accounts: a project may name only accounts of covered namespaces; theirs are controllers", async () => {
    const project = `admission-probe-${suffix}`;
    const home = `argo-tenant-${suffix}`;
    const sa = `argo-deployer-${suffix}`;
    const name = `argo-impersonated-${suffix}`;
    cleanups.push(
      () => kubectl(CLUSTER, ['-n', NS, 'delete', 'configmap', name, '--ignore-not-found']),
      () => kubectl(CLUSTER, ['-n', NS, 'delete', 'rolebinding', sa, '--ignore-not-found']),
      () => kubectl(CLUSTER, ['delete', 'namespace', home, '--ignore-not-found', '--wait=false']),
      () => kubectl(CLUSTER, ['-n', 'argocd', 'delete', 'appproject', project, '--ignore-not-found']),
    );
    // the deployer account lives in a namespace of its own (not governed, no Flux objects): its deletions in dev are
    // not a controller's until a project names it for Argo CD's sync impersonation
    kubectl(CLUSTER, ['create', 'namespace', home]);
    kubectl(CLUSTER, ['-n', home, 'create', 'serviceaccount', sa]);
    kubectl(CLUSTER, ['-n', NS, 'create', 'rolebinding', sa, '--clusterrole=edit', `--serviceaccount=${home}:${sa}`]);
    kubectl(CLUSTER, ['-n', NS, 'create', 'configmap', name, '--from-literal=a=1']);
    const asSa = ['--as', `system:serviceaccount:${home}:${sa}`, '-n', NS, 'delete', 'configmap', name];
    kubectl(CLUSTER, [...asSa, '--dry-run=server']);
    const projectOf = (entries: Array<Record<string, string>>) => ({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'AppProject',
      metadata: { name: project, namespace: 'argocd' },
      spec: { destinations: [{ server: '*', namespace: NS }], destinationServiceAccounts: entries },
    });
    const refused = /AppProject admission-probe-\w+: a sync impersonation account must be namespace:name/;
    // an account of a namespace the console does not cover yet: refused (issue 40: before, it acted unheld until
    // the console's next sweep, and forever while the console was down)
    expect(() => apply(projectOf([{ server: '*', namespace: NS, defaultServiceAccount: `${home}:${sa}` }]))).toThrow(
      refused,
    );
    // a name with a pattern or a negated destination namespace: Argo CD would act as an account of any namespace
    for (const namespace of ['*', '!kube-system', 'web-?'])
      expect(() => apply(projectOf([{ server: '*', namespace, defaultServiceAccount: sa }])), namespace).toThrow(
        refused,
      );
    const conn = consoleConnection(CLUSTER);
    try {
      // a cluster admin onboards the tenant: the label, then the console's sweep lists the namespace
      kubectl(CLUSTER, ['label', 'namespace', home, 'gitops-console.dev/tenant=true']);
      await syncControllerIdentities(conn);
      expect((await readApprovals(conn))?.[`ns.${home}`]).toBe('labelled gitops-console.dev/tenant');
      apply(projectOf([{ server: '*', namespace: NS, defaultServiceAccount: `${home}:${sa}` }]));
      // named by a project for Argo CD's sync impersonation (and its namespace listed): held like a controller
      expect(() => kubectl(CLUSTER, [...asSa, '--dry-run=server'])).toThrow(DENIED);
      kubectl(CLUSTER, ['-n', 'argocd', 'delete', 'appproject', project]);
      kubectl(CLUSTER, ['label', 'namespace', home, 'gitops-console.dev/tenant-']);
      expect((await syncControllerIdentities(conn)).removed).toContain(`ns.${home}`);
      kubectl(CLUSTER, [...asSa, '--dry-run=server']);
    } finally {
      conn.close();
    }
    expect(live('configmap', name)).toBe(true);
  });
});

describe('a lapsed or withdrawn approval denies', () => {
  it('the sweep withdraws a lapsed entry; a voided preview withdraws its own; each then denies', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'approvals-sweep-'));
    const ev = SqliteEvidenceStore.open(dir, 'evidence.sqlite');
    const names = [`lapsed-${suffix}`, `voided-${suffix}`];
    cleanups.push(
      () => rmSync(dir, { recursive: true, force: true }),
      () => kubectl(CLUSTER, ['-n', NS, 'delete', 'configmap', ...names, '--ignore-not-found']),
    );
    const [lapsed = '', voided = ''] = names;
    for (const n of names) kubectl(CLUSTER, ['-n', NS, 'create', 'configmap', n, '--from-literal=a=1']);
    const uid = (n: string) => uidOf(['-n', NS, 'get', 'configmap', n]);
    // the console's prune context, as its own identity; previews as the store holds them (both executed)
    const previews: Record<string, string> = { 'p-lapsed': 'done', 'p-voided': 'done' };
    const store = {
      get: async (id: string) =>
        previews[id] ? { id, status: previews[id], cluster: CLUSTER, env: 'dev' } : undefined,
      journal: async () => [],
      mark: async () => false,
    };
    const conn = consoleConnection(CLUSTER);
    const deps = {
      recorder: new EvidenceRecorder(ev, { warn() {}, error() {} }),
      store,
      index: {} as ObjectIndex,
      app: () => undefined,
      conn: () => conn,
      listed: () => true,
      render: async () => {
        throw new Error('not used');
      },
    } as unknown as PruneServiceDeps;
    const ctx = pruneContext(deps);
    const dryRunDelete = (n: string) =>
      kubectlAs(CLUSTER, 'kustomize-controller', ['-n', NS, 'delete', 'configmap', n, '--dry-run=server']);
    try {
      const lapsesAt = Date.now() + 2000;
      await listApproval(
        conn,
        uid(lapsed),
        entry('ConfigMap', lapsed, NS, { preview: 'p-lapsed', expires: new Date(lapsesAt).toISOString() }),
      );
      await listApproval(conn, uid(voided), entry('ConfigMap', voided, NS, { preview: 'p-voided' }));
      // listed: the controller may (a dry run: nothing is deleted)
      for (const n of names) dryRunDelete(n);
      await waitFor('the lapsed approval past its expiry', async () => Date.now() > lapsesAt + 500, {
        intervalMs: 100,
      });
      const swept = await sweepApprovals(ctx, [CLUSTER]);
      expect(swept[CLUSTER]).toContain(uid(lapsed));
      expect(swept[CLUSTER]).not.toContain(uid(voided));
      expect(() => dryRunDelete(lapsed)).toThrow(DENIED);
      dryRunDelete(voided);
      // the preview is voided (or its prune failed): its approvals go with it
      previews['p-voided'] = 'void';
      expect(await withdrawApprovals(ctx, { id: 'p-voided', cluster: CLUSTER } as StoredPreview, 'voided')).toBe(1);
      expect(() => dryRunDelete(voided)).toThrow(DENIED);
      const records = (await ev.list({ limit: 50 })).filter((e) => e.type === 'prune.stamp' && e.data.withdrawn);
      const reasons = records.map((e) => String(e.data.reason));
      expect(reasons.filter((r) => r.startsWith('the approval lapsed at '))).toHaveLength(1);
      expect(reasons.filter((r) => r === 'voided')).toHaveLength(1);
    } finally {
      await unlistApprovals(conn, names.map(uid)).catch(() => undefined);
      conn.close();
    }
    for (const n of names) expect(live('configmap', n)).toBe(true);
  });
});
