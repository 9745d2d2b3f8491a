// Argo CD for real (issue 24): every sandbox cluster runs Argo CD's own controllers (sandbox/argocd.ts). Held-out
// check: for every Argo CD app (the file's own and the seed's, the seed's only read), the console's diff (as the
// console's own least-privilege identity) names exactly the objects Argo CD's comparison calls OutOfSync
// (`status.resources[].status`) — none at rest, the edited one after a hand edit. A difference is a bug in one of
// us, and the failure prints it. Sync phases and waves on the file's own copy of the seeded `ledger-staging`
// (sandbox/seed.ts ledgerFiles): the steps in the order they ran, a PreSync hook that fails (named in "why not
// synced", the release's reconcile failed with its message), a wave that waits.
// The file owns its estate (test/support/own-estate.ts): a staging estate whose Argo CD apps are the seed's
// `argo/edge-gateway` and `argo/ledger`; the hand edit, the ledger's commits and its hooks are all on it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DiffResponse } from '../../src/api/schemas.ts';
import { kubectl, mustState } from '../../sandbox/state.ts';
import { waitFor } from '../../sandbox/procs.ts';
import {
  argoApp,
  argoRefresh,
  argoTerminateOp,
  getJson,
  kubectlEdit,
  repoHead,
  writeRepoFile,
} from '../../sandbox/scenario.ts';
import { KWOK_FAIL_LABEL, ledgerFiles, seedFiles, unschedulable } from '../../sandbox/seed.ts';
import type { AppResponse, ReleasesResponse, TreeResponse } from '../../src/api/schemas.ts';
import { authedFetch, RECORDER_ON, startTestConsole } from '../support/console.ts';
import { ownEstate, type Estate } from '../support/own-estate.ts';

type Json = Record<string, unknown>;
interface ArgoResource {
  group?: string;
  kind: string;
  namespace?: string;
  name: string;
  status?: string;
  health?: { status?: string };
}

let con: Awaited<ReturnType<typeof startTestConsole>>;
let estate: Estate;
const EDGE = 'edge-gateway';
const LEDGER_APP = 'ledger';

const key = (r: { group?: string; kind: string; namespace?: string; name: string }) =>
  `${r.group ?? ''}/${r.kind}/${r.namespace ?? ''}/${r.name}`;

/**
 * Every Argo CD Application of the seed (no test's estate: those reading the seed repository) and of this file's
 * estate, as `cluster/name`; `seed` for the seed's, which this file only reads. Other files' estates change
 * while this one runs: they are theirs to check.
 */
function argoApps(): Array<{ cluster: string; name: string; seed: boolean }> {
  const seedRepo = mustState().git.url;
  return mustState().clusters.flatMap((c) =>
    ((getJson(c.name, ['-n', 'argocd', 'get', 'applications']).items as Json[]) ?? []).flatMap((a) => {
      const meta = a.metadata as { name: string; labels?: Record<string, string> };
      const estateOf = meta.labels?.['gitops-console.dev/test-estate'];
      const repo = ((a.spec as Json).source as { repoURL?: string } | undefined)?.repoURL;
      const seed = !estateOf && repo === seedRepo;
      return seed || (c.name === estate.cluster && estateOf === estate.id)
        ? [{ cluster: c.name, name: meta.name, seed }]
        : [];
    }),
  );
}

/**
 * Until Argo CD reports a seed app Synced at the seed repo's HEAD and Healthy, only reading it (its own
 * comparisons: the seed's apps are automated, and nobody changes the seed while file-parallel tests run).
 */
async function seedAppSynced(cluster: string, name: string): Promise<void> {
  let last: Json = {};
  await waitFor(
    `${cluster}/${name} (seed) Synced and Healthy`,
    async () => {
      const head = repoHead();
      last = (argoApp(cluster, name).status as Json | undefined) ?? {};
      const sync = last.sync as { status?: string; revision?: string } | undefined;
      return sync?.status === 'Synced' && sync.revision === head && (last.health as Json)?.status === 'Healthy';
    },
    { timeoutMs: 240_000, intervalMs: 2000 },
  ).catch((e: Error) => {
    throw new Error(`${e.message}: ${JSON.stringify({ sync: last.sync, health: last.health })}`);
  });
}

/** Argo CD's OutOfSync objects of an app (its own comparison). */
function argoOutOfSync(cluster: string, name: string): string[] {
  const res = (((argoApp(cluster, name).status as Json | undefined)?.resources ?? []) as ArgoResource[]).filter(
    (r) => r.status === 'OutOfSync',
  );
  return res.map(key).sort();
}

/** The console's out-of-sync objects of the same app: changed, missing, or extraneous. */
async function consoleOutOfSync(cluster: string, name: string): Promise<{ keys: string[]; diff: DiffResponse }> {
  const r = await authedFetch(`${con.url}/api/apps/${cluster}/argocd/application/${name}/diff`);
  expect(r.status, `${cluster}/${name} diff`).toBe(200);
  const diff = (await r.json()) as DiffResponse;
  expect(diff.state, `${cluster}/${name}: ${diff.error ?? ''}`).toBe('ok');
  const keys = diff.objects
    .filter((o) => ['changed', 'missing', 'extraneous'].includes(o.status))
    .map((o) => key(o.ref))
    .sort();
  return { keys, diff };
}

/** What each object's pending/drift fields are, for a failure message. */
const explain = (d: DiffResponse) =>
  d.objects
    .filter((o) => o.status !== 'unchanged')
    .map(
      (o) =>
        `${o.ref.kind}/${o.ref.name} ${o.status}: ${o.changes
          .filter((c) => c.class !== 'defaulted' && c.class !== 'ignored')
          .map((c) => `${c.path} (${c.class})`)
          .join(', ')}`,
    )
    .join('; ');

beforeAll(async () => {
  const seed = seedFiles();
  estate = await ownEstate({
    name: 'argocd',
    env: 'staging',
    files: {
      ...Object.fromEntries(Object.entries(seed).filter(([p]) => p.startsWith('argo/edge-gateway/'))),
      ...ledgerFiles(),
    },
    // automated with prune and self-heal, like the seed's edge-gateway-staging and ledger-staging
    argoApps: [
      { name: EDGE, path: 'argo/edge-gateway' },
      { name: LEDGER_APP, path: 'argo/ledger' },
    ],
  });
  // at rest: the ledger's first sync ran to its end (its PostSync hook after wave 1), as the seed's at rest
  await waitFor(
    "the ledger's first sync finished",
    async () => {
      const op = (argoApp(estate.cluster, estate.application(LEDGER_APP)).status as Json | undefined)
        ?.operationState as { phase?: string; finishedAt?: string } | undefined;
      return !!op?.finishedAt && op.phase !== 'Running';
    },
    { timeoutMs: 240_000, intervalMs: 1000 },
  );
  con = await startTestConsole(RECORDER_ON);
}, 420_000);

afterAll(async () => {
  try {
    await con?.close();
  } finally {
    await estate?.teardown();
  }
}, 180_000);

describe('Argo CD, its real controllers', () => {
  it('every Argo CD app at rest: Synced and Healthy by Argo CD, and the console diff agrees (no object out of sync)', async () => {
    const apps = argoApps();
    expect(apps.filter((a) => a.seed).length).toBeGreaterThanOrEqual(2);
    expect(apps.filter((a) => !a.seed).map((a) => a.name)).toEqual(
      expect.arrayContaining([estate.application(EDGE), estate.application(LEDGER_APP)]),
    );
    for (const a of apps) {
      if (a.seed) await seedAppSynced(a.cluster, a.name);
      else await estate.waitArgoSynced(a.name.slice(estate.id.length + 1), estate.seedCommit);
      // the console's catalog shows Argo CD's own status, not a simulation
      await waitFor(
        `${a.cluster}/${a.name} in the console`,
        async () => {
          const r = await authedFetch(`${con.url}/api/apps/${a.cluster}/argocd/application/${a.name}`);
          if (r.status !== 200) return false;
          const body = (await r.json()) as { app: { sync: string; health: string; simulated?: string } };
          return body.app.sync === 'Synced' && body.app.health === 'Healthy' && !body.app.simulated;
        },
        { timeoutMs: 60_000 },
      );
      const theirs = argoOutOfSync(a.cluster, a.name);
      const ours = await consoleOutOfSync(a.cluster, a.name);
      expect(
        ours.keys,
        `${a.cluster}/${a.name}: the console: ${explain(ours.diff)}; Argo CD: ${theirs.join(', ')}`,
      ).toEqual(theirs);
      expect(theirs).toEqual([]);
      // and the app's health: the console's (the worst of its managed objects' health, domain/health.ts) and Argo
      // CD's own (its health checks; Argo CD 3.x no longer keeps each object's health in the status)
      const tree = (await (
        await authedFetch(`${con.url}/api/apps/${a.cluster}/argocd/application/${a.name}/tree`)
      ).json()) as TreeResponse;
      expect(tree.summary.health, `${a.cluster}/${a.name}: ${tree.summary.reason}`).toBe(
        ((argoApp(a.cluster, a.name).status as Json).health as { status: string }).status,
      );
    }
  }, 600_000);

  it('a kubectl edit (automation paused) is out of sync in both, and the console names kubectl-edit', async () => {
    const cluster = estate.cluster;
    const name = estate.application(EDGE);
    const ns = estate.namespace;
    const policy = (argoApp(cluster, name).spec as Json).syncPolicy;
    // the whole syncPolicy replaced (a merge patch would keep `enabled: false` when putting the prior one back)
    const patchPolicy = (p: unknown) =>
      kubectl(cluster, [
        ...['-n', 'argocd', 'patch', 'application', name, '--type', 'json', '-p'],
        JSON.stringify([{ op: 'replace', path: '/spec/syncPolicy', value: p }]),
      ]);
    await estate.waitArgoSynced(EDGE, estate.seedCommit);
    patchPolicy({ automated: { enabled: false } });
    try {
      kubectlEdit(cluster, 'deployment/edge-gateway', ns, { spec: { replicas: 4 } });
      await waitFor(
        'Argo CD reports the Deployment OutOfSync',
        async () => {
          argoRefresh(cluster, name);
          return argoOutOfSync(cluster, name).includes(`apps/Deployment/${ns}/edge-gateway`);
        },
        { timeoutMs: 90_000, intervalMs: 2000 },
      );
      const theirs = argoOutOfSync(cluster, name);
      const ours = await consoleOutOfSync(cluster, name);
      expect(ours.keys, `the console: ${explain(ours.diff)}; Argo CD: ${theirs.join(', ')}`).toEqual(theirs);
      const dep = ours.diff.objects.find((o) => o.ref.kind === 'Deployment');
      expect(dep?.changes.find((c) => c.path === 'spec.replicas')).toMatchObject({
        live: 4,
        class: 'drift',
        owners: [expect.objectContaining({ manager: 'kubectl-edit' })],
      });
    } finally {
      patchPolicy(policy);
    }
    // automation back: Argo CD's self-heal puts Git's replicas back
    await estate.waitArgoSynced(EDGE, estate.seedCommit);
    expect(
      Number(kubectl(cluster, ['-n', ns, 'get', 'deployment', 'edge-gateway', '-o', 'jsonpath={.spec.replicas}'])),
    ).toBe(2);
  }, 300_000);
});

/** The estate's ledger Application (the seed's `ledger-staging`, on the estate) and its id in the console. */
const LEDGER = () => estate.application(LEDGER_APP);
const LEDGER_ID = () => estate.argoAppId(LEDGER_APP);

/** The ledger's files with `edit` applied, committed to the estate's repository; returns the sha. */
function commitLedger(message: string, edit: (files: Record<string, string>) => void): string {
  const files = ledgerFiles();
  edit(files);
  return estate.push(message, (w) => {
    for (const [p, c] of Object.entries(files)) writeRepoFile(w, p, c);
  });
}

/** A pod template whose containers kwok fails (its pod-container-running-failed stage). */
const failing = (doc: string, podLabel: string) =>
  doc.replace(
    `labels:\n        app.kubernetes.io/name: ${podLabel}\n`,
    `labels:\n        app.kubernetes.io/name: ${podLabel}\n        ${KWOK_FAIL_LABEL}: "true"\n`,
  );

async function ledgerView(): Promise<AppResponse> {
  const r = await authedFetch(`${con.url}/api/apps/${LEDGER_ID()}`);
  expect(r.status).toBe(200);
  return (await r.json()) as AppResponse;
}

describe('Argo CD sync phases, waves and hooks (ledger-staging)', () => {
  it('at rest: the last sync ran the PreSync hook, wave 0, wave 1, then the PostSync hook', async () => {
    await estate.waitArgoSynced(LEDGER_APP, estate.seedCommit);
    const v = await ledgerView();
    expect(v.sync?.phase).toBe('Succeeded');
    expect(v.sync?.why).toBeUndefined();
    expect(v.sync?.steps.map((s) => `${s.phase}${s.wave !== undefined ? ` ${s.wave}` : ''}`)).toEqual([
      'PreSync',
      'Sync 0',
      'Sync 1',
      'PostSync',
    ]);
    const names = (phase: string) =>
      v.sync?.steps.find((s) => s.phase === phase)?.tasks.map((t) => `${t.kind}/${t.name}`);
    expect(names('PreSync')).toEqual(['Job/ledger-db-migrate']);
    expect(names('PostSync')).toEqual(['Job/ledger-smoke-test']);
  }, 240_000);

  it('a PreSync hook that fails: "why not synced" names it with its message; the release reconcile failed with it', async () => {
    // the migration fails (kwok fails its pod), and the config changes so that Argo CD has something to sync
    const sha = commitLedger('Ledger strict-v2 with a failing migration (argocd test)', (f) => {
      f['argo/ledger/db-migrate.yaml'] = failing(f['argo/ledger/db-migrate.yaml'] ?? '', 'ledger-db-migrate');
      f['argo/ledger/config.yaml'] = (f['argo/ledger/config.yaml'] ?? '').replace('strict', 'strict-v2');
    });
    let v: AppResponse | undefined;
    await waitFor(
      'the sync fails on its PreSync hook',
      async () => {
        argoRefresh(estate.cluster, LEDGER());
        v = await ledgerView();
        return v.sync?.revision === sha && /^PreSync hook ledger-db-migrate failed: /.test(v.sync.why ?? '');
      },
      { timeoutMs: 180_000, intervalMs: 1000 },
    );
    // Argo CD 3.x retries an automated sync whose hook failed: named with the next attempt
    expect(v?.sync?.why).toMatch(
      /^PreSync hook ledger-db-migrate failed: Job has reached the specified backoff limit(; Argo CD retries \(attempt #\d+ at .+\))?$/,
    );
    expect(v?.app.syncOperation?.failing).toBe(true);
    // the config (wave 0) was never applied: the hook stops the sync before it
    expect(
      kubectl(estate.cluster, [
        ...['-n', estate.namespace, 'get', 'configmap', 'ledger-config'],
        ...['-o', 'jsonpath={.data.LEDGER_MODE}'],
      ]),
    ).toBe('strict');
    await waitFor(
      'the release of the commit: reconcile failed with the hook',
      async () => {
        const r = await authedFetch(`${con.url}/api/apps/${LEDGER_ID()}/releases`);
        const rel = ((await r.json()) as ReleasesResponse).releases.find((x) => x.sha === sha);
        const rec = rel?.states.find((s) => s.name === 'reconcile');
        return rec?.status === 'failed' && /PreSync hook ledger-db-migrate failed/.test(rec.why ?? '');
      },
      { timeoutMs: 120_000, intervalMs: 2000 },
    );
  }, 360_000);

  it('a wave that waits: "waiting on wave 1: Deployment ledger not healthy", with the Deployment’s reason', async () => {
    // on-call stops the retries of the failed revision (`argocd app terminate-op`), else they hold newer ones back
    await argoTerminateOp(estate.cluster, LEDGER());
    // the hook works again (it is deleted and created again: its life cycle passes the prune policy); the
    // workloads' new Pods cannot be scheduled, so wave 1 never becomes healthy
    const sha = commitLedger('Ledger on nodes that do not exist (argocd test)', (f) => {
      f['argo/ledger/deployment.yaml'] = unschedulable(f['argo/ledger/deployment.yaml'] ?? '');
    });
    let v: AppResponse | undefined;
    await waitFor(
      'the sync waits on wave 1',
      async () => {
        argoRefresh(estate.cluster, LEDGER());
        v = await ledgerView();
        return v.sync?.phase === 'Running' && v.sync.revision === sha && /wave 1/.test(v.sync.why ?? '');
      },
      { timeoutMs: 180_000, intervalMs: 1000 },
    );
    expect(v?.sync?.why).toMatch(/^waiting on wave 1: Deployment ledger not healthy \(.+\)/);
    // the steps so far: the hook succeeded this time, wave 0 applied, wave 1 running
    const pre = v?.sync?.steps.find((s) => s.phase === 'PreSync')?.tasks[0];
    expect(pre).toMatchObject({ name: 'ledger-db-migrate', hookPhase: 'Succeeded' });
    expect(v?.sync?.steps.find((s) => s.wave === 1)?.tasks.find((t) => t.kind === 'Deployment')).toMatchObject({
      hookPhase: 'Running',
    });
  }, 300_000);
});
