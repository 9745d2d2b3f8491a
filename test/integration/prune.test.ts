// Prune previews against the real sandbox, on the file's own estate on prod (test/support/prod-probe-estate.ts):
// the seed's prod service from its own repository, Flux `prune: false` like the seed's prod — objects removed from
// Git leave its inventory and stay live, so the console is the one that deletes them (after a second person
// approved). Three probe ConfigMaps are in the first commit and removed by the second; the estate's prod render is
// emptied and broken later. As in a monorepo, someone else commits to the same repository every 20 s (outside the
// app's path: the estate's busy() committer) for the whole file. The estate is deleted at the end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { writeRepoFile } from '../../sandbox/scenario.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { startTestConsole } from '../support/console.ts';
import { OVERLAY, prodProbeEstate, type ProdProbeEstate } from '../support/prod-probe-estate.ts';

const PLAIN = 'prune-probe-a';
const PROTECTED = 'prune-probe-b';
const STALE = 'prune-probe-c';

let probes: ProdProbeEstate | undefined;
let busy: { commits: string[]; stop(): void } | undefined;
let con: Awaited<ReturnType<typeof startTestConsole>>;
let developer: Signed;
let reviewer: Signed;
let reviewer2: Signed;
let reviewer3: Signed;

/** the estate (made in beforeAll) */
const own = () => probes as ProdProbeEstate;
const live = (name: string): boolean => own().isLive(name);

const previewsPath = () => `/api/apps/${own().app}/prune-previews`;

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
  const r = await as(who, con.url, previewsPath(), { method: 'POST' });
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

/** Until the console's render sees `sha` (the GitRepository asked to fetch now). */
const sourceAt = (sha: string) => own().consoleAt(con.url, con.admin, sha);

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
  probes = await prodProbeEstate({
    name: 'prune',
    template: 'digital-human',
    probes: [PLAIN, { name: PROTECTED, annotations: { 'kustomize.toolkit.fluxcd.io/prune': 'disabled' } }, STALE],
  });
  await sourceAt(probes.removed);
  busy = probes.estate.busy();
}, 600_000);

afterAll(async () => {
  busy?.stop();
  try {
    await probes?.teardown();
  } finally {
    await con?.close();
  }
}, 300_000);

describe('prune previews (an app on prod, Flux prune: false: the console deletes)', () => {
  let first: Preview;

  it('a preview lists the objects removed from Git, protected ones marked, nothing deleted yet', async () => {
    const { preview, viewer } = await request(developer);
    first = preview;
    // the plan's reasons in the message: an unknown plan says why (a render, a list, a cluster not connected)
    expect(preview.status, preview.reasons.join('; ')).toBe('pending');
    expect(preview.plan, preview.reasons.join('; ')).toBe('ready');
    // exactly our probes (the estate holds nothing else stale)
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
    own().kubectl(['annotate', '--overwrite', 'configmap', STALE, `probe/touched=${Date.now()}`]);
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
    // someone else's commit lands in the same repository before the approvals: the app renders the same there, so
    // the preview stands (re-checked at that revision, and the approval's record says so)
    const elsewhere = own().estate.push('another team: unrelated change', (w) =>
      writeRepoFile(w, 'unrelated/other-team.txt', `${Date.now()}\n`),
    );
    await sourceAt(elsewhere);
    const answers = await Promise.all(
      [reviewer, reviewer2].map((who) =>
        as(who, con.url, `/api/prune-previews/${preview.id}/approve`, { method: 'POST', body: { comment: 'ok' } }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    // the loser was refused before any intent: one prune.approved, and one action.refused saying why
    const mine = (es: EvidenceEvent[]) => es.filter((e) => e.data.previewId === preview.id);
    const approved = mine(await evidence('prune.approved'));
    expect(approved).toHaveLength(1);
    const recheck = approved[0]?.data.recheckedAt as { revision: string } | undefined;
    expect(recheck, 'the approval records the re-check at the newer revision').toBeDefined();
    expect(
      own()
        .estate.atOrAfter(elsewhere)
        .some((c) => recheck?.revision.endsWith(c)),
    ).toBe(true);
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
      (await as(con.admin, con.url, `/api/evidence?app=${encodeURIComponent(own().app)}&limit=500`)).body as {
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
    const empty = own().estate.push('prune test: empty prod render', (w) => {
      before = readFileSync(join(w, OVERLAY), 'utf8');
      writeRepoFile(w, OVERLAY, 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n');
    });
    await sourceAt(empty);
    const { preview } = await request(developer);
    expect(preview.plan).toBe('needs-override');
    expect(preview.reasons.join(' ')).toMatch(/render is empty/);
    expect(preview.requiredApprovals).toBe(2);
    expect(preview.confirmation).toMatch(new RegExp(`^delete \\d+ objects? of ${own().estate.kustomization()}$`));
    // an approval without the typed confirmation is refused
    const r = await as(reviewer, con.url, `/api/prune-previews/${preview.id}/approve`, {
      method: 'POST',
      body: { comment: 'sure' },
    });
    expect(r.status).toBe(400);
    const broken = own().estate.push('prune test: broken prod render', (w) =>
      writeRepoFile(w, OVERLAY, before.replace('  - ../../base\n', '  - ../../base\n  - missing.yaml\n')),
    );
    await sourceAt(broken);
    // the pending override at the empty render: its source moved to a render that fails, so the approval is void
    // (or void first because a candidate changed: the HorizontalPodAutoscaler's status moves its resourceVersion;
    // the unit tests hold the render-failure path on its own)
    const late = await as(reviewer, con.url, `/api/prune-previews/${preview.id}/approve`, {
      method: 'POST',
      body: { comment: 'sure', confirmation: preview.confirmation },
    });
    expect(late.status, late.text).toBe(409);
    expect(late.text).toMatch(
      /approval void: (\S+ changed since the preview|the app's source moved to \S+ since the preview, and rendering it failed)/,
    );
    const unknown = (await request(developer)).preview;
    expect(unknown.plan).toBe('unknown');
    expect(unknown.candidates).toEqual([]);
    expect(unknown.status).toBe('void');
    // nothing was deleted: the app's objects are live (the estate is deleted after, no restore)
    expect(own().kubectl(['get', 'deployment', 'render-worker', '-o', 'name']).trim()).toBe(
      'deployment.apps/render-worker',
    );
  });
});
