// Argo CD for real (issue 24): every sandbox cluster runs Argo CD's own controllers (sandbox/argocd.ts). Held-out
// check: for every Argo CD app, the console's diff (as the console's own least-privilege identity) names exactly
// the objects Argo CD's comparison calls OutOfSync (`status.resources[].status`) — none at rest, the edited one
// after a hand edit. A difference is a bug in one of us, and the failure prints it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DiffResponse } from '../../src/api/schemas.ts';
import { kubectl, mustState } from '../../sandbox/state.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { argoApp, argoRefresh, getJson, kubectlEdit, waitForArgoSynced } from '../../sandbox/scenario.ts';
import { authedFetch, startTestConsole } from '../support/console.ts';

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

const key = (r: { group?: string; kind: string; namespace?: string; name: string }) =>
  `${r.group ?? ''}/${r.kind}/${r.namespace ?? ''}/${r.name}`;

/** Every Argo CD Application in the sandbox, as `cluster/name`. */
function argoApps(): Array<{ cluster: string; name: string }> {
  return mustState().clusters.flatMap((c) =>
    ((getJson(c.name, ['-n', 'argocd', 'get', 'applications']).items as Json[]) ?? []).map((a) => ({
      cluster: c.name,
      name: String((a.metadata as Json).name),
    })),
  );
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
  con = await startTestConsole();
}, 120_000);

afterAll(async () => {
  await con?.close();
});

describe('Argo CD, its real controllers', () => {
  it('every Argo CD app at rest: Synced and Healthy by Argo CD, and the console diff agrees (no object out of sync)', async () => {
    const apps = argoApps();
    expect(apps.length).toBeGreaterThanOrEqual(2);
    for (const a of apps) {
      await waitForArgoSynced(a.cluster, a.name);
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
    }
  }, 600_000);

  it('a kubectl edit (automation paused) is out of sync in both, and the console names kubectl-edit', async () => {
    const cluster = 'nonprod';
    const name = 'edge-gateway-staging';
    const policy = (argoApp(cluster, name).spec as Json).syncPolicy;
    // the whole syncPolicy replaced (a merge patch would keep `enabled: false` when putting the prior one back)
    const patchPolicy = (p: unknown) =>
      kubectl(cluster, [
        ...['-n', 'argocd', 'patch', 'application', name, '--type', 'json', '-p'],
        JSON.stringify([{ op: 'replace', path: '/spec/syncPolicy', value: p }]),
      ]);
    await waitForArgoSynced(cluster, name);
    patchPolicy({ automated: { enabled: false } });
    try {
      kubectlEdit(cluster, 'deployment/edge-gateway', 'staging', { spec: { replicas: 4 } });
      await waitFor(
        'Argo CD reports the Deployment OutOfSync',
        async () => {
          argoRefresh(cluster, name);
          return argoOutOfSync(cluster, name).includes('apps/Deployment/staging/edge-gateway');
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
    await waitForArgoSynced(cluster, name);
    expect(
      Number(
        kubectl(cluster, ['-n', 'staging', 'get', 'deployment', 'edge-gateway', '-o', 'jsonpath={.spec.replicas}']),
      ),
    ).toBe(2);
  }, 300_000);
});
