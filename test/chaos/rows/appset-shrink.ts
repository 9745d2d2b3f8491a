// Chaos row: a reviewer approves the console's prune preview of an ApplicationSet's shrink (issue 24). The row's own
// ApplicationSet (Git directories set/* of its own repo, one Application each, a ConfigMap each in its own governed
// namespace) is brought back to three, then set/c is removed in Git: the applicationset-controller's DELETE of
// `<id>-c` is denied (gitops-console-appset-shrink) until the console lists its uid for an approved preview. The
// action is the approval (`prune.approved`, src/server/prune/approvals.ts); the execution that lists the uids
// (`prune.stamp`) follows in the same process, or in a replica that recovers it. Invariants, from outside (kubectl
// as admin, the evidence export, the preview as the survivor serves it): the kept Applications are never deleted
// (same uid); the dropped one only after a completed (or interrupted, then resumed) approval, never after a failed
// one or none (then the answer is an error); a completed approval ends in a prune done (Application gone) or failed
// with its reason; the survivor's status and journal row match the cluster; a pending shrink can still be approved;
// nothing is approved, listed or executed twice.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { AppSetView } from '../../../src/api/appsets.ts';
import type { PrunePreview, PrunePreviewResponse } from '../../../src/api/prune.ts';
import { APPSET_REFRESH_ANNOTATION } from '../../../src/domain/appset.ts';
import { waitFor } from '../../../sandbox/procs.ts';
import { argoRefresh, getJson, writeRepoFile } from '../../../sandbox/scenario.ts';
import { kubectl, mustState } from '../../../sandbox/state.ts';
import { as, signIn } from '../../support/auth.ts';
import { ownEstate, type Estate } from '../../support/own-estate.ts';
import { exportChain } from '../invariants.ts';
import type { ActionRow, Replica } from '../types.ts';
import { answered, outcomeOf } from './freeze-start.ts';

const ELEMENTS = ['a', 'b', 'c'] as const;
const KEPT = ['a', 'b'] as const;
const DROPPED = 'c';
const LABEL = 'gitops-console.dev/test-estate';

/** `set`: the ApplicationSet (in argocd); `previewId`: the cell's preview (prepare); `uids`: at the cell's start */
export type AppSetRowState = { estate: Estate; set: string; previewId: string; uids: Record<string, string> };

const cm = (e: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: chaos-set-${e}\ndata:\n  element: ${e}\n`;
const FILES = Object.fromEntries(ELEMENTS.map((e) => [`set/${e}/configmap.yaml`, cm(e)]));

function appSet(e: Estate, name: string): unknown {
  const server = mustState().clusters.find((c) => c.name === e.cluster)?.apiserver;
  const repoURL = e.state.git.url;
  const source = { repoURL, targetRevision: 'main', path: '{{path}}' };
  const syncPolicy = { automated: { prune: true, selfHeal: true } };
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'ApplicationSet',
    metadata: { name, namespace: 'argocd', labels: { [LABEL]: e.id } },
    spec: {
      generators: [{ git: { repoURL, revision: 'main', requeueAfterSeconds: 15, directories: [{ path: 'set/*' }] } }],
      template: {
        metadata: { name: `${e.id}-{{path.basename}}`, labels: { env: e.env, [LABEL]: e.id } },
        spec: { project: 'default', source, destination: { server, namespace: e.namespace }, syncPolicy },
      },
    },
  };
}

type LiveApp = { uid: string; deleting?: string | undefined; synced: boolean };
type AppItem = {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  status?: { sync?: { status?: string } };
};
const argo = (s: AppSetRowState, args: string[]) => kubectl(s.estate.cluster, ['-n', 'argocd', ...args]);
/** The set's Applications as the cluster has them (kubectl as admin), by name. */
function liveApps(s: AppSetRowState): Map<string, LiveApp> {
  const list = getJson(s.estate.cluster, ['-n', 'argocd', 'get', 'applications', '-l', `${LABEL}=${s.estate.id}`]);
  return new Map(
    ((list.items ?? []) as AppItem[]).map(({ metadata: m, status }) => [
      m.name,
      { uid: m.uid, deleting: m.deletionTimestamp, synced: status?.sync?.status === 'Synced' },
    ]),
  );
}

// a new value each time: the controller refreshes on the annotation's presence, and one left in place (its
// reconcile failing while the forge was down, then backing off for minutes) is no change that wakes it
const refreshSet = (s: AppSetRowState) =>
  argo(s, ['annotate', '--overwrite', 'applicationset', s.set, `${APPSET_REFRESH_ANNOTATION}=${Date.now()}`]);

async function get<T>(r: Replica, path: string): Promise<T> {
  const res = await as(r.admin, r.base, path);
  if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${res.text.slice(0, 200)}`);
  return res.body as T;
}
const view = async (r: Replica, s: AppSetRowState) => (await get<{ appset: AppSetView }>(r, setPath(s))).appset;
const setPath = (s: AppSetRowState) => `/api/appsets/${s.estate.cluster}/argocd/${s.set}`;
type Viewed = PrunePreviewResponse;

/** Until the ApplicationSet has its three Applications synced, none being deleted (one stuck deleting for 30 s let go). */
async function threeApps(s: AppSetRowState, extra: () => Promise<boolean> = async () => true): Promise<void> {
  await waitFor(
    'three Applications of the ApplicationSet, synced, none being deleted',
    async () => {
      refreshSet(s);
      const live = liveApps(s);
      for (const [name, a] of live)
        if (a.deleting && Date.now() - Date.parse(a.deleting) > 30_000)
          // a deletion a previous cell left held (its objects' approvals withdrawn): let go by hand
          argo(s, ['patch', 'application', name, '--type=merge', '-p', NO_FINALIZERS]);
      const apps = ELEMENTS.map((x) => s.estate.application(x));
      for (const x of apps) if (live.get(x)?.synced === false) argoRefresh(s.estate.cluster, x);
      return apps.every((x) => live.get(x)?.synced && !live.get(x)?.deleting) && (await extra());
    },
    // (the row's reset: after a forge or registry cell the controllers fetch Git again on their back-off)
    { timeoutMs: 180_000, intervalMs: 2000 },
  );
}

const GONE_ROWS = ['stamped', 'gone', 'deleted'];
const KEPT_ROWS = ['planned', 'not-deleted', 'failed'];
const NO_FINALIZERS = JSON.stringify({ metadata: { finalizers: null } });
const isApp = (object: string, name: string) => object.endsWith(`/Application/argocd/${name}`);

export const appsetShrink: ActionRow<AppSetRowState> = {
  id: 'appset-shrink',
  label: 'ApplicationSet shrink',
  intentType: 'prune.approved',
  points: ['after-intent', 'after-act'],
  cluster: (s) => s.estate.cluster,
  async setup() {
    const estate = await ownEstate({ name: 'chaos-appset', env: 'dev', files: FILES, apps: [], governed: true });
    const s: AppSetRowState = { estate, set: `${estate.id}-set`, previewId: '', uids: {} };
    const apply = ['apply', '--server-side', '--field-manager=chaos-row', '-f', '-'];
    kubectl(estate.cluster, apply, JSON.stringify(appSet(estate, s.set)));
    // a set that never comes up leaves nothing behind
    await threeApps(s).catch(async (err: unknown) => {
      await appsetShrink.teardown(s);
      throw err;
    });
    return s;
  },
  async teardown(s) {
    // each step may find its object gone already
    const k = (args: string[]) =>
      Promise.resolve()
        .then(() => argo(s, args))
        .catch(() => undefined);
    await k(['delete', 'applicationset', s.set, '--cascade=orphan', '--ignore-not-found', '--wait=false']);
    for (const x of ELEMENTS.map((y) => s.estate.application(y))) {
      await k(['patch', 'application', x, '--type=merge', '-p', NO_FINALIZERS]);
      await k(['delete', 'application', x, '--ignore-not-found', '--wait=false']);
    }
    await s.estate.teardown();
  },
  async prepare(s, c) {
    const r = c.reader();
    const e = s.estate;
    const dropped = e.application(DROPPED);
    // back to three: every directory in Git, the three Applications synced, the console sees no shrink held
    e.push('chaos: the ApplicationSet back to three', (w) => {
      for (const [p, t] of Object.entries(FILES)) writeRepoFile(w, p, t);
    });
    await threeApps(s, async () => {
      const v = await view(r, s);
      return v.shrink.state === 'nothing' && !v.heldByConsole && v.owned.length === ELEMENTS.length;
    });
    s.uids = Object.fromEntries([...liveApps(s)].map(([n, a]) => [n, a.uid]));
    // the shrink: the controller's deletion of the dropped Application denied, the console shows it
    e.push('chaos: drop set/c', (w) => rmSync(join(w, 'set', DROPPED), { recursive: true, force: true }));
    await waitFor(
      'the console shows the shrink of the dropped Application, the controller held',
      async () => {
        refreshSet(s);
        const v = await view(r, s);
        return v.shrink.state === 'shrink' && v.shrink.removed.map((x) => x.name).join() === dropped && v.heldByConsole;
      },
      // after a forge or registry cell the controllers fetch Git again on their back-off: the reset (not the cell)
      // may take a few minutes
      { timeoutMs: 180_000, intervalMs: 2000 },
    );
    const d = liveApps(s).get(dropped);
    if (!d || d.deleting || d.uid !== s.uids[dropped]) throw new Error(`${dropped} was deleted before any approval`);
    const developer = await signIn(r.base, 'developer');
    const res = await as(developer, r.base, `${setPath(s)}/prune-previews`, { method: 'POST' });
    const p = (res.body as { preview?: PrunePreview }).preview;
    if (res.status !== 200 || p?.status !== 'pending' || p.plan !== 'ready')
      throw new Error(`the shrink's preview: ${res.status} ${p ? `${p.status}/${p.plan}` : res.text.slice(0, 200)}`);
    if (!p.candidates.some((x) => x.deletable && isApp(x.id, dropped))) throw new Error(`no ${dropped} in it`);
    s.previewId = p.id;
  },
  perform: (s, c) =>
    answered(c.actor, `/api/prune-previews/${s.previewId}/approve`, { comment: 'chaos: ApplicationSet shrink' }),
  async check(s, c, run) {
    const broken: string[] = [];
    const r = c.reader();
    const dropped = s.estate.application(DROPPED);
    // settled: the prune out of approved/executing, and a done one's Application gone (the controller deletes it)
    const path = `/api/prune-previews/${s.previewId}`;
    let v = await get<Viewed>(r, path);
    await waitFor(
      'the prune settles',
      async () => {
        v = await get<Viewed>(r, path);
        const st = v.preview.status;
        return st !== 'approved' && st !== 'executing' && (st !== 'done' || !liveApps(s).has(dropped));
      },
      { timeoutMs: 60_000, intervalMs: 2000 },
    ).catch(() => undefined);
    const p = v.preview;
    const live = liveApps(s); // right after the preview: what the survivor shows is compared with it
    const { records } = await exportChain(r);
    for (const k of KEPT.map((x) => s.estate.application(x))) {
      const a = live.get(k);
      if (!a || a.deleting || a.uid !== s.uids[k]) broken.push(`the kept Application ${k} was deleted`);
    }
    const d = live.get(dropped);
    if (d && d.uid !== s.uids[dropped]) broken.push(`${dropped} was made again (another uid) while set/c is gone`);
    const gone = !d || !!d.deleting;
    // what the survivor shows matches the cluster
    const row = p.journal.find((j) => isApp(j.object, dropped));
    // failed/executing: by the Application's journal row (stamping or deleting: in flight, unknown)
    // a done prune says whether the controller deleted the stamped Application yet (handover): waiting is there
    const h = v.handover;
    if (p.status === 'done' && !h) broken.push('the prune is done without saying what the controller did since');
    const expectGone = h
      ? h.state === 'unknown'
        ? undefined
        : h.state === 'deleted'
      : ['done', 'pending', 'approved', 'rejected', 'void'].includes(p.status)
        ? p.status === 'done'
        : GONE_ROWS.includes(row?.state ?? '') || (KEPT_ROWS.includes(row?.state ?? 'planned') ? false : undefined);
    const says = `the survivor shows the prune ${p.status}${h ? `, ${h.state}` : ''} (${dropped}: ${row?.state ?? 'no journal row'})`;
    if (expectGone !== undefined && expectGone !== gone)
      broken.push(`${says}, but it is ${gone ? 'deleted' : 'there'}`);
    if (p.status === 'pending' && !v.viewer.canApprove)
      broken.push(`the shrink is pending but cannot be approved there: ${v.viewer.reason ?? ''}`);
    // nothing twice
    const mine = records.filter((x) => x.data.previewId === s.previewId);
    const approvals = p.decisions.filter((x) => x.decision === 'approve').length;
    if (approvals > p.requiredApprovals) broken.push(`${approvals} approvals, ${p.requiredApprovals} needed`);
    const done = mine.filter((x) => x.type === 'prune.approved' && outcomeOf(records, x.seq) === 'action.completed');
    if (done.length > 1) broken.push(`the preview approved ${done.length} times in the evidence`);
    const executed = mine.filter((x) => x.type === 'prune.executed').length;
    if (executed > 1) broken.push(`the prune executed ${executed} times`);
    // each object listed for the controller (prune.stamp) or deleted by the console (prune.delete) at most once
    const acts = new Map<string, number>();
    for (const x of mine.filter((y) => ['prune.stamp', 'prune.delete'].includes(y.type) && !y.data.withdrawn))
      acts.set(String(x.data.object), (acts.get(String(x.data.object)) ?? 0) + 1);
    for (const [o, n] of acts) if (n > 1) broken.push(`${o} listed or deleted ${n} times`);
    if (gone && ![...acts.keys()].some((o) => isApp(o, dropped)))
      broken.push(`${dropped} was deleted, but the evidence lists no approval of it`);
    // by the approval's recorded outcome
    if (run.intents.length > 1) broken.push(`${run.intents.length} approval intents from one request`);
    const seq = run.intents[0];
    const outcome = seq === undefined ? undefined : outcomeOf(records, seq);
    const a = run.answer;
    if (seq === undefined) {
      if (gone) broken.push(`${dropped} was deleted with no approval intent`);
      if (approvals) broken.push('the preview holds an approval with no intent in the evidence');
      if (!('error' in a) && a.status < 400) broken.push(`no intent recorded, yet the console answered ${a.status}`);
    } else if (outcome === 'action.completed') {
      if (!['done', 'failed'].includes(p.status)) broken.push(`approved, but the prune is ${p.status} a minute on`);
      if (p.status === 'failed' && !p.statusReason) broken.push('the prune failed without saying why');
      if (!('error' in a) && a.status >= 400) broken.push(`approved, yet the console answered ${a.status}`);
    } else if (outcome === 'action.failed' || outcome === 'action.voided') {
      if (gone) broken.push(`the approval ${outcome}, yet ${dropped} was deleted`);
      if (approvals || !['pending', 'void'].includes(p.status))
        broken.push(`the approval ${outcome}, yet the prune is ${p.status} with ${approvals} approval(s)`);
    }
    return broken;
  },
};
