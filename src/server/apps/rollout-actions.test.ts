// Rollout control when the apiserver does not answer a write (the chaos matrix's `rollout-control ×
// apiserver-hang @ after-intent`): every write names the Rollout's resourceVersion, and an unanswered one is settled
// before the outcome: applied late ⇒ completed; fenced before it could apply ⇒ failed, and the held write, when it
// comes, changes nothing. A controller's status write in between is outlasted while the Rollout stands still.
// (In-memory apiserver with managedFields; real SQLite evidence store.)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appOf, quietLog } from '../../../test/support/freeze-fakes.ts';
import { EvidenceRecorder } from '../evidence/index.ts';
import { SqliteEvidenceStore } from '../evidence/sqlite-store.ts';
import type { EvidenceStore } from '../evidence/store.ts';
import { KubeError, type ClusterConnection } from '../kube/connection.ts';
import { controlRollout, wroteSince } from './rollout-actions.ts';

type Obj = Record<string, unknown>;
const dir = mkdtempSync(join(tmpdir(), 'rollout-actions-'));
const opened: EvidenceStore[] = [];
afterAll(async () => {
  for (const e of opened) await e.close();
  rmSync(dir, { recursive: true, force: true });
});

/** One Rollout paused at step 1 of a canary, behind an apiserver that can hold a PATCH and apply it later. */
class FakeRollouts {
  rv = 10;
  hangNext = false;
  late: Array<() => void> = [];
  /** the apiserver continues before the next read: the held write is applied first */
  continueOnRead = false;
  /** after each console write the controller steps on: the next step, and the console's managedFields entry gone */
  controllerStepsOn = false;
  obj: Obj = {
    metadata: { name: 'web', namespace: 'shop', uid: 'u1', resourceVersion: '10', managedFields: [] },
    spec: { paused: true, strategy: { canary: { steps: [{ setWeight: 20 }, { pause: {} }, { setWeight: 50 }] } } },
    status: {
      phase: 'Paused',
      currentStepIndex: 1,
      currentPodHash: 'new',
      stableRS: 'old',
      pauseConditions: [{ reason: 'CanaryPauseStep' }],
    },
  };
  /** the controller writes its status (a new resourceVersion) */
  statusWrite(): void {
    (this.obj.metadata as Obj).resourceVersion = String(++this.rv);
  }
  private apply(url: string, body: Obj): Obj {
    const meta = this.obj.metadata as Obj;
    const want = (body.metadata as Obj | undefined)?.resourceVersion;
    if (want !== undefined && want !== meta.resourceVersion) throw new KubeError('conflict', 'c', 409);
    const status = url.includes('/status');
    for (const [k, v] of Object.entries(body)) {
      if (k === 'metadata') {
        const ann = { ...((meta.annotations as Obj | undefined) ?? {}) };
        for (const [ak, av] of Object.entries(((v as Obj).annotations as Obj | undefined) ?? {}))
          if (av === null) delete ann[ak];
          else ann[ak] = av;
        meta.annotations = ann;
      } else if (k === (status ? 'status' : 'spec')) {
        const cur = this.obj[k] as Obj;
        for (const [fk, fv] of Object.entries(v as Obj))
          if (fv === null) delete cur[fk];
          else cur[fk] = fv;
      }
    }
    meta.resourceVersion = String(++this.rv);
    const fields = (meta.managedFields as Obj[]).filter((m) => (m.subresource ?? '') !== (status ? 'status' : ''));
    fields.push({
      manager: 'gitops-console',
      operation: 'Update',
      ...(status ? { subresource: 'status' } : {}),
      time: new Date().toISOString(),
    });
    meta.managedFields = fields;
    if (this.controllerStepsOn && status) {
      const st = this.obj.status as Obj;
      st.currentStepIndex = Number(st.currentStepIndex) + 2;
      st.pauseConditions = [{ reason: 'CanaryPauseStep' }];
      meta.managedFields = [{ manager: 'rollouts-controller', operation: 'Update', subresource: 'status' }];
      meta.resourceVersion = String(++this.rv);
    }
    return structuredClone(this.obj);
  }
  conn(): ClusterConnection {
    const respond = (f: () => Obj) => {
      try {
        return { status: 200, headers: {}, body: JSON.stringify(f()) };
      } catch (e) {
        if (e instanceof KubeError) return { status: e.status, headers: {}, body: '{}' };
        throw e;
      }
    };
    const c = {
      request: async (method: string, url: string, opts: { body?: string } = {}) => {
        if (method === 'GET') {
          if (this.continueOnRead) this.late.splice(0).forEach((f) => f());
          return { status: 200, headers: {}, body: JSON.stringify(this.obj) };
        }
        const body = JSON.parse(opts.body ?? '{}') as Obj;
        if (this.hangNext) {
          this.hangNext = false;
          this.late.push(() => respond(() => this.apply(url, body)));
          throw new KubeError('request timed out after 10000 ms', 'c', 0, 'ETIMEDOUT');
        }
        return respond(() => this.apply(url, body));
      },
      json: async (method: string, url: string, opts: { body?: string } = {}) => {
        const r = await c.request(method, url, opts);
        if (r.status !== 200) throw new KubeError(`status ${r.status}`, 'c', r.status);
        return JSON.parse(r.body) as Obj;
      },
      httpError: (r: { status: number }, what: string) => new KubeError(`${what}: ${r.status}`, 'c', r.status),
    };
    return c as unknown as ClusterConnection;
  }
}

function setup() {
  const ev = SqliteEvidenceStore.open(dir, `e-${Math.random().toString(36).slice(2)}.sqlite`);
  opened.push(ev);
  const recorder = new EvidenceRecorder(ev, quietLog);
  const fake = new FakeRollouts();
  const app = {
    ...appOf('shop'),
    inventory: [{ group: 'argoproj.io', kind: 'Rollout', namespace: 'shop', name: 'web' }],
  };
  const outcomes = async () =>
    (await ev.list({ limit: 100 })).filter((e) => e.type.startsWith('action.')).map((e) => e.type);
  const promote = (settle = {}) =>
    controlRollout(app as never, { namespace: 'shop', name: 'web' }, 'promote', 'chaos', 'oncall', {
      recorder,
      conn: fake.conn(),
      settle: { deadlineMs: 5000, pause: async () => undefined, ...settle },
    });
  return { fake, promote, outcomes };
}
const step = (f: FakeRollouts) => ({
  paused: (f.obj.spec as Obj).paused,
  pauseConditions: (f.obj.status as Obj).pauseConditions,
});

describe('rollout control settles a write the cluster never answered', () => {
  it('applied late, before the read-back: completed, and the Rollout promoted once', async () => {
    const { fake, promote, outcomes } = setup();
    fake.hangNext = true;
    fake.continueOnRead = true;
    const done = await promote();
    expect(done.patches).toBe(2);
    expect(step(fake)).toEqual({ paused: false, pauseConditions: undefined });
    expect(await outcomes()).toEqual(['action.completed']);
  });

  it('applied late and the controller moved on (the console’s managedFields entry gone): completed, not fenced', async () => {
    const { fake, promote, outcomes } = setup();
    fake.hangNext = true;
    fake.continueOnRead = true;
    fake.controllerStepsOn = true;
    (fake.obj.spec as Obj).paused = false; // a pause step of the canary: only its status write
    const done = await promote();
    expect(done.patches).toBe(1);
    expect((fake.obj.status as Obj).currentStepIndex).toBe(3);
    expect(await outcomes()).toEqual(['action.completed']);
  });

  it('not applied: fenced, recorded failed; the held write, when it comes, is refused (nothing changed)', async () => {
    const { fake, promote, outcomes } = setup();
    fake.hangNext = true;
    await expect(promote()).rejects.toMatchObject({ status: 502, code: 'ClusterUnreachable' });
    fake.late.splice(0).forEach((f) => f());
    expect(step(fake)).toEqual({ paused: true, pauseConditions: [{ reason: 'CanaryPauseStep' }] });
    expect(((fake.obj.metadata as Obj).annotations as Obj)['gitops-console.dev/fence']).toBeUndefined();
    expect(await outcomes()).toEqual(['action.failed']);
  });

  it('a controller status write in between: the write is made again at the new version while the step is the same', async () => {
    const { fake, promote, outcomes } = setup();
    fake.statusWrite();
    await promote();
    expect(step(fake)).toEqual({ paused: false, pauseConditions: undefined });
    expect(await outcomes()).toEqual(['action.completed']);
  });

  it('wroteSince reads the console’s managedFields entry of the right part, at or after the start', () => {
    const t0 = Date.parse('2026-12-07T08:00:00.400Z');
    const live = (sub: string | undefined, time: string) => ({
      metadata: {
        managedFields: [{ manager: 'gitops-console', operation: 'Update', ...(sub ? { subresource: sub } : {}), time }],
      },
    });
    expect(wroteSince(live('status', '2026-12-07T08:00:00Z'), 'status', t0)).toBe(true);
    expect(wroteSince(live('status', '2026-12-07T07:59:59Z'), 'status', t0)).toBe(false);
    expect(wroteSince(live(undefined, '2026-12-07T08:00:01Z'), 'status', t0)).toBe(false);
    expect(wroteSince(live(undefined, '2026-12-07T08:00:01Z'), 'spec', t0)).toBe(true);
    // an entry the Rollout had before the write (an earlier write in the same second) is not this write's
    const earlier = live(undefined, '2026-12-07T08:00:00Z');
    expect(wroteSince(live(undefined, '2026-12-07T08:00:00Z'), 'spec', t0, earlier)).toBe(false);
    expect(wroteSince(live(undefined, '2026-12-07T08:00:01Z'), 'spec', t0, earlier)).toBe(true);
    // a fence writes as its own manager: never taken for the console's write
    const fenced = {
      metadata: {
        managedFields: [{ manager: 'gitops-console-fence', operation: 'Update', time: '2026-12-07T08:00:01Z' }],
      },
    };
    expect(wroteSince(fenced, 'spec', t0)).toBe(false);
  });
});
