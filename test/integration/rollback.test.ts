// Issue 16's rollback against the real sandbox: from an earlier release, a developer opens a pull request on the
// forge (Gitea) whose branch has the dev overlay exactly as it was at that release — never a push to main; the
// intent is evidence before the forge is asked and the outcome names the pull request. A viewer may not; a
// rollback to what main already has is refused (nothing to roll back); with Git/the forge down the answer is a
// clear 502 and nothing is recorded or opened.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReleasesResponse, RollbackResponse } from '../../src/api/schemas.ts';
import { waitFor } from '../../sandbox/procs.ts';
import {
  closePullRequest,
  changedBetween,
  readRepoFileAt,
  commitAndPush,
  forgeApi,
  forgeBranchHead,
  makeForgeReachable,
  makeForgeUnreachable,
  readRepoFile,
  sandboxForge,
  waitForKustomizationRevision,
  writeRepoFile,
} from '../../sandbox/scenario.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { RECORDER_ON, startTestConsole } from '../support/console.ts';

const CLUSTER = 'nonprod';
const KS = 'digital-human-dev';
const APP = `${CLUSTER}/flux-system/kustomization/${KS}`;
const OVERLAY = 'overlays/dev/kustomization.yaml';

let con: Awaited<ReturnType<typeof startTestConsole>>;
let developer: Signed;
let before: string;
let beforeSha: string;
const opened: number[] = [];

const releases = async () => {
  const r = await as(con.admin, con.url, `/api/apps/${APP}/releases`);
  if (r.status !== 200) throw new Error(`releases: ${r.status} ${r.text}`);
  return r.body as ReleasesResponse;
};
const rollback = (who: Signed, sha: string, reason = 'the new settings break sessions') =>
  as(who, con.url, `/api/apps/${APP}/releases/${sha}/rollback`, { method: 'POST', body: { reason } });

beforeAll(async () => {
  con = await startTestConsole({ ...RECORDER_ON, CONSOLE_VERIFICATION_INTERVAL_S: '600' });
  developer = await signIn(con.url, 'developer');
  before = readRepoFile(OVERLAY);
  // the release running now is recorded at start-up: the one to roll back to — once its change state is (a
  // rollback needs it; a release superseded by the previous suite's last commit before that never gets one)
  await waitFor(
    'the current dev release recorded',
    async () => {
      const r = (await releases()).releases[0];
      beforeSha = r?.states.find((s) => s.name === 'change')?.seq !== undefined ? r.sha : '';
      return !!beforeSha;
    },
    { timeoutMs: 120_000, intervalMs: 1000 },
  );
}, 180_000);

afterAll(async () => {
  try {
    for (const n of opened) await closePullRequest(n).catch(() => undefined);
    const now = readRepoFile(OVERLAY);
    if (now !== before) {
      const sha = commitAndPush('Restore the dev overlay (rollback test)', (w) => writeRepoFile(w, OVERLAY, before));
      await waitForKustomizationRevision(CLUSTER, KS, sha, 180_000);
    }
  } finally {
    await con?.close();
  }
}, 240_000);

describe('rollback to an earlier release (issue 16)', () => {
  it('opens a pull request whose branch has the overlay as it was; main is untouched; intent and outcome are evidence', async () => {
    // a change that prunes nothing (a generated ConfigMap's new name would prune the old one, which the console's
    // admission policy holds for an approved preview)
    const sha = commitAndPush('Two TTS gateways in dev (rollback test)', (w) =>
      writeRepoFile(
        w,
        OVERLAY,
        readFileSync(join(w, OVERLAY), 'utf8').replace(
          '  - name: tts-gateway\n    count: 1\n',
          '  - name: tts-gateway\n    count: 2\n',
        ),
      ),
    );
    expect(readRepoFile(OVERLAY)).toContain('  - name: tts-gateway\n    count: 2\n');
    await waitForKustomizationRevision(CLUSTER, KS, sha);
    await waitFor('the new release recorded', async () => (await releases()).releases[0]?.sha === sha, {
      timeoutMs: 120_000,
      intervalMs: 1000,
    });

    // a viewer may not; the reason is required
    expect((await rollback(await signIn(con.url, 'viewer'), beforeSha)).status).toBe(403);
    const noReason = await rollback(developer, beforeSha, ' ');
    expect(noReason.status).toBe(400);

    const mainBefore = await forgeBranchHead('main');
    const r = await rollback(developer, beforeSha);
    expect(r.status, r.text).toBe(200);
    const body = r.body as RollbackResponse;
    opened.push(body.pullRequest.number);
    expect(body.plan).toMatchObject({ branch: 'main', path: 'overlays/dev', targetSha: beforeSha, fromSha: sha });
    expect(body.plan.files).toEqual([{ path: OVERLAY, change: 'restore' }]);
    // what else changed in the repository since that release (other tests' files, say) is named, never reverted:
    // exactly what Git says differs outside the app's path
    expect([...body.plan.outside].sort()).toEqual(
      changedBetween(beforeSha, sha).filter((f) => f !== OVERLAY && !f.startsWith('overlays/dev/')),
    );
    // main is untouched: the change waits for review on its own branch
    expect(await forgeBranchHead('main')).toBe(mainBefore);
    // the overlay exactly as it was at the release rolled back to (main may have moved on before this file began)
    expect(readRepoFile(OVERLAY, body.pullRequest.branch)).toBe(readRepoFileAt(OVERLAY, beforeSha));

    const forge = sandboxForge();
    const pr = await forgeApi(
      'developer',
      'GET',
      `/repos/${forge.repo.owner}/${forge.repo.name}/pulls/${body.pullRequest.number}`,
    );
    expect(pr.status).toBe(200);
    expect(pr.json).toMatchObject({ state: 'open', title: `Roll back ${KS} (dev) to ${beforeSha.slice(0, 7)}` });
    expect(String(pr.json.body)).toContain('the new settings break sessions');
    expect(String(pr.json.body)).toContain(`evidence #${body.intentSeq}`);

    const ev = await as(
      con.admin,
      con.url,
      `/api/evidence?app=${encodeURIComponent(APP)}&type=release.rollback-requested`,
    );
    const intent = (ev.body.events as Array<{ seq: number; actor: string; data: Record<string, unknown> }>)[0];
    expect(intent).toMatchObject({ seq: body.intentSeq, actor: 'developer' });
    expect(intent?.data).toMatchObject({ targetSha: beforeSha, reason: 'the new settings break sessions' });
    const done = await as(con.admin, con.url, `/api/evidence?app=${encodeURIComponent(APP)}&type=action.completed`);
    const outcome = (done.body.events as Array<{ data: Record<string, unknown> }>).find(
      (e) => e.data.intentSeq === body.intentSeq,
    );
    expect(outcome?.data).toMatchObject({ pullRequest: { number: body.pullRequest.number } });

    // rolling back to what main has now: nothing to do, said so
    const same = await rollback(developer, sha);
    expect(same.status).toBe(409);
    expect(same.text).toMatch(/nothing to roll back/);
  }, 300_000);

  it('a refused rollback is one action.refused naming the reason, never the intent; bad input records nothing', async () => {
    const oncall = await signIn(con.url, 'oncall');
    const since = new Date().toISOString();
    const events = async (type: string) =>
      (await as(con.admin, con.url, `/api/evidence?app=${encodeURIComponent(APP)}&type=${type}&limit=1000`)).body
        .events as Array<{ time: string; actor: string; data: Record<string, unknown> }>;
    const intents = (await events('release.rollback-requested')).length;
    // the release running now: its overlay is what main has, so there is nothing to roll back
    const current = (await releases()).releases[0]?.sha as string;
    expect(current).toMatch(/^[0-9a-f]{40}$/);
    for (let i = 0; i < 3; i++) {
      const r = await rollback(oncall, current);
      expect(r.status, r.text).toBe(409);
      expect(r.text).toMatch(/nothing to roll back/);
    }
    const never = 'f'.repeat(40);
    const unknown = await rollback(oncall, never);
    expect(unknown.status, unknown.text).toBe(404);
    expect(unknown.text).toMatch(/no recorded release/);
    // bad input: said, not recorded
    expect((await rollback(oncall, current, ' ')).status).toBe(400);
    expect((await rollback(oncall, 'HEAD')).status).toBe(400);

    expect((await events('release.rollback-requested')).length).toBe(intents);
    const refused = (await events('action.refused')).filter(
      (e) => e.actor === 'oncall' && e.data.action === 'release.rollback-requested' && e.time >= since,
    );
    // three refusals of the same rollback within a minute: one record (counted, not appended)
    expect(refused.map((e) => `${String(e.data.targetSha)} ${String(e.data.refusal)}`).sort()).toEqual(
      [`${current} Conflict`, `${never} NotFound`].sort(),
    );
    expect(refused.find((e) => e.data.targetSha === current)?.data.reason).toMatch(/nothing to roll back$/);
  }, 120_000);

  it('Git and the forge down: a clear 502, nothing recorded, nothing opened', async () => {
    const count = async () =>
      ((await as(con.admin, con.url, `/api/evidence?type=release.rollback-requested`)).body.events as unknown[]).length;
    const n = await count();
    await makeForgeUnreachable();
    try {
      const r = await rollback(developer, beforeSha);
      expect(r.status).toBe(502);
      expect(r.text).toMatch(/cannot read/);
    } finally {
      await makeForgeReachable();
    }
    expect(await count()).toBe(n);
  }, 120_000);
});
