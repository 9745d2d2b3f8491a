// Prune previews against the real sandbox. The prod Flux Kustomization has `prune: false`: objects removed
// from Git leave its inventory and stay live, so the console is the one that deletes them (after a second
// person approved). Probe ConfigMaps are added to the prod overlay and removed again; every Git and cluster
// change is undone at the end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { kubectl } from '../../sandbox/sandbox.ts';
import {
  commitAndPushRetrying,
  requestReconcile,
  waitForKustomizationRevision,
  writeRepoFile,
} from '../../sandbox/scenario.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { startTestConsole } from '../support/console.ts';

const CLUSTER = 'prod';
const KS = 'digital-human-prod';
const APP = `${CLUSTER}/flux-system/kustomization/${KS}`;
const OVERLAY = 'overlays/prod/kustomization.yaml';
const suffix = Date.now().toString(36);
const PLAIN = `prune-probe-a-${suffix}`;
const PROTECTED = `prune-probe-b-${suffix}`;
const STALE = `prune-probe-c-${suffix}`;

let con: Awaited<ReturnType<typeof startTestConsole>>;
let developer: Signed;
let reviewer: Signed;
let reviewer2: Signed;
let reviewer3: Signed;
let originalOverlay = '';

const cm = (name: string, annotations: Record<string, string> = {}) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${
    Object.keys(annotations).length
      ? `  annotations:\n${Object.entries(annotations)
          .map(([k, v]) => `    ${k}: ${JSON.stringify(v)}`)
          .join('\n')}\n`
      : ''
  }data:\n  probe: "${suffix}"\n`;

/** commitAndPush, again on a fresh clone when another test pushed meanwhile (the sandbox is shared). */
const push = commitAndPushRetrying;

/** Removes the probes from a work tree (the overlay line and the file), leaving everything else as it is. */
function withoutProbes(w: string): void {
  rmSync(join(w, 'overlays/prod/prune-probe.yaml'), { force: true });
  writeRepoFile(w, OVERLAY, readFileSync(join(w, OVERLAY), 'utf8').replace('  - prune-probe.yaml\n', ''));
}

/** Commits a change of the prod overlay and waits until Flux applied it. */
async function commitProd(message: string, edit: (work: string) => void): Promise<string> {
  const sha = push(message, edit);
  await waitForKustomizationRevision(CLUSTER, KS, sha, 180_000);
  return sha;
}

const live = (name: string): boolean =>
  kubectl(CLUSTER, ['-n', 'prod', 'get', 'configmap', name, '--ignore-not-found', '-o', 'name']).trim() !== '';

const previewsPath = `/api/apps/${APP}/prune-previews`;

type Preview = {
  id: string;
  status: string;
  plan: string;
  reasons: string[];
  statusReason: string | null;
  candidates: Array<{ ref: { name: string }; protectedBy: string | null; deletable: boolean }>;
  summary: { deletions: number; protected: number };
  journal: Array<{ object: string; state: string }>;
  confirmation: string | null;
  requiredApprovals: number;
};

async function request(who: Signed): Promise<{ preview: Preview; viewer: { canApprove: boolean; reason: string } }> {
  const r = await as(who, con.url, previewsPath, { method: 'POST' });
  expect(r.status, r.text).toBe(200);
  return r.body as unknown as { preview: Preview; viewer: { canApprove: boolean; reason: string } };
}

async function settledPreview(id: string): Promise<Preview> {
  let p: Preview | undefined;
  await waitFor(
    `prune ${id} finished`,
    async () => {
      p = ((await as(con.admin, con.url, `/api/prune-previews/${id}`)).body as { preview: Preview }).preview;
      return !['approved', 'executing'].includes(p.status);
    },
    { timeoutMs: 60_000, intervalMs: 300 },
  );
  return p as Preview;
}

async function evidence(type: string): Promise<EvidenceEvent[]> {
  const r = await as(con.admin, con.url, `/api/evidence?type=${type}&limit=1000`);
  return (r.body as { events: EvidenceEvent[] }).events;
}

/** Forces the GitRepository to fetch now, and waits until the console's render sees `sha`. */
async function sourceAt(sha: string): Promise<void> {
  requestReconcile(CLUSTER, 'gitrepository', 'digital-human');
  await waitFor(
    `source at ${sha.slice(0, 8)}`,
    async () => {
      requestReconcile(CLUSTER, 'gitrepository', 'digital-human');
      const r = await as(con.admin, con.url, `/api/apps/${APP}`);
      const rev = (r.body as { app?: { source?: { revisionWanted?: string } } }).app?.source?.revisionWanted ?? '';
      return rev.endsWith(sha);
    },
    { timeoutMs: 120_000, intervalMs: 1000 },
  );
}

beforeAll(async () => {
  con = await startTestConsole(
    {},
    {
      accounts: {
        users: {
          'prod-developer': ['developer@prod/prod'],
          'prod-reviewer': ['reviewer@prod/prod'],
          'prod-reviewer-2': ['reviewer@prod/prod'],
          'prod-reviewer-3': ['reviewer@prod/prod'],
        },
      },
    },
  );
  developer = await signIn(con.url, 'prod-developer');
  reviewer = await signIn(con.url, 'prod-reviewer');
  reviewer2 = await signIn(con.url, 'prod-reviewer-2');
  reviewer3 = await signIn(con.url, 'prod-reviewer-3');
  // three probes in Git, applied by Flux; then removed from Git (prune: false keeps them live)
  await commitProd('prune probes: add', (w) => {
    originalOverlay = readFileSync(join(w, OVERLAY), 'utf8');
    writeRepoFile(
      w,
      'overlays/prod/prune-probe.yaml',
      [cm(PLAIN), cm(PROTECTED, { 'kustomize.toolkit.fluxcd.io/prune': 'disabled' }), cm(STALE)].join('---\n'),
    );
    writeRepoFile(w, OVERLAY, originalOverlay.replace('  - ../../base\n', '  - ../../base\n  - prune-probe.yaml\n'));
  });
  await waitFor('probes live', async () => live(PLAIN) && live(PROTECTED) && live(STALE), { timeoutMs: 60_000 });
  const sha = await commitProd('prune probes: remove from Git', withoutProbes);
  await sourceAt(sha);
}, 600_000);

afterAll(async () => {
  try {
    for (const n of [PLAIN, PROTECTED, STALE])
      kubectl(CLUSTER, ['-n', 'prod', 'delete', 'configmap', n, '--ignore-not-found', '--wait=false']);
    if (originalOverlay) push('prune probes: make sure they are gone from Git', withoutProbes);
  } finally {
    await con?.close();
  }
}, 300_000);

describe('prune previews (prod: Flux prune: false, the console deletes)', () => {
  let first: Preview;

  it('a preview lists the objects removed from Git, protected ones marked, nothing deleted yet', async () => {
    const { preview, viewer } = await request(developer);
    first = preview;
    expect(preview.status).toBe('pending');
    expect(preview.plan).toBe('ready');
    // exactly our probes (anything else stale in prod would be someone else's: stop before approving it)
    expect(preview.candidates.map((c) => c.ref.name).sort()).toEqual([PLAIN, PROTECTED, STALE].sort());
    const byName = new Map(preview.candidates.map((c) => [c.ref.name, c]));
    expect(byName.get(PLAIN)).toMatchObject({ deletable: true, protectedBy: null });
    expect(byName.get(STALE)).toMatchObject({ deletable: true });
    expect(byName.get(PROTECTED)).toMatchObject({
      deletable: false,
      protectedBy: 'kustomize.toolkit.fluxcd.io/prune: disabled',
    });
    expect(preview.summary).toMatchObject({ deletions: 2, protected: 1 });
    // a developer may request, not approve
    expect(viewer.canApprove).toBe(false);
    expect(live(PLAIN)).toBe(true);
  });

  it('the requester cannot approve: 403 and an access.denied record', async () => {
    const r = await as(developer, con.url, `/api/prune-previews/${first.id}/approve`, {
      method: 'POST',
      body: { comment: 'mine' },
    });
    expect(r.status).toBe(403);
    // a reviewer who requested cannot approve their own preview either
    const own = (await request(reviewer)).preview;
    const view = (await as(reviewer, con.url, `/api/prune-previews/${own.id}`)).body as {
      viewer: { canApprove: boolean; reason: string };
    };
    expect(view.viewer).toMatchObject({ canApprove: false, reason: expect.stringMatching(/requested this prune/) });
    const self = await as(reviewer, con.url, `/api/prune-previews/${own.id}/approve`, {
      method: 'POST',
      body: { comment: 'my own' },
    });
    expect(self.status).toBe(403);
    await waitFor(
      'denial recorded',
      async () =>
        (await evidence('access.denied')).some(
          (e) => e.actor === 'prod-reviewer' && String(e.data.reason).includes('requester'),
        ),
      { timeoutMs: 10_000 },
    );
    // the reviewer queue lists both, with requester and risk, never the candidates themselves
    const queue = (await as(reviewer2, con.url, '/api/prune-previews?state=pending')).body as {
      previews: Array<{ id: string; requestedBy: { name: string }; summary: { deletions: number } }>;
    };
    expect(queue.previews.find((p) => p.id === own.id)).toMatchObject({
      requestedBy: { name: 'prod-reviewer' },
      summary: { deletions: 2 },
    });
    expect((await as(con.admin, con.url, `/api/prune-previews/${own.id}`)).body).toMatchObject({
      preview: { status: 'pending', decisions: [] },
    });
  });

  it('a stale snapshot voids the approval: nothing is deleted', async () => {
    kubectl(CLUSTER, ['-n', 'prod', 'annotate', '--overwrite', 'configmap', STALE, `probe/touched=${Date.now()}`]);
    const r = await as(reviewer, con.url, `/api/prune-previews/${first.id}/approve`, {
      method: 'POST',
      body: { comment: 'looks right' },
    });
    expect(r.status, r.text).toBe(409);
    const p = ((await as(con.admin, con.url, `/api/prune-previews/${first.id}`)).body as { preview: Preview }).preview;
    expect(p.status).toBe('void');
    expect(p.statusReason).toMatch(/no longer matches/);
    expect(live(PLAIN) && live(STALE)).toBe(true);
    expect((await evidence('prune.voided')).some((e) => e.data.previewId === first.id)).toBe(true);
    // the refused approval is no approval: no prune.approved, one action.refused naming why
    expect((await evidence('prune.approved')).some((e) => e.data.previewId === first.id)).toBe(false);
    expect(
      (await evidence('action.refused')).filter((e) => e.data.previewId === first.id).map((e) => e.data.reason),
    ).toEqual([expect.stringMatching(/^approval void: .*changed since the preview/)]);
  });

  it('concurrent approvals by two reviewers: one execution; deleted with preconditions; evidence chain', async () => {
    const { preview } = await request(developer);
    const pending = (await request(developer)).preview; // voided later: the snapshot changes under it
    const answers = await Promise.all(
      [reviewer, reviewer2].map((who) =>
        as(who, con.url, `/api/prune-previews/${preview.id}/approve`, { method: 'POST', body: { comment: 'ok' } }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    // the loser was refused before any intent: one prune.approved, and one action.refused saying why
    const mine = (es: EvidenceEvent[]) => es.filter((e) => e.data.previewId === preview.id);
    expect(mine(await evidence('prune.approved'))).toHaveLength(1);
    expect(mine(await evidence('action.refused'))).toEqual([
      expect.objectContaining({
        data: expect.objectContaining({ action: 'prune.approved', reason: expect.any(String) }),
      }),
    ]);
    const done = await settledPreview(preview.id);
    expect(done.status, JSON.stringify({ reason: done.statusReason, journal: done.journal })).toBe('done');
    expect(done.journal.map((j) => j.state)).toEqual(['deleted', 'deleted']);
    await waitFor('probes deleted', async () => !live(PLAIN) && !live(STALE), { timeoutMs: 30_000 });
    expect(live(PROTECTED)).toBe(true);
    // one execution: one delete intent per object
    const deletes = (await evidence('prune.delete')).filter((e) => e.data.previewId === preview.id);
    expect(deletes).toHaveLength(2);
    const chain = (
      (await as(con.admin, con.url, `/api/evidence?app=${encodeURIComponent(APP)}&limit=500`)).body as {
        events: EvidenceEvent[];
      }
    ).events.filter((e) => e.data.previewId === preview.id);
    const types = new Set(chain.map((e) => e.type));
    for (const t of ['prune.requested', 'prune.approved', 'prune.batch', 'prune.delete', 'prune.executed'])
      expect(types.has(t as EvidenceEvent['type']), t).toBe(true);
    // the other pending preview's snapshot is gone: approving it is void
    const late = await as(reviewer3, con.url, `/api/prune-previews/${pending.id}/approve`, {
      method: 'POST',
      body: { comment: 'late' },
    });
    expect(late.status).toBe(409);
  });

  it('only protected candidates left: "nothing will be deleted"', async () => {
    const { preview } = await request(developer);
    expect(preview.plan).toBe('nothing');
    expect(preview.status).toBe('void');
    expect(preview.statusReason).toBe('nothing will be deleted');
    expect(preview.candidates.map((c) => c.ref.name)).toContain(PROTECTED);
  });

  it('an empty render needs an override; a failed render is unknown; nothing is deleted', async () => {
    let before = '';
    const empty = push('prune test: empty prod render', (w) => {
      before = readFileSync(join(w, OVERLAY), 'utf8');
      writeRepoFile(w, OVERLAY, 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n');
    });
    try {
      await sourceAt(empty);
      const { preview } = await request(developer);
      expect(preview.plan).toBe('needs-override');
      expect(preview.reasons.join(' ')).toMatch(/render is empty/);
      expect(preview.requiredApprovals).toBe(2);
      expect(preview.confirmation).toMatch(/^delete \d+ objects of digital-human-prod$/);
      // an approval without the typed confirmation is refused
      const r = await as(reviewer, con.url, `/api/prune-previews/${preview.id}/approve`, {
        method: 'POST',
        body: { comment: 'sure' },
      });
      expect(r.status).toBe(400);
      const broken = push('prune test: broken prod render', (w) =>
        writeRepoFile(w, OVERLAY, before.replace('  - ../../base\n', '  - ../../base\n  - missing.yaml\n')),
      );
      await sourceAt(broken);
      const unknown = (await request(developer)).preview;
      expect(unknown.plan).toBe('unknown');
      expect(unknown.candidates).toEqual([]);
      expect(unknown.status).toBe('void');
    } finally {
      const sha = push('prune test: restore the prod overlay', (w) => writeRepoFile(w, OVERLAY, before));
      await waitForKustomizationRevision(CLUSTER, KS, sha, 180_000);
    }
    expect(kubectl(CLUSTER, ['-n', 'prod', 'get', 'deployment', 'render-worker', '-o', 'name']).trim()).toBe(
      'deployment.apps/render-worker',
    );
  });
});

// Issue #21 item 6, "cascades governed": what a deletion takes with it is judged like the candidate itself. A
// Flux Kustomization of its own in prod (`prune: false`), applied once, then suspended and pointed at smaller
// directories: its inventory keeps what left the render, so those are candidates. The console runs as its
// shipped least-privilege identity; where it may not list, the plan says unknown. The operator's extra grants
// the test adds (a Role in one namespace, a ClusterRole for one CRD) are removed at the end, with everything else.
describe('cascades governed: a protected Pod child blocks, a Namespace is listed live, a CRD counts its resources', () => {
  const KS2 = `cascade-probe-${suffix}`;
  const APP2 = `${CLUSTER}/flux-system/kustomization/${KS2}`;
  const DIR = `cascade-probe-${suffix}`;
  // a Namespace in Git; a ConfigMap, a Secret, a RoleBinding and a custom resource made in it by someone else
  const NS_A = `cprobe-a-${suffix}`;
  // not in Git: where the Deployment (its Pods protected) and the ConfigMaps live
  const NS_B = `cprobe-b-${suffix}`;
  const GROUP = `c${suffix}.probe.gitops-console.dev`;
  const CRD = `widgets.${GROUP}`;
  const GRANT = `cascade-probe-${suffix}`;
  const PROTECTED_BY = 'kustomize.toolkit.fluxcd.io/prune: disabled';

  type CRef = { kind: string; name: string; namespace?: string };
  type Candidate = {
    ref: CRef;
    deletable: boolean;
    blockedBy?: string | null;
    cascadesUnknown?: string | null;
    cascades: CRef[];
  };
  type CascadePreview = { plan: string; reasons: string[]; candidates: Candidate[] };

  const files = {
    ns: `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${NS_A}\n`,
    crd: `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${CRD}
spec:
  group: ${GROUP}
  scope: Namespaced
  names: { plural: widgets, singular: widget, kind: Widget, listKind: WidgetList }
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true }
`,
    deploy: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: guarded
  namespace: ${NS_B}
spec:
  replicas: 1
  selector: { matchLabels: { app: guarded } }
  template:
    metadata:
      labels: { app: guarded }
      annotations: { ${PROTECTED_BY.replace(': ', ': "')}" }
    spec:
      containers: [{ name: main, image: registry.example.com/digital-human/session-cache:7.2 }]
`,
    plain: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n  namespace: ${NS_B}\ndata: { a: "1" }\n`,
    keep: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keep\n  namespace: ${NS_B}\ndata: { a: "1" }\n`,
  };
  // before: everything; mid: the CRD and `keep` (the Namespace, the Deployment and `plain` are candidates);
  // after: `keep` only (the CRD is a candidate too)
  const dirs: Record<string, Array<keyof typeof files>> = {
    before: ['ns', 'crd', 'deploy', 'plain', 'keep'],
    mid: ['crd', 'keep'],
    after: ['keep'],
  };
  const apply = (yaml: string) => kubectl(CLUSTER, ['apply', '-f', '-'], yaml);
  const setPath = (dir: string) =>
    kubectl(CLUSTER, [
      ...['-n', 'flux-system', 'patch', 'kustomization', KS2, '--type', 'merge'],
      ...['-p', JSON.stringify({ spec: { suspend: true, path: `./${DIR}/${dir}` } })],
    ]);
  const key = (r: CRef) => `${r.kind}/${r.namespace ? `${r.namespace}/` : ''}${r.name}`;

  /** A preview of the probe app once the console plans it with `want` as the candidates (it follows the path). */
  async function cascadePreview(want: string[], unknownRead = false): Promise<CascadePreview> {
    let p: CascadePreview | undefined;
    await waitFor(
      `a preview of ${KS2} with ${want.join(', ')}`,
      async () => {
        const r = await as(con.admin, con.url, `/api/apps/${APP2}/prune-previews`, { method: 'POST' });
        if (r.status !== 200) return false;
        p = (r.body as unknown as { preview: CascadePreview }).preview;
        if (unknownRead) return p.plan === 'unknown' && !p.candidates.length;
        return JSON.stringify(p.candidates.map((c) => key(c.ref)).sort()) === JSON.stringify(want);
      },
      { timeoutMs: 90_000, intervalMs: 2000 },
    );
    return p as CascadePreview;
  }
  const byKind = (p: CascadePreview, kind: string) => p.candidates.find((c) => c.ref.kind === kind) as Candidate;

  beforeAll(async () => {
    kubectl(CLUSTER, ['create', 'namespace', NS_B]);
    const sha = push('cascade probe: add', (w) => {
      for (const [dir, names] of Object.entries(dirs)) {
        for (const n of names) writeRepoFile(w, `${DIR}/${dir}/${n}.yaml`, files[n]);
        writeRepoFile(
          w,
          `${DIR}/${dir}/kustomization.yaml`,
          `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n${names.map((n) => `  - ${n}.yaml\n`).join('')}`,
        );
      }
    });
    apply(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: ${KS2}
  namespace: flux-system
  labels: { env: prod }
spec:
  interval: 15s
  retryInterval: 5s
  timeout: 2m
  path: ./${DIR}/before
  prune: false
  wait: false
  sourceRef: { kind: GitRepository, name: digital-human }
`);
    await waitForKustomizationRevision(CLUSTER, KS2, sha, 180_000);
    // made in the Namespace by someone else (not in Git): only a live list finds them
    kubectl(CLUSTER, ['-n', NS_A, 'create', 'configmap', 'c1', '--from-literal=a=1']);
    kubectl(CLUSTER, ['-n', NS_A, 'create', 'secret', 'generic', 's1', '--from-literal=password=not-read']);
    kubectl(CLUSTER, ['-n', NS_A, 'create', 'rolebinding', 'rb1', '--clusterrole=view', `--user=nobody-${suffix}`]);
    await waitFor(
      'a custom resource made',
      async () => {
        try {
          apply(`apiVersion: ${GROUP}/v1\nkind: Widget\nmetadata:\n  name: w1\n  namespace: ${NS_A}\n`);
          return true;
        } catch {
          return false;
        }
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    await waitFor(
      'the protected Pod made',
      async () => kubectl(CLUSTER, ['-n', NS_B, 'get', 'pods', '-l', 'app=guarded', '-o', 'name']).trim() !== '',
      { timeoutMs: 60_000 },
    );
    setPath('mid');
  }, 600_000);

  afterAll(async () => {
    const quiet = (args: string[]) => {
      try {
        kubectl(CLUSTER, args);
      } catch {
        /* gone already */
      }
    };
    quiet(['-n', 'flux-system', 'delete', 'kustomization', KS2, '--ignore-not-found', '--wait=false']);
    quiet(['delete', 'clusterrolebinding,clusterrole', GRANT, '--ignore-not-found']);
    quiet(['delete', 'namespace', NS_A, NS_B, '--ignore-not-found', '--wait=false']);
    quiet(['delete', 'customresourcedefinition', CRD, '--ignore-not-found', '--wait=false']);
    push('cascade probe: remove', (w) => rmSync(join(w, DIR), { recursive: true, force: true }));
  }, 300_000);

  it('a Deployment whose Pod is protected is blocked, named; a Namespace the console cannot list is unknown', async () => {
    const p = await cascadePreview(
      [`Deployment/${NS_B}/guarded`, `ConfigMap/${NS_B}/plain`, `Namespace/${NS_A}`].sort(),
    );
    const deploy = byKind(p, 'Deployment');
    expect(deploy.deletable).toBe(false);
    expect(deploy.blockedBy).toMatch(
      new RegExp(`^its Pod ${NS_B}/guarded-[a-z0-9]+-[a-z0-9]+ is protected \\(${PROTECTED_BY}\\)$`),
    );
    // the shipped RBAC lets the console list neither Secrets nor RoleBindings: unknown, never "nothing else"
    const ns = byKind(p, 'Namespace');
    expect(ns.deletable).toBe(false);
    expect(ns.cascadesUnknown).toMatch(
      new RegExp(
        `^cannot list .*\\bsecrets\\b.*rbac\\.authorization\\.k8s\\.io/rolebindings.* in ns ${NS_A}: the namespace's contents are unknown$`,
      ),
    );
    expect(p.reasons).toContain(`Namespace ${NS_A} is not deleted: ${ns.cascadesUnknown}`);
    // the plan goes on with what is known and safe
    expect(byKind(p, 'ConfigMap')).toMatchObject({ deletable: true, blockedBy: null, cascadesUnknown: null });
    expect(p.plan).toBe('ready');
  });

  it("where the operator lets it list a Namespace's kinds, its Secrets and RoleBindings are counted", async () => {
    apply(`apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: ${GRANT}, namespace: ${NS_A} }
rules: [{ apiGroups: ['*'], resources: ['*'], verbs: [list] }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: ${GRANT}, namespace: ${NS_A} }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: ${GRANT} }
subjects: [{ apiGroup: rbac.authorization.k8s.io, kind: User, name: gitops-console }]
`);
    let ns: Candidate | undefined;
    await waitFor(
      'the Namespace listed in full',
      async () => {
        ns = byKind(
          await cascadePreview([`Deployment/${NS_B}/guarded`, `ConfigMap/${NS_B}/plain`, `Namespace/${NS_A}`].sort()),
          'Namespace',
        );
        return ns.cascadesUnknown === null;
      },
      { timeoutMs: 30_000, intervalMs: 1000 },
    );
    const listed = (ns as Candidate).cascades.map(key);
    for (const o of [`Secret/${NS_A}/s1`, `RoleBinding/${NS_A}/rb1`, `ConfigMap/${NS_A}/c1`, `Widget/${NS_A}/w1`])
      expect(listed).toContain(o);
    expect(ns?.deletable).toBe(true);
  });

  it('a CRD candidate counts its custom resources (unknown while the console may not list them)', async () => {
    setPath('after');
    const want = [
      `Deployment/${NS_B}/guarded`,
      `ConfigMap/${NS_B}/plain`,
      `Namespace/${NS_A}`,
      `CustomResourceDefinition/${CRD}`,
    ].sort();
    // the shipped role may not even read a CRD: the plan is unknown, nothing can be approved
    const unreadable = await cascadePreview(want, true);
    expect(unreadable.plan).toBe('unknown');
    expect(unreadable.reasons.join(' ')).toMatch(/reading the candidates live failed.*forbidden/);
    const grant = (rules: string) =>
      apply(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: ${GRANT} }
rules: ${rules}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: ${GRANT} }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ${GRANT} }
subjects: [{ apiGroup: rbac.authorization.k8s.io, kind: User, name: gitops-console }]
`);
    const readCrd = `{ apiGroups: [apiextensions.k8s.io], resources: [customresourcedefinitions], resourceNames: [${CRD}], verbs: [get] }`;
    grant(`[${readCrd}]`);
    let crd: Candidate | undefined;
    await waitFor(
      'the CRD read',
      async () => {
        const p = await cascadePreview(want);
        crd = p.candidates.find((c) => c.ref.kind === 'CustomResourceDefinition');
        return !!crd;
      },
      { timeoutMs: 30_000, intervalMs: 1000 },
    );
    expect(crd).toMatchObject({
      deletable: false,
      cascadesUnknown: `cannot list ${GROUP}/widgets: the CRD's custom resources are unknown`,
    });
    grant(`[${readCrd}, { apiGroups: [${GROUP}], resources: [widgets], verbs: [list] }]`);
    await waitFor(
      'the custom resources listed',
      async () => {
        crd = byKind(await cascadePreview(want), 'CustomResourceDefinition');
        return crd.cascadesUnknown === null;
      },
      { timeoutMs: 30_000, intervalMs: 1000 },
    );
    expect(crd?.cascades.map(key)).toEqual([`Widget/${NS_A}/w1`]);
  });
});
