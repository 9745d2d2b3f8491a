// Flux dependencies (issue 26, part 1) on the real kustomize-controller, on the file's own estate: its app depends
// on its infra (the seed's shape: `digital-human-dev` after `infra-dev`). The graph and the app page say so; when
// infra fails (its Kustomization pointed at a path that does not exist: someone changed it around the console),
// kustomize-controller holds the app and the console says "waiting on <infra> (not Ready: …)" on the app, in the
// graph, and as the release's "not live — why?"; once infra is Ready again the app applies the commit and its
// reconcile state says it waited, and on what. The estate is deleted afterwards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppResponse, DependencyGraphResponse, ReleasesResponse } from '../../src/api/schemas.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { getJson, requestReconcile, setKustomizationPath, writeRepoFile } from '../../sandbox/scenario.ts';
import { infraFiles } from '../../sandbox/seed.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { RECORDER_ON, startTestConsole } from '../support/console.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../support/own-estate.ts';

let estate: Estate;
let con: Awaited<ReturnType<typeof startTestConsole>>;
let dev: Signed;
/** the estate's app and its infra: ids in the console, and their Kustomizations' names */
let DEV: string;
let INFRA: string;
let devName: string;
let infraName: string;

/** what someone with kubectl does to the infra Kustomization (the test applies it, not Git) */
const setInfraPath = (path: string) => setKustomizationPath(estate.cluster, infraName, path);
const nudge = () => {
  requestReconcile(estate.cluster, 'gitrepository', estate.source);
  requestReconcile(estate.cluster, 'kustomization', infraName);
  requestReconcile(estate.cluster, 'kustomization', devName);
};
async function detail(id: string): Promise<AppResponse> {
  const r = await as(dev, con.url, `/api/apps/${id}`);
  expect(r.status).toBe(200);
  return r.body as AppResponse;
}

beforeAll(async () => {
  // the seed's dev platform objects (a ConfigMap and a NetworkPolicy) as the infra the app depends on
  const infra = infraFiles()['infra/dev/platform.yaml'] as string;
  estate = await ownEstate({
    name: 'flux-deps',
    env: 'dev',
    files: { ...digitalHumanTemplate('dev'), 'infra/dev/platform.yaml': infra },
    apps: [
      { name: 'infra', path: 'infra/dev' },
      { name: 'app', path: 'overlays/dev', dependsOn: ['infra'] },
    ],
  });
  DEV = estate.appId('app');
  INFRA = estate.appId('infra');
  devName = estate.kustomization('app');
  infraName = estate.kustomization('infra');
  // the console connects to the estate's cluster only: its release recorder, which renders every app it sees at
  // start, has no other cluster's apps to work through before this estate's
  con = await startTestConsole({ ...RECORDER_ON, CONSOLE_CONTEXTS: estate.cluster });
  dev = await signIn(con.url, 'developer');
}, 300_000);

afterAll(async () => {
  try {
    await con?.close();
  } finally {
    await estate?.teardown();
  }
});

describe('Flux dependsOn', () => {
  it("shows the estate's graph: its infra first, its app after it, each with its Ready", async () => {
    // the infra may still be settling its first reconcile: Flux then holds the app until it is Ready
    let nudged = 0;
    await waitFor(
      'both Ready in the console, nothing waited on',
      async () => {
        const d = await detail(DEV);
        if (d.app.waitingOn && Date.now() - nudged > 10_000) {
          nudge();
          nudged = Date.now();
        }
        return d.dependencies?.[0]?.ready === 'True' && d.app.waitingOn === undefined;
      },
      { timeoutMs: 150_000 },
    );
    const d = await detail(DEV);
    expect(d.app.dependsOn).toEqual([{ namespace: 'flux-system', name: infraName }]);
    expect(d.dependencies).toEqual([expect.objectContaining({ id: INFRA, name: infraName, ready: 'True' })]);
    expect(d.app.waitingOn).toBeUndefined();
    expect((await detail(INFRA)).dependents).toEqual([expect.objectContaining({ id: DEV, name: devName })]);

    const r = await as(dev, con.url, '/api/dependencies?env=dev');
    expect(r.status).toBe(200);
    const g = r.body as DependencyGraphResponse;
    expect(g.edges).toContainEqual({ from: DEV, to: INFRA });
    expect(g.nodes.find((n) => n.id === INFRA)?.depth).toBe(0);
    expect(g.nodes.find((n) => n.id === DEV)?.depth).toBe(1);
    // (other files' estates are in dev too: none of the cycles, if any, is ours)
    expect(g.cycles.filter((c) => c.includes(DEV) || c.includes(INFRA))).toEqual([]);
    // a person who may not read dev's apps learns nothing of them (not even that they exist)
    const other = await signIn(con.url, 'staging-viewer');
    const hidden = (await as(other, con.url, '/api/dependencies?env=dev')).body as DependencyGraphResponse;
    expect(hidden.nodes).toEqual([]);
    expect(hidden.edges).toEqual([]);
    // bad input: no environment is a 400 with the reason, not an empty graph
    expect((await as(dev, con.url, '/api/dependencies')).status).toBe(400);
  });

  it('an app held for a failing dependency says so; when it is Ready again the release says it waited', async () => {
    // a settled app first, as the seed's long-running one was (a new estate's HPA has no metrics for its first
    // moments, and its Deployments roll out): what follows is about the hold, not about a young app
    let settling: AppResponse | undefined;
    await waitFor(
      'the app Healthy before its infra fails',
      async () => (settling = await detail(DEV)).app.health === 'Healthy',
      { timeoutMs: 180_000, intervalMs: 2000 },
    ).catch((e: unknown) => {
      throw new Error(`${String(e)}; last: ${settling?.app.health} ${settling?.app.healthMessage}`);
    });
    setInfraPath('./infra/does-not-exist');
    // a change of the app, made while its dependency fails: kustomize-controller applies none of it
    const sha = estate.push(`dev notes ${Date.now()}`, (w) =>
      writeRepoFile(w, 'overlays/dev/NOTES.md', `held while infra fails (${new Date().toISOString()})\n`),
    );
    requestReconcile(estate.cluster, 'gitrepository', estate.source);
    // (the infra is Ready=Unknown for the moments it reconciles again: each read waits for a moment it is False)
    let last: AppResponse | undefined;
    await waitFor(
      `${devName} waiting on ${infraName}`,
      async () => {
        requestReconcile(estate.cluster, 'kustomization', devName);
        last = await detail(DEV);
        return (
          new RegExp(`^waiting on ${infraName} \\(not Ready: `).test(last.app.waitingOn ?? '') &&
          last.dependencies?.[0]?.ready === 'False' &&
          // a held app is waiting, not broken: the hold lasts, so a hold that made it Degraded fails here; what
          // passes is a moment of its own objects (e.g. its HPA missing one metrics scrape at load 10: ScalingActive
          // False is Degraded, as in Argo CD, and Healthy again at the next scrape)
          last.app.health !== 'Degraded'
        );
      },
      { timeoutMs: 90_000, intervalMs: 2000 },
    ).catch((e: unknown) => {
      throw new Error(
        `${String(e)}; last: ${JSON.stringify(last?.app.conditions)} ${last?.app.waitingOn}; ` +
          `health ${last?.app.health}: ${last?.app.healthMessage}`,
      );
    });
    const held = last as AppResponse;
    expect(held.dependencies?.[0]).toMatchObject({ id: INFRA, ready: 'False' });
    // the dependency's own words reach the person who may read it (the line itself names only its reason)
    expect(held.dependencies?.[0]?.message).toMatch(/does-not-exist|not found|no such/i);
    expect(held.app.waitingOn).not.toMatch(/does-not-exist/);
    // a held app is waiting, not broken
    expect(held.app.health, held.app.healthMessage).not.toBe('Degraded');
    // the live Kustomization really is held: kustomize-controller's own reason
    const k = getJson(estate.cluster, ['-n', 'flux-system', 'get', 'kustomization', devName]);
    const ready = ((k.status as { conditions: Array<{ type: string; reason: string }> }).conditions ?? []).find(
      (c) => c.type === 'Ready',
    );
    expect(ready?.reason).toBe('DependencyNotReady');
    expect(String((k.status as { lastAppliedRevision?: string }).lastAppliedRevision)).not.toContain(sha);

    await waitFor('the graph: the infra not Ready, the app waiting on it', async () => {
      const g = (await as(dev, con.url, '/api/dependencies?env=dev')).body as DependencyGraphResponse;
      return (
        g.nodes.find((n) => n.id === INFRA)?.ready === 'False' &&
        (g.nodes.find((n) => n.id === DEV)?.waitingOn ?? '').startsWith(`waiting on ${infraName}`)
      );
    });
    // the list (overview cards) carries the line too
    const list = (await as(dev, con.url, '/api/apps?env=dev')).body as {
      apps: Array<{ id: string; waitingOn?: string }>;
    };
    expect(list.apps.find((a) => a.id === DEV)?.waitingOn).toMatch(new RegExp(`^waiting on ${infraName}`));
    // "merged, but not live — why?": the reconcile waits on the dependency
    await waitFor(
      'the release of the commit, not live because it waits',
      async () => {
        const rel = (await as(con.admin, con.url, `/api/apps/${DEV}/releases`)).body as ReleasesResponse;
        return rel.releases[0]?.sha === sha && (rel.notLive?.why ?? '').includes(`waiting on ${infraName}`);
      },
      { timeoutMs: 180_000, intervalMs: 1000 },
    );

    setInfraPath('./infra/dev');
    nudge();
    await estate.waitApplied(sha, 'app', 120_000);
    await waitFor(
      'the reconcile state of the release says it waited on the infra',
      async () => {
        const rel = (await as(con.admin, con.url, `/api/apps/${DEV}/releases`)).body as ReleasesResponse;
        const st = rel.releases.find((x) => x.sha === sha)?.states.find((s) => s.name === 'reconcile');
        if (st?.status !== 'ok') return false;
        const waited = st.data?.waited as { on?: string[]; seconds?: number } | undefined;
        expect(waited?.on).toEqual([`flux-system/${infraName}`]);
        expect(waited?.seconds).toBeGreaterThan(0);
        expect(st.value).toMatch(new RegExp(`waited \\d+ s on ${infraName}`));
        return true;
      },
      { timeoutMs: 180_000, intervalMs: 1000 },
    );
    await waitFor('the line is gone once it applied', async () => !(await detail(DEV)).app.waitingOn);
  }, 600_000);
});
