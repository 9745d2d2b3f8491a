// An end whose write-back went to Git but whose restore failed (the apiserver refused the connection) leaves the
// freeze holding; on-call ends it again: the earlier pull request stands and no second one is opened (the chaos
// matrix's `freeze-end × apiserver-crash @ after-intent` found two). A changed live value is written back anew.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  appOf,
  FakeFlux,
  LIVE_CHANGE_ID,
  oncall,
  oneLiveChange,
  replicaOf,
} from '../../../test/support/freeze-fakes.ts';
import { SqliteEvidenceStore } from '../evidence/sqlite-store.ts';
import type { EvidenceStore } from '../evidence/store.ts';
import type { FreezeServiceDeps } from './service.ts';

const dir = mkdtempSync(join(tmpdir(), 'freeze-end-retry-'));
const opened: EvidenceStore[] = [];
afterAll(async () => {
  for (const s of opened) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

type WriteBackReq = Parameters<NonNullable<FreezeServiceDeps['writeBack']>>[1];

function setup(diff: FreezeServiceDeps['diff'] = oneLiveChange, forgeDownFor = 0) {
  const flux = new FakeFlux();
  flux.add('a');
  const ev = SqliteEvidenceStore.open(dir, `e-${Math.random().toString(36).slice(2)}.sqlite`);
  opened.push(ev);
  const calls: WriteBackReq[] = [];
  const writeBack = (async (_a, req) => {
    calls.push(req);
    const base = {
      branch: req.branch,
      commit: 'c'.repeat(40),
      placements: [{ changeId: LIVE_CHANGE_ID, placed: true }],
    };
    // the branch pushed, the pull request not opened (the forge's API did not answer)
    if (calls.length <= forgeDownFor) return { ...base, forgeError: 'the forge did not answer' };
    return { ...base, pullRequest: { number: calls.length, url: `https://forge/pulls/${calls.length}` } };
  }) as NonNullable<FreezeServiceDeps['writeBack']>;
  const app = appOf('a', { kind: 'GitRepository', url: 'https://git.example.com/team/app.git', path: 'overlay' });
  const { service } = replicaOf({ name: 'console', ev, flux, apps: [app], writeBack, diff });
  return { flux, service, calls };
}

describe('ending a freeze again after its restore failed', () => {
  it('the same changes: the earlier pull request stands, none opened again; the restore goes through', async () => {
    const { flux, service, calls } = setup();
    const f = await service.create(oncall, { cluster: 'c', app: appOf('a').id, reason: 'incident', minutes: 10 });
    flux.refuseConnection.add('a');
    const err = (await service
      .end(f.id, oncall, [{ change: LIVE_CHANGE_ID, action: 'write-back' }])
      .catch((e: unknown) => e)) as { status?: number };
    expect(err.status).toBe(502);
    expect(calls).toHaveLength(1);
    expect(flux.suspended('a')).toBe(true);
    flux.refuseConnection.delete('a');
    const ended = await service.end(f.id, oncall, [{ change: LIVE_CHANGE_ID, action: 'write-back' }]);
    expect(ended.status).toBe('ended');
    expect(calls).toHaveLength(1);
    expect(flux.suspended('a')).toBe(false);
    expect(ended.doc.writeBack?.map((w) => w.pullRequest?.url)).toEqual(['https://forge/pulls/1']);
  });

  it('an earlier write-back whose pull request the forge did not open is made again: the retry opens it', async () => {
    const { flux, service, calls } = setup(oneLiveChange, 1);
    const f = await service.create(oncall, { cluster: 'c', app: appOf('a').id, reason: 'incident', minutes: 10 });
    flux.refuseConnection.add('a');
    await service.end(f.id, oncall, [{ change: LIVE_CHANGE_ID, action: 'write-back' }]).catch(() => undefined);
    expect(calls).toHaveLength(1);
    flux.refuseConnection.delete('a');
    const ended = await service.end(f.id, oncall, [{ change: LIVE_CHANGE_ID, action: 'write-back' }]);
    expect(ended.status).toBe('ended');
    expect(calls).toHaveLength(2);
    expect(ended.doc.writeBack?.map((w) => w.pullRequest?.url)).toContain('https://forge/pulls/2');
  });
});
