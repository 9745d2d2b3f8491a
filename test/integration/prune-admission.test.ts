// Issues #9 and #21, "enforcement where it cannot be bypassed", against the real sandbox: each GitOps controller runs
// as its own ServiceAccount (sandbox/identities.ts) and the console's ValidatingAdmissionPolicy
// (deploy/prune-admission-policy.yaml) denies their DELETEs in governed namespaces (dev, staging, prod) unless the
// console listed the object's uid in its approvals ConfigMap (a stamp on the object, written by anyone, proves
// nothing; a recreated object has a new uid). On the file's own estate (test/support/own-estate.ts: the seed's dev
// service, Flux `prune: true` like the seed's dev, a governed namespace mapped to dev): after a second person
// approves a preview, the BFF lists the approved objects and kustomize-controller's own prune deletes them;
// everything else it would prune stays. The seed estate is only read; the estate is deleted at the end.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DiffResponse } from '../../src/api/schemas.ts';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { identityKubeconfig, kubectlAs } from '../../sandbox/identities.ts';
import type { ApprovalEntry } from '../../src/domain/prune-approval.ts';
import { listApproval, readApprovals, unlistApprovals } from '../../src/server/prune/approval-params.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { kubectl } from '../../sandbox/sandbox.ts';
import { getJson, requestReconcile, waitForRevisionPrunedByAdmin, writeRepoFile } from '../../sandbox/scenario.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { startTestConsole } from '../support/console.ts';
import { consoleConnection } from '../support/kubeconfig.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../support/own-estate.ts';

const CLUSTER = 'nonprod';
const OVERLAY = 'overlays/dev/kustomization.yaml';
/** the file's own estate (made in the first beforeAll): its governed namespace, its Kustomization, its app id */
let estate: Estate | undefined;
const mustEstate = () => estate as Estate;
let NS = '';
let KS = '';
let APP = '';
const suffix = Date.now().toString(36);
const PROBE = `admission-probe-${suffix}`;
const DENIED = /needs an approved prune preview in the GitOps console/;
const STAMP_KEY = 'gitops-console.dev/prune-approved';

let con: Awaited<ReturnType<typeof startTestConsole>> | undefined;
let developer: Signed;
let reviewer: Signed;

type Preview = {
  id: string;
  status: string;
  statusReason: string | null;
  plan: string;
  reasons: string[];
  snapshotHash: string;
  deletedBy?: string;
  candidates: Array<{ ref: { name: string; kind: string }; deletable: boolean }>;
  journal: Array<{ object: string; state: string; detail: string | null }>;
};

/** A commit pushed to the estate's own repository (only this file pushes there). */
const push = (message: string, edit: (workTree: string) => void): string => mustEstate().push(message, edit);
/** Until the estate's Kustomization applied exactly `sha` and is Ready. */
const applied = (sha: string, timeoutMs = 180_000) => mustEstate().waitApplied(sha, undefined, timeoutMs);

const live = (kind: string, name: string): boolean =>
  kubectl(CLUSTER, ['-n', NS, 'get', kind, name, '--ignore-not-found', '-o', 'name']).trim() !== '';

type Condition = { type: string; status: string; reason?: string; message?: string };
const kustomization = () =>
  getJson(CLUSTER, ['-n', 'flux-system', 'get', 'kustomization', KS]) as {
    status?: { lastAttemptedRevision?: string; conditions?: Condition[] };
  };

/** Waits until kustomize-controller tried `sha` and its prune was denied by the console's admission policy. */
async function pruneDenied(sha: string): Promise<Condition> {
  let ready: Condition | undefined;
  let nudged = 0;
  await waitFor(
    `${KS} prune denied at ${sha.slice(0, 8)}`,
    async () => {
      if (Date.now() - nudged > 5000) {
        nudged = Date.now();
        requestReconcile(CLUSTER, 'gitrepository', mustEstate().source);
        requestReconcile(CLUSTER, 'kustomization', KS);
      }
      const st = kustomization().status;
      ready = st?.conditions?.find((c) => c.type === 'Ready');
      return (
        String(st?.lastAttemptedRevision ?? '').endsWith(sha) &&
        ready?.status === 'False' &&
        DENIED.test(ready.message ?? '')
      );
    },
    { timeoutMs: 180_000, intervalMs: 1000 },
  );
  return ready as Condition;
}

/**
 * After pruneDenied: asks for one more reconcile and waits until kustomize-controller handled it, still at `sha`
 * and still denied (the object survives a second reconcile, not only a slow first one).
 */
async function deniedAgain(sha: string): Promise<void> {
  const at = new Date().toISOString();
  kubectl(CLUSTER, [
    '-n',
    'flux-system',
    'annotate',
    '--overwrite',
    `kustomization/${KS}`,
    `reconcile.fluxcd.io/requestedAt=${at}`,
  ]);
  await waitFor(
    `${KS} denied again at ${sha.slice(0, 8)}`,
    async () => {
      const st = kustomization().status as
        { lastHandledReconcileAt?: string; lastAttemptedRevision?: string; conditions?: Condition[] } | undefined;
      const ready = st?.conditions?.find((c) => c.type === 'Ready');
      return (
        st?.lastHandledReconcileAt === at &&
        String(st.lastAttemptedRevision ?? '').endsWith(sha) &&
        ready?.status === 'False' &&
        DENIED.test(ready.message ?? '')
      );
    },
    { timeoutMs: 120_000, intervalMs: 1000 },
  );
}

/** The Kubernetes events of the Kustomization (kustomize-controller records its failures there too). */
const kustomizationEvents = (): string =>
  kubectl(CLUSTER, [
    '-n',
    'flux-system',
    'get',
    'events',
    '--field-selector',
    `involvedObject.kind=Kustomization,involvedObject.name=${KS}`,
    '-o',
    'jsonpath={range .items[*]}{.reason}: {.message}{"\\n"}{end}',
  ]);

/** Forces the GitRepository to fetch now, and waits until the console sees `sha` as the app's source. */
async function sourceAt(sha: string): Promise<void> {
  const c = mustConsole();
  await waitFor(
    `console source at ${sha.slice(0, 8)}`,
    async () => {
      requestReconcile(CLUSTER, 'gitrepository', mustEstate().source);
      const r = await as(c.admin, c.url, `/api/apps/${APP}`);
      const rev = (r.body as { app?: { source?: { revisionWanted?: string } } }).app?.source?.revisionWanted ?? '';
      return rev.endsWith(sha);
    },
    { timeoutMs: 120_000, intervalMs: 1000 },
  );
}

function mustConsole(): NonNullable<typeof con> {
  if (!con) throw new Error('the console is not started');
  return con;
}

async function requestPreview(): Promise<Preview> {
  const c = mustConsole();
  const r = await as(developer, c.url, `/api/apps/${APP}/prune-previews`, { method: 'POST' });
  expect(r.status, r.text).toBe(200);
  return (r.body as { preview: Preview }).preview;
}

async function settledPreview(id: string): Promise<Preview> {
  const c = mustConsole();
  let p: Preview | undefined;
  await waitFor(
    `prune ${id} finished`,
    async () => {
      p = ((await as(c.admin, c.url, `/api/prune-previews/${id}`)).body as { preview: Preview }).preview;
      return !['approved', 'executing'].includes(p.status);
    },
    { timeoutMs: 60_000, intervalMs: 300 },
  );
  return p as Preview;
}

async function evidence(type: string): Promise<EvidenceEvent[]> {
  const c = mustConsole();
  const r = await as(c.admin, c.url, `/api/evidence?type=${type}&limit=1000`);
  return (r.body as { events: EvidenceEvent[] }).events;
}

/** An approval entry for a ConfigMap of the estate, as the console writes one (a test's own: no preview behind it). */
const probeEntry = (name: string): ApprovalEntry => ({
  preview: '00000000-0000-4000-8000-00000000a11d',
  snapshot: '0123456789abcdef',
  object: `${CLUSTER}/core/ConfigMap/${NS}/${name}`,
  ref: { group: '', version: 'v1', kind: 'ConfigMap', namespace: NS, name },
  app: APP,
  observed: null,
  expires: new Date(Date.now() + 600_000).toISOString(),
  at: new Date().toISOString(),
});

const cm = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  probe: "${suffix}"\n`;

function withoutProbe(w: string): void {
  rmSync(join(w, 'overlays/dev/admission-probe.yaml'), { force: true });
  writeRepoFile(w, OVERLAY, readFileSync(join(w, OVERLAY), 'utf8').replace('  - admission-probe.yaml\n', ''));
}

beforeAll(async () => {
  for (const sa of ['kustomize-controller', 'argocd-application-controller'] as const)
    if (!identityKubeconfig(CLUSTER, sa))
      throw new Error(
        `the sandbox has no ${sa} identity: it is older than sandbox/identities.ts (npm run sandbox -- down, then up)`,
      );
  // the seed's dev service, Flux prune: true, in a governed namespace of the file's own (mapped to dev)
  estate = await ownEstate({ name: 'prune-admission', env: 'dev', files: digitalHumanTemplate('dev'), governed: true });
  NS = estate.namespace;
  KS = estate.kustomization();
  APP = estate.appId();
}, 300_000);

afterAll(async () => {
  try {
    // a failed first test may leave its probe in flux-system (everything else is in the estate's namespace)
    kubectl(CLUSTER, ['-n', 'flux-system', 'delete', 'configmap', `${PROBE}-manual`, '--ignore-not-found']);
    await con?.close();
  } finally {
    await estate?.teardown();
  }
}, 300_000);

describe('the admission policy holds without the console', () => {
  it("a DELETE by a controller identity is denied unless the object's uid is listed by the console; a stamp proves nothing", async () => {
    expect(con).toBeUndefined();
    const name = `${PROBE}-manual`;
    kubectl(CLUSTER, ['-n', NS, 'create', 'configmap', name, '--from-literal=a=1']);
    // the controllers' own tokens, straight to the apiserver
    for (const sa of ['kustomize-controller', 'argocd-application-controller'] as const)
      expect(() => kubectlAs(CLUSTER, sa, ['-n', NS, 'delete', 'configmap', name])).toThrow(
        new RegExp(`prune of ConfigMap/${name} needs an approved prune preview in the GitOps console`),
      );
    // every ServiceAccount of the controllers' namespaces is a controller (source-controller may delete
    // ConfigMaps: Flux's crd-controller role), not only the two the policy used to name
    expect(() => kubectlAs(CLUSTER, 'source-controller', ['-n', NS, 'delete', 'configmap', name])).toThrow(DENIED);
    // a well-formed stamp written by someone other than the console (the sandbox admin, any user who may patch
    // the object) approves nothing: only the console's listing of the uid does
    kubectl(CLUSTER, [
      ...['-n', NS, 'annotate', '--overwrite', 'configmap', name],
      `${STAMP_KEY}=00000000-0000-4000-8000-000000000000/0123456789abcdef`,
    ]);
    expect(() => kubectlAs(CLUSTER, 'kustomize-controller', ['-n', NS, 'delete', 'configmap', name])).toThrow(DENIED);
    expect(live('configmap', name)).toBe(true);
    // the console lists its uid (as its own identity, with deploy/rbac.yaml as shipped): now the controller may
    const uid = kubectl(CLUSTER, ['-n', NS, 'get', 'configmap', name, '-o', 'jsonpath={.metadata.uid}']).trim();
    const conn = consoleConnection(CLUSTER);
    try {
      await listApproval(conn, uid, probeEntry(name));
      // Argo CD's controller too (its Prune=confirm prune goes through the same listing; a dry run here)
      kubectlAs(CLUSTER, 'argocd-application-controller', ['-n', NS, 'delete', 'configmap', name, '--dry-run=server']);
      kubectlAs(CLUSTER, 'kustomize-controller', ['-n', NS, 'delete', 'configmap', name]);
      expect(live('configmap', name)).toBe(false);
      // the same name again, even with the first one's stamp copied (a restore, a copy): a new uid, not approved
      kubectl(CLUSTER, ['-n', NS, 'create', 'configmap', name, '--from-literal=a=2']);
      kubectl(CLUSTER, [
        ...['-n', NS, 'annotate', 'configmap', name],
        `${STAMP_KEY}=00000000-0000-4000-8000-000000000000/0123456789abcdef`,
      ]);
      expect(() => kubectlAs(CLUSTER, 'kustomize-controller', ['-n', NS, 'delete', 'configmap', name])).toThrow(DENIED);
      expect(live('configmap', name)).toBe(true);
    } finally {
      await unlistApprovals(conn, [uid]).catch(() => undefined);
      conn.close();
    }
    // outside governed namespaces the controllers prune as usual
    const ns = kubectl(CLUSTER, ['get', 'namespace', 'flux-system', '-o', 'jsonpath={.metadata.labels}']);
    expect(ns).not.toContain('gitops-console.dev/governed');
    kubectl(CLUSTER, ['-n', 'flux-system', 'create', 'configmap', name, '--from-literal=a=1']);
    kubectlAs(CLUSTER, 'kustomize-controller', ['-n', 'flux-system', 'delete', 'configmap', name]);
    // cluster-scoped objects are theirs to create and change (the policies must not match such a request without
    // a namespace: with failurePolicy Fail and a per-request parameter that would deny every one of them); their
    // deletion of a ClusterRole is a prune, held (issue 40: test/integration/no-way-around.test.ts)
    const role = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: `${name}-role`, annotations: { note: 'admission test' } },
      rules: [],
    };
    kubectlAs(
      CLUSTER,
      'kustomize-controller',
      ['apply', '--server-side', '--field-manager=kustomize-controller', '-f', '-'],
      JSON.stringify(role),
    );
    expect(() => kubectlAs(CLUSTER, 'kustomize-controller', ['delete', 'clusterrole', `${name}-role`])).toThrow(DENIED);
    kubectl(CLUSTER, ['delete', 'clusterrole', `${name}-role`]);
  });
});

describe('prune approval enforced by the apiserver (dev: Flux prune: true, the controller deletes)', () => {
  beforeAll(async () => {
    con = await startTestConsole(
      {},
      {
        accounts: {
          users: {
            'dev-developer': ['developer@nonprod/dev'],
            'dev-reviewer': ['reviewer@nonprod/dev'],
          },
        },
      },
    );
    developer = await signIn(con.url, 'dev-developer');
    reviewer = await signIn(con.url, 'dev-reviewer');
  }, 120_000);

  it('a sync hook’s life cycle is not a prune: a Job or Pod annotated as a hook live, written by its runner only, may be deleted by a controller; a ConfigMap annotated as one, or a Job that is not one, may not', () => {
    const t = Date.now().toString(36);
    const hookJob = `hook-probe-${t}`;
    const plainJob = `job-probe-${t}`;
    const cm = `hook-cm-probe-${t}`;
    const job = (name: string, annotations: Record<string, string> = {}) =>
      JSON.stringify({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name, namespace: NS, annotations },
        spec: {
          backoffLimit: 0,
          template: {
            spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'registry.example.com/x:1' }] },
          },
        },
      });
    // as Argo CD writes its objects (its field manager): a hook is a hook only as its runner wrote it (issue 40)
    const asArgo = ['apply', '--server-side', '--field-manager=argocd-controller', '-f', '-'];
    try {
      kubectl(CLUSTER, asArgo, job(hookJob, { 'argocd.argoproj.io/hook': 'PreSync' }));
      kubectl(CLUSTER, asArgo, job(plainJob));
      kubectl(CLUSTER, ['-n', NS, 'create', 'configmap', cm, '--from-literal=a=1']);
      kubectl(CLUSTER, ['-n', NS, 'annotate', 'configmap', cm, 'argocd.argoproj.io/hook=PreSync']);
      // Argo CD deleting its hook before creating it again (BeforeHookCreation): let through
      kubectlAs(CLUSTER, 'argocd-application-controller', ['-n', NS, 'delete', 'job', hookJob, '--dry-run=server']);
      // a Helm hook in an Argo CD Helm app: Argo CD runs it (helm-controller's own: no-way-around.test.ts)
      kubectl(CLUSTER, asArgo, job(plainJob, { 'helm.sh/hook': 'pre-upgrade' }));
      kubectlAs(CLUSTER, 'argocd-application-controller', ['-n', NS, 'delete', 'job', plainJob, '--dry-run=server']);
      // kustomize-controller has no hooks: its deletion of the same Job is a prune
      expect(() =>
        kubectlAs(CLUSTER, 'kustomize-controller', ['-n', NS, 'delete', 'job', plainJob, '--dry-run=server']),
      ).toThrow(DENIED);
      kubectl(CLUSTER, asArgo, job(plainJob));
      // the same Job without the annotation: a prune, held
      expect(() =>
        kubectlAs(CLUSTER, 'argocd-application-controller', ['-n', NS, 'delete', 'job', plainJob, '--dry-run=server']),
      ).toThrow(DENIED);
      // anyone who may annotate cannot turn a ConfigMap into a "hook" to get it pruned without approval
      expect(() =>
        kubectlAs(CLUSTER, 'argocd-application-controller', ['-n', NS, 'delete', 'configmap', cm, '--dry-run=server']),
      ).toThrow(DENIED);
      expect(live('configmap', cm)).toBe(true);
    } finally {
      kubectl(CLUSTER, ['-n', NS, 'delete', 'job', hookJob, plainJob, '--ignore-not-found', '--wait=false']);
      kubectl(CLUSTER, ['-n', NS, 'delete', 'configmap', cm, '--ignore-not-found', '--wait=false']);
    }
  });

  it("an empty render: kustomize-controller's prune is denied, the objects stay, the preview needs an override", async () => {
    // the estate's dev overlay renders to zero objects (the dangerous-prune scenario); its text before, to restore
    let before = '';
    const empty = push('admission test: empty the dev render', (w) => {
      before = readFileSync(join(w, OVERLAY), 'utf8');
      writeRepoFile(w, OVERLAY, 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n');
    });
    try {
      const ready = await pruneDenied(empty);
      expect(ready.reason).toBe('PruneFailed');
      expect(ready.message).toMatch(/prune of \w+\/[\w-]+ needs an approved prune preview/);
      expect(kustomizationEvents()).toMatch(DENIED);
      // nothing was deleted
      for (const [kind, name] of [
        ['deployment', 'render-worker'],
        ['service', 'tts-gateway'],
        ['configmap', 'render-worker-config'],
      ] as const)
        expect(live(kind, name), `${kind}/${name}`).toBe(true);

      await sourceAt(empty);
      // the diff says the render is empty, and what a preview would need (the diff and the plan agree)
      const c = mustConsole();
      const diff = (await as(c.admin, c.url, `/api/apps/${APP}/diff`)).body as DiffResponse;
      expect(diff.state).toBe('ok');
      expect(diff.emptyRender).toBe(true);
      expect(diff.summary).toMatch(/^the render is empty: the controller would delete \d+ objects/);
      expect(diff.prune?.state).toBe('needs-override');

      const preview = await requestPreview();
      expect(preview.plan).toBe('needs-override');
      expect(preview.reasons.join(' ')).toMatch(/the render is empty/);
      expect(preview.deletedBy).toBe('controller');
      expect(preview.status).toBe('pending');
      expect(preview.candidates.length).toBe(diff.counts.extraneous);
      // still nothing deleted: the denial holds while the preview waits
      requestReconcile(CLUSTER, 'kustomization', KS);
      await pruneDenied(empty);
      expect(live('deployment', 'render-worker')).toBe(true);
      // the preview is left pending; restoring Git makes its snapshot void
    } finally {
      const restore = push('admission test: restore the dev overlay', (w) => writeRepoFile(w, OVERLAY, before));
      await applied(restore);
    }
  });

  it('a ConfigMap removed from Git (an admin-written stamp on it): denied until a reviewer approves; the console lists its uid; the controller deletes it; the same name recreated is denied again', async () => {
    const added = push('admission probe: add', (w) => {
      writeRepoFile(w, 'overlays/dev/admission-probe.yaml', cm(PROBE));
      const text = readFileSync(join(w, OVERLAY), 'utf8');
      writeRepoFile(w, OVERLAY, text.replace('  - ../../base\n', '  - ../../base\n  - admission-probe.yaml\n'));
    });
    await applied(added);
    expect(live('configmap', PROBE)).toBe(true);
    // a well-formed stamp written with the admin kubeconfig (issue #21: it used to be the approval)
    kubectl(CLUSTER, [
      ...['-n', NS, 'annotate', '--overwrite', 'configmap', PROBE],
      `${STAMP_KEY}=00000000-0000-4000-8000-000000000000/0123456789abcdef`,
    ]);

    const removed = push('admission probe: remove from Git', withoutProbe);
    const ready = await pruneDenied(removed);
    expect(ready.message).toContain(`prune of ConfigMap/${PROBE} needs an approved prune preview`);
    await deniedAgain(removed);
    expect(live('configmap', PROBE)).toBe(true);
    const uid = kubectl(CLUSTER, ['-n', NS, 'get', 'configmap', PROBE, '-o', 'jsonpath={.metadata.uid}']).trim();

    await sourceAt(removed);
    const preview = await requestPreview();
    expect(preview.plan).toBe('ready');
    expect(preview.deletedBy).toBe('controller');
    expect(preview.candidates.map((x) => x.ref.name)).toEqual([PROBE]);

    const c = mustConsole();
    const r = await as(reviewer, c.url, `/api/prune-previews/${preview.id}/approve`, {
      method: 'POST',
      body: { comment: 'removed from Git on purpose' },
    });
    expect(r.status, r.text).toBe(200);
    const done = await settledPreview(preview.id);
    expect(done.status, JSON.stringify({ reason: done.statusReason, journal: done.journal })).toBe('done');
    expect(done.statusReason).toMatch(
      /1 object stamped with the approval: kustomize-controller's next prune deletes it/,
    );
    const stamp = `${preview.id}/${preview.snapshotHash.slice(0, 16)}`;
    expect(done.journal).toEqual([expect.objectContaining({ state: 'stamped', detail: stamp })]);
    // what the policy reads: the object's uid, listed by the console with this preview and its snapshot
    const conn = consoleConnection(CLUSTER);
    try {
      const listed = JSON.parse((await readApprovals(conn))?.[uid] ?? '{}') as Partial<ApprovalEntry>;
      expect(listed).toMatchObject({ preview: preview.id, snapshot: preview.snapshotHash.slice(0, 16) });
    } finally {
      conn.close();
    }

    // the BFF stamped, it did not delete; the controller's next reconcile deletes it (the policy lets it now)
    // (it may already have: its retry interval is 5 s)
    const stamped = kubectl(CLUSTER, [
      ...['-n', NS, 'get', 'configmap', PROBE, '--ignore-not-found'],
      ...['-o', `jsonpath={.metadata.annotations.gitops-console\\.dev/prune-approved}`],
    ]).trim();
    expect(['', stamp]).toContain(stamped);
    // Ready at that revision (what applied() waits for), its prune done
    await applied(removed, 120_000);
    expect(live('configmap', PROBE)).toBe(false);
    // and not failed since: the wait asks for a reconcile every 5 s, so one may be in progress now (Unknown), which
    // once failed this line when it expected True (fresh clone of b6027ba)
    const k = kustomization().status?.conditions?.find((x) => x.type === 'Ready');
    expect(k?.status, JSON.stringify(k)).not.toBe('False');

    // evidence: the stamp's intent (before the patch) and its outcome (after), chained to the approval
    const stamps = (await evidence('prune.stamp')).filter((e) => e.data.previewId === preview.id && !e.data.withdrawn);
    expect(stamps).toHaveLength(1);
    expect(stamps[0]?.data).toMatchObject({
      object: expect.stringContaining(PROBE),
      uid,
      approval: { configMap: 'gitops-console-approvals/gitops-console-prune-approvals', key: uid },
      annotation: { [STAMP_KEY]: stamp },
    });
    const outcomes = (await evidence('action.completed')).filter(
      (e) => e.data.action === 'prune.stamp' && e.data.intentSeq === stamps[0]?.seq,
    );
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]?.seq).toBeGreaterThan(stamps[0]?.seq ?? Infinity);
    const approved = (await evidence('prune.approved')).find((e) => e.data.previewId === preview.id);
    expect(approved?.seq).toBeLessThan(stamps[0]?.seq ?? 0);
    // the console deleted nothing itself
    expect((await evidence('prune.delete')).filter((e) => e.data.previewId === preview.id)).toHaveLength(0);

    // the same ConfigMap again in Git (a new object, a new uid), with the executed preview's stamp copied onto it
    // (a restore, a copy): removed from Git again, its prune is denied; that approval was spent
    const again = push('admission probe: add again', (w) => {
      writeRepoFile(w, 'overlays/dev/admission-probe.yaml', cm(PROBE));
      const text = readFileSync(join(w, OVERLAY), 'utf8');
      writeRepoFile(w, OVERLAY, text.replace('  - ../../base\n', '  - ../../base\n  - admission-probe.yaml\n'));
    });
    await applied(again);
    const uid2 = kubectl(CLUSTER, ['-n', NS, 'get', 'configmap', PROBE, '-o', 'jsonpath={.metadata.uid}']).trim();
    expect(uid2).not.toBe(uid);
    kubectl(CLUSTER, ['-n', NS, 'annotate', '--overwrite', 'configmap', PROBE, `${STAMP_KEY}=${stamp}`]);
    const removedAgain = push('admission probe: remove from Git again', withoutProbe);
    try {
      await pruneDenied(removedAgain);
      await deniedAgain(removedAgain);
      expect(live('configmap', PROBE)).toBe(true);
    } finally {
      await waitForRevisionPrunedByAdmin(CLUSTER, KS, removedAgain, NS, [`configmap/${PROBE}`]);
    }
  });
});
