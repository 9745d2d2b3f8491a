// Argo CD's `Prune=confirm` end to end with its real controller (issue 24): an object removed from Git waits for
// `argocd.argoproj.io/deletion-approved`. Someone who writes that annotation by hand gets nothing pruned (the
// console's admission policy denies the controller's DELETE: the uid is not listed). Through the console, a
// developer's prune preview approved by a reviewer lists the uid and writes the annotation while Argo CD waits,
// and Argo CD prunes exactly that object; the evidence chain holds each step.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { kubectl } from '../../sandbox/state.ts';
import { argoApp, argoRefresh, argoTerminateOp, writeRepoFile } from '../../sandbox/scenario.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { startTestConsole } from '../support/console.ts';
import { ownEstate, type Estate } from '../support/own-estate.ts';

// the file's own estate: a repository with the app's directory, an Argo CD Application (`confirm`, Prune=confirm)
// into a governed namespace of its own, mapped to staging
const DIR = 'confirm';
const KEEP = 'confirm-keep';
const KEPT = [1, 2, 3, 4, 5].map((i) => `${KEEP}-${i}`);
const GONE = 'confirm-gone';
const DENIED = /needs an approved prune preview in the GitOps console/;

type Json = Record<string, unknown>;
type Preview = {
  id: string;
  status: string;
  statusReason: string | null;
  plan: string;
  deletedBy?: string;
  candidates: Array<{ ref: { name: string; kind: string } }>;
};

let estate: Estate;
let CLUSTER: string;
let APP_NAME: string;
let APP: string;
let con: Awaited<ReturnType<typeof startTestConsole>>;
let developer: Signed;
let reviewer: Signed;

const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  probe: "confirm"\n`;
const live = (name: string) =>
  kubectl(CLUSTER, ['-n', estate.namespace, 'get', 'configmap', name, '--ignore-not-found', '-o', 'name']).trim() !==
  '';
const opState = () =>
  ((argoApp(CLUSTER, APP_NAME).status as Json | undefined)?.operationState ?? {}) as {
    phase?: string;
    message?: string;
    startedAt?: string;
  };
const waitingForConfirmation = () =>
  opState().phase === 'Running' && /waiting for pruning confirmation of \/ConfigMap\//.test(opState().message ?? '');

async function evidence(type: string): Promise<EvidenceEvent[]> {
  const r = await as(con.admin, con.url, `/api/evidence?type=${type}&limit=1000`);
  return (r.body as { events: EvidenceEvent[] }).events;
}

/**
 * Starts a sync with prune, as `argocd app sync --prune` does: the Application's operation field, with the app's
 * sync options (Prune=confirm is one: an operation without it would not wait for the confirmation).
 */
function startSync(): void {
  const syncOptions = ((argoApp(CLUSTER, APP_NAME).spec as Json).syncPolicy as { syncOptions?: string[] }).syncOptions;
  kubectl(CLUSTER, [
    ...['-n', 'argocd', 'patch', 'application', APP_NAME, '--type', 'merge', '-p'],
    JSON.stringify({
      operation: {
        initiatedBy: { username: 'sandbox-scenario' },
        sync: { prune: true, syncStrategy: { hook: {} }, ...(syncOptions ? { syncOptions } : {}) },
      },
    }),
  ]);
}

beforeAll(async () => {
  // five that stay and one that goes: a sixth of the app, under the preview's fraction limit (a quarter)
  estate = await ownEstate({
    name: 'prune-confirm',
    env: 'staging',
    governed: true,
    files: {
      [`${DIR}/keep.yaml`]: KEPT.map(cm).join('---\n'),
      [`${DIR}/gone.yaml`]: cm(GONE),
    },
    argoApps: [
      {
        name: 'confirm',
        path: DIR,
        syncPolicy: { automated: { prune: true, selfHeal: false }, syncOptions: ['Prune=confirm'] },
      },
    ],
  });
  CLUSTER = estate.cluster;
  APP_NAME = estate.application('confirm');
  APP = estate.argoAppId('confirm');
  con = await startTestConsole(
    {},
    {
      accounts: {
        users: { 'staging-developer': ['developer@nonprod/staging'], 'staging-reviewer': ['reviewer@nonprod/staging'] },
      },
    },
  );
  developer = await signIn(con.url, 'staging-developer');
  reviewer = await signIn(con.url, 'staging-reviewer');
  expect([...KEPT, GONE].every(live)).toBe(true);
}, 300_000);

afterAll(async () => {
  await con?.close();
  await estate?.teardown();
}, 120_000);

describe('Argo CD Prune=confirm with its real controller', () => {
  it('a hand-written deletion-approved prunes nothing; the console’s approved preview does, exactly the removed object', async () => {
    estate.push(`Remove ${GONE} from Git`, (w) => {
      writeRepoFile(w, `${DIR}/gone.yaml`, '');
    });
    // Argo CD's automated sync waits for the confirmation
    await waitFor(
      'Argo CD waits for pruning confirmation',
      async () => {
        argoRefresh(CLUSTER, APP_NAME);
        return waitingForConfirmation();
      },
      { timeoutMs: 180_000, intervalMs: 2000 },
    );

    // 1. someone confirms by hand (the annotation Argo CD's UI writes): Argo CD prunes, the apiserver denies it
    kubectl(CLUSTER, [
      ...['-n', 'argocd', 'annotate', '--overwrite', 'application', APP_NAME],
      // (Argo CD: confirmed when not older than the operation's start, which it keeps to the second)
      `argocd.argoproj.io/deletion-approved=${new Date(Math.floor(Date.now() / 1000) * 1000).toISOString()}`,
    ]);
    // (Argo CD 3.x retries the failed sync: its phase stays Running, the denial is in its results)
    const denied = () => DENIED.test(JSON.stringify((argoApp(CLUSTER, APP_NAME).status as Json).operationState ?? {}));
    await waitFor('the hand-confirmed prune is denied', async () => denied(), {
      timeoutMs: 120_000,
      intervalMs: 1000,
    }).catch((e: unknown) => {
      throw new Error(`${String(e)}; Argo CD: ${JSON.stringify(argoApp(CLUSTER, APP_NAME).status)}`.slice(0, 4000));
    });
    expect(live(GONE)).toBe(true);

    // 2. on-call stops the retries; a new sync waits for confirmation again; the developer previews the prune, a
    //    reviewer approves
    await argoTerminateOp(CLUSTER, APP_NAME, 120_000);
    expect(live(GONE)).toBe(true);
    await new Promise((r) => setTimeout(r, 1500)); // the next operation starts in a later second than that approval
    startSync();
    await waitFor('the new sync waits for confirmation', async () => waitingForConfirmation(), {
      timeoutMs: 120_000,
      intervalMs: 1000,
    }).catch((e: unknown) => {
      const o = argoApp(CLUSTER, APP_NAME);
      throw new Error(
        `${String(e)}; Argo CD: ${JSON.stringify({ operation: o.operation, annotations: (o.metadata as Json).annotations, op: (o.status as Json).operationState })}`.slice(
          0,
          4000,
        ),
      );
    });
    let preview: Preview | undefined;
    await waitFor(
      'a prune preview with the removed object',
      async () => {
        const r = await as(developer, con.url, `/api/apps/${APP}/prune-previews`, { method: 'POST' });
        if (r.status !== 200) return false;
        preview = (r.body as { preview: Preview }).preview;
        return preview.candidates.some((c) => c.ref.name === GONE);
      },
      { timeoutMs: 120_000, intervalMs: 3000 },
    );
    expect(preview?.plan).toBe('ready');
    expect(preview?.candidates.map((c) => c.ref.name)).toEqual([GONE]);
    const id = preview?.id as string;
    // the developer cannot approve their own request
    expect(
      (await as(developer, con.url, `/api/prune-previews/${id}/approve`, { method: 'POST', body: {} })).status,
    ).toBe(403);
    const r = await as(reviewer, con.url, `/api/prune-previews/${id}/approve`, {
      method: 'POST',
      body: { comment: 'gone from Git on purpose' },
    });
    expect(r.status, r.text).toBe(200);
    // Argo CD prunes it: exactly that object
    await waitFor('Argo CD pruned the approved object', async () => !live(GONE), {
      timeoutMs: 120_000,
      intervalMs: 1000,
    });
    expect(KEPT.every(live)).toBe(true);
    await waitFor('the sync succeeded', async () => opState().phase === 'Succeeded', {
      timeoutMs: 120_000,
      intervalMs: 1000,
    });
    // evidence: the approval, the uid listed for the controller, the confirmation written for Argo CD
    const approved = (await evidence('prune.approved')).find((e) => e.data.previewId === id);
    const stamp = (await evidence('prune.stamp')).find((e) => e.data.previewId === id && !e.data.withdrawn);
    const confirmed = (await evidence('prune.deletion-approved')).find((e) => e.data.previewId === id);
    expect(approved, 'prune.approved').toBeDefined();
    expect(stamp, 'prune.stamp').toBeDefined();
    expect(confirmed, 'prune.deletion-approved').toBeDefined();
    expect(approved?.seq).toBeLessThan(stamp?.seq ?? 0);
    expect(confirmed?.data).toMatchObject({ application: `argocd/${APP_NAME}` });
    expect((await evidence('prune.delete')).filter((e) => e.data.previewId === id)).toHaveLength(0);
  }, 600_000);
});
