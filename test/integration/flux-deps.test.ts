// Flux dependencies (issue 26, part 1) on the real kustomize-controller: the seeded `digital-human-dev` depends
// on `infra-dev`. The graph and the app page say so; when infra-dev fails (its Kustomization pointed at a path
// that does not exist: someone changed it around the console), kustomize-controller holds the app and the console
// says "waiting on infra-dev (not Ready: …)" on the app, in the graph, and as the release's "not live — why?";
// once infra is Ready again the app applies the commit and its reconcile state says it waited, and on what.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppResponse, DependencyGraphResponse, ReleasesResponse } from '../../src/api/schemas.ts';
import { waitFor } from '../../sandbox/procs.ts';
import {
  commitAndPushRetrying,
  getJson,
  requestReconcile,
  setKustomizationPath,
  waitForKustomizationRevision,
  writeRepoFile,
} from '../../sandbox/scenario.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { RECORDER_ON, startTestConsole } from '../support/console.ts';

const DEV = 'nonprod/flux-system/kustomization/digital-human-dev';
const INFRA = 'nonprod/flux-system/kustomization/infra-dev';

let con: Awaited<ReturnType<typeof startTestConsole>>;
let dev: Signed;

/** what someone with kubectl does to the infra Kustomization (the sandbox applies it, not Git) */
const setInfraPath = (path: string) => setKustomizationPath('nonprod', 'infra-dev', path);
const nudge = () => {
  requestReconcile('nonprod', 'gitrepository', 'digital-human');
  requestReconcile('nonprod', 'kustomization', 'infra-dev');
  requestReconcile('nonprod', 'kustomization', 'digital-human-dev');
};
async function detail(id: string): Promise<AppResponse> {
  const r = await as(dev, con.url, `/api/apps/${id}`);
  expect(r.status).toBe(200);
  return r.body as AppResponse;
}

beforeAll(async () => {
  con = await startTestConsole(RECORDER_ON);
  dev = await signIn(con.url, 'developer');
}, 120_000);

afterAll(async () => {
  setInfraPath('./infra/dev');
  nudge();
  await con?.close();
});

describe('Flux dependsOn', () => {
  it('shows the seeded graph: infra-dev first, digital-human-dev after it, each with its Ready', async () => {
    // infra-dev may still be applying the source's newest commit (an earlier suite's, or image automation's):
    // Flux then holds digital-human-dev ("revision is not up to date") until it has
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
    expect(d.app.dependsOn).toEqual([{ namespace: 'flux-system', name: 'infra-dev' }]);
    expect(d.dependencies).toEqual([expect.objectContaining({ id: INFRA, name: 'infra-dev', ready: 'True' })]);
    expect(d.app.waitingOn).toBeUndefined();
    expect((await detail(INFRA)).dependents).toEqual([expect.objectContaining({ id: DEV, name: 'digital-human-dev' })]);

    const r = await as(dev, con.url, '/api/dependencies?env=dev');
    expect(r.status).toBe(200);
    const g = r.body as DependencyGraphResponse;
    expect(g.edges).toContainEqual({ from: DEV, to: INFRA });
    expect(g.nodes.find((n) => n.id === INFRA)?.depth).toBe(0);
    expect(g.nodes.find((n) => n.id === DEV)?.depth).toBe(1);
    expect(g.cycles).toEqual([]);
    // a person who may not read dev's apps learns nothing of them (not even that they exist)
    const other = await signIn(con.url, 'staging-viewer');
    const hidden = (await as(other, con.url, '/api/dependencies?env=dev')).body as DependencyGraphResponse;
    expect(hidden.nodes).toEqual([]);
    expect(hidden.edges).toEqual([]);
    // bad input: no environment is a 400 with the reason, not an empty graph
    expect((await as(dev, con.url, '/api/dependencies')).status).toBe(400);
  });

  it('an app held for a failing dependency says so; when it is Ready again the release says it waited', async () => {
    setInfraPath('./infra/does-not-exist');
    try {
      // a change of the app, made while its dependency fails: kustomize-controller applies none of it
      const sha = commitAndPushRetrying(`dev notes ${Date.now()}`, (w) =>
        writeRepoFile(w, 'overlays/dev/NOTES.md', `held while infra fails (${new Date().toISOString()})\n`),
      );
      // (infra-dev is Ready=Unknown for the moments it reconciles again: each read waits for a moment it is False)
      let last: AppResponse | undefined;
      await waitFor(
        'digital-human-dev waiting on infra-dev',
        async () => {
          requestReconcile('nonprod', 'kustomization', 'digital-human-dev');
          last = await detail(DEV);
          return (
            /^waiting on infra-dev \(not Ready: /.test(last.app.waitingOn ?? '') &&
            last.dependencies?.[0]?.ready === 'False'
          );
        },
        { timeoutMs: 90_000, intervalMs: 2000 },
      ).catch((e: unknown) => {
        throw new Error(`${String(e)}; last: ${JSON.stringify(last?.app.conditions)} ${last?.app.waitingOn}`);
      });
      const held = last as AppResponse;
      expect(held.dependencies?.[0]).toMatchObject({ id: INFRA, ready: 'False' });
      // the dependency's own words reach the person who may read it (the line itself names only its reason)
      expect(held.dependencies?.[0]?.message).toMatch(/does-not-exist|not found|no such/i);
      expect(held.app.waitingOn).not.toMatch(/does-not-exist/);
      // a held app is waiting, not broken
      expect(held.app.health).not.toBe('Degraded');
      // the live Kustomization really is held: kustomize-controller's own reason
      const k = getJson('nonprod', ['-n', 'flux-system', 'get', 'kustomization', 'digital-human-dev']);
      const ready = ((k.status as { conditions: Array<{ type: string; reason: string }> }).conditions ?? []).find(
        (c) => c.type === 'Ready',
      );
      expect(ready?.reason).toBe('DependencyNotReady');
      expect(String((k.status as { lastAppliedRevision?: string }).lastAppliedRevision)).not.toContain(sha);

      await waitFor('the graph: infra-dev not Ready, the app waiting on it', async () => {
        const g = (await as(dev, con.url, '/api/dependencies?env=dev')).body as DependencyGraphResponse;
        return (
          g.nodes.find((n) => n.id === INFRA)?.ready === 'False' &&
          /^waiting on infra-dev/.test(g.nodes.find((n) => n.id === DEV)?.waitingOn ?? '')
        );
      });
      // the list (overview cards) carries the line too
      const list = (await as(dev, con.url, '/api/apps?env=dev')).body as {
        apps: Array<{ id: string; waitingOn?: string }>;
      };
      expect(list.apps.find((a) => a.id === DEV)?.waitingOn).toMatch(/^waiting on infra-dev/);
      // "merged, but not live — why?": the reconcile waits on the dependency
      await waitFor('the release of the commit, not live because it waits', async () => {
        const rel = (await as(con.admin, con.url, `/api/apps/${DEV}/releases`)).body as ReleasesResponse;
        return rel.releases[0]?.sha === sha && /waiting on infra-dev/.test(rel.notLive?.why ?? '');
      });

      setInfraPath('./infra/dev');
      nudge();
      await waitForKustomizationRevision('nonprod', 'digital-human-dev', sha, 120_000);
      await waitFor(
        'the reconcile state of the release says it waited on infra-dev',
        async () => {
          const rel = (await as(con.admin, con.url, `/api/apps/${DEV}/releases`)).body as ReleasesResponse;
          const st = rel.releases.find((x) => x.sha === sha)?.states.find((s) => s.name === 'reconcile');
          if (st?.status !== 'ok') return false;
          const waited = st.data?.waited as { on?: string[]; seconds?: number } | undefined;
          expect(waited?.on).toEqual(['flux-system/infra-dev']);
          expect(waited?.seconds).toBeGreaterThan(0);
          expect(st.value).toMatch(/waited \d+ s on infra-dev/);
          return true;
        },
        { timeoutMs: 60_000, intervalMs: 1000 },
      );
      await waitFor('the line is gone once it applied', async () => !(await detail(DEV)).app.waitingOn);
    } finally {
      setInfraPath('./infra/dev');
      nudge();
    }
  }, 300_000);
});
