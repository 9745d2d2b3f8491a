// The change state and image automation: a commit is recorded at once; one the automation's controller already
// reported pushing is the automation's; one that only carries its author line is a claim, recorded again as
// confirmed if the report comes within PUSH_REPORT_MS of the commit, and left a claim after that.
import { describe, expect, it } from 'vitest';
import type { App } from '../../domain/app.ts';
import type { CommitInfo } from '../../domain/release-commit.ts';
import type { ImageAutomationView } from '../../domain/image-automation.ts';
import type { ReleaseRecorderOptions } from './recorder-options.ts';
import { PUSH_REPORT_MS, recheckPushReport, recordChange, type ChangeContext } from './record-change.ts';
import type { Tracked } from './tracking.ts';

const SHA = 'a'.repeat(40);
const BOT = { name: 'Flux image automation', email: 'bot@example.invalid' };
const app = {
  id: 'c/flux-system/kustomization/dev',
  controller: 'flux',
  kind: 'Kustomization',
  name: 'dev',
  source: { kind: 'GitRepository', url: 'http://git.example/platform/app.git', path: './overlays/dev' },
} as unknown as App;

function view(lastPushCommit: string | undefined, lastPushTime = '2026-12-03T07:00:00Z'): ImageAutomationView {
  return {
    status: 'ok',
    automations: [
      {
        namespace: 'flux-system',
        name: 'dev-images',
        ready: { status: 'True' },
        suspended: false,
        source: { kind: 'GitRepository', namespace: 'flux-system', name: 'app' },
        pushBranch: 'main',
        updatePath: 'overlays/dev',
        author: BOT,
        lastPushCommit,
        lastPushTime,
        observed: [{ policy: 'tts', image: 'reg/tts', tag: '2.1.1' }],
        policies: ['tts'],
      },
    ],
    policies: [],
    repositories: [],
  };
}

function setup(author: { name: string; email: string }, committed: string, images: () => ImageAutomationView) {
  const records: Array<Record<string, unknown>> = [];
  const ctx = {
    o: { imageAutomation: () => images() } as unknown as ReleaseRecorderOptions,
    emit: (_a: unknown, rel: Tracked, state: string, _actor: string, data: Record<string, unknown>) => {
      rel.recorded.set(state as never, { status: 'ok', time: '' });
      records.push(data);
    },
    emitOther: () => undefined,
    readCommit: async (): Promise<CommitInfo> => ({
      sha: SHA,
      author: { ...author, time: committed },
      committer: { ...author, time: committed },
      signature: { status: 'none', code: 'N' },
      parents: ['b'.repeat(40)],
      subject: 'Image automation (dev): 2.1.0 -> 2.1.1',
      message: 'Image automation (dev): 2.1.0 -> 2.1.1',
    }),
  } as ChangeContext;
  const rel: Tracked = { sha: SHA, revision: `main@sha1:${SHA}`, seenAt: 0, recorded: new Map() };
  return { ctx, rel, records };
}

describe('the change state and image automation', () => {
  it('a push the controller already reported: the automation’s, recorded once', async () => {
    const { ctx, rel, records } = setup(BOT, new Date().toISOString(), () => view(SHA));
    await recordChange(ctx, app, rel, false);
    expect(records).toHaveLength(1);
    expect(records[0]?.automation).toMatchObject({ confirmed: true, automation: 'flux-system/dev-images' });
    expect(rel.pushReport).toBeUndefined();
  });

  it('Git read before the controller’s report: a claim at once, then recorded again, confirmed', async () => {
    let images = view('b'.repeat(40));
    const { ctx, rel, records } = setup(BOT, new Date().toISOString(), () => images);
    await recordChange(ctx, app, rel, false);
    expect(records).toHaveLength(1);
    expect(records[0]?.automation).toMatchObject({ confirmed: false });
    expect(rel.pushReport).toBeDefined();
    recheckPushReport(ctx, app, rel);
    expect(records).toHaveLength(1); // not reported yet: nothing new
    images = view(SHA, new Date().toISOString());
    recheckPushReport(ctx, app, rel);
    expect(records).toHaveLength(2);
    expect(records[1]).toMatchObject({ subject: records[0]?.subject, automation: { confirmed: true } });
    expect(rel.pushReport).toBeUndefined();
  });

  it('no report within PUSH_REPORT_MS of the commit: the claim stands', async () => {
    const committed = new Date().toISOString();
    const { ctx, rel, records } = setup(BOT, committed, () => view(undefined, '2026-01-01T00:00:00Z'));
    await recordChange(ctx, app, rel, false);
    recheckPushReport(ctx, app, rel, Date.parse(committed) + PUSH_REPORT_MS + 1);
    expect(rel.pushReport).toBeUndefined();
    expect(records).toHaveLength(1);
    expect(records[0]?.automation).toMatchObject({ confirmed: false });
  });

  it('a person’s commit: no automation, nothing awaited', async () => {
    const { ctx, rel, records } = setup({ name: 'Ann', email: 'ann@example.com' }, new Date().toISOString(), () =>
      view(undefined),
    );
    await recordChange(ctx, app, rel, false);
    expect(records[0]?.automation).toBeUndefined();
    expect(rel.pushReport).toBeUndefined();
  });
});

describe('the commits a controller applied together (a busy repository, issue 39)', () => {
  it('names the commits since the release before, and says so in the change value', async () => {
    const { ctx, rel, records } = setup({ name: 'Ann', email: 'ann@example.invalid' }, '2026-12-06T18:00:00Z', () =>
      view(undefined),
    );
    const PREV = 'c'.repeat(40);
    const asked: string[][] = [];
    ctx.commitsBetween = async (url, from, to) => {
      asked.push([url, from, to]);
      return { commits: [{ sha: 'd'.repeat(40), subject: 'Render worker 1.4.2 in dev' }], count: 1 };
    };
    // the first release the recorder follows: no range
    await recordChange(ctx, app, rel, false);
    expect(records[0]).not.toHaveProperty('between');
    expect(asked).toHaveLength(0);
    const next: Tracked = { ...rel, recorded: new Map(), previousSha: PREV };
    await recordChange(ctx, app, next, false);
    expect(asked).toEqual([['http://git.example/platform/app.git', PREV, SHA]]);
    expect(records[1]?.between).toEqual({
      from: PREV,
      commits: [{ sha: 'd'.repeat(40), subject: 'Render worker 1.4.2 in dev' }],
      count: 1,
    });
    // the chain says it (release.ts)
    const { buildReleases } = await import('../../domain/release.ts');
    const [r] = buildReleases([
      {
        seq: 1,
        time: '2026-12-06T18:00:01Z',
        type: 'release.change',
        actor: 'console',
        data: { sha: SHA, ...records[1] },
      },
    ]);
    expect(r?.states[0]?.value).toBe(
      `${String(records[1]?.subject)} · with 1 earlier commit since ccccccc, applied together`,
    );
    // a range that cannot be read never fails the change state
    ctx.commitsBetween = async () => {
      throw new Error('git: bad object');
    };
    await recordChange(ctx, app, { ...next, recorded: new Map() }, false);
    expect(records[2]).toMatchObject({ subject: records[1]?.subject });
    expect(records[2]).not.toHaveProperty('between');
  });
});
