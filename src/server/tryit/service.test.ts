// The "Try it" runner: intent first (fail closed), one job at a time, steps and outcome; the routes answer 404
// outside sandbox mode (no kit) and are there with one.
import Fastify from 'fastify';
import { describe, expect, it, vi } from 'vitest';
import type { AppDeps } from '../deps.ts';
import { EvidenceRecorder } from '../evidence/index.ts';
import { FlakyMemoryStore } from '../evidence/memory-store.test-support.ts';
import { HttpError } from '../http/errors.ts';
import type { SandboxKit } from './kit.ts';
import { tryitRoutes } from './routes.ts';
import { SCENARIOS, withRenderWorkerTag, type ScenarioDef } from './scenarios.ts';
import { appliedOrPruneDenied, writeSeed } from './reset.ts';
import { TryItService } from './service.ts';
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const kit = {} as SandboxKit;
const log = { warn: vi.fn(), error: vi.fn() };

function setup(scenarios: ScenarioDef[], freeze?: string) {
  const store = new FlakyMemoryStore();
  const recorder = new EvidenceRecorder(store, log, { retryBaseMs: 1 });
  const service = new TryItService({
    kit,
    recorder,
    store,
    scenarios,
    activeFreezeOf: async () => freeze,
    sleep: async () => undefined,
  });
  return { store, recorder, service };
}

const scenario = (over: Partial<ScenarioDef> = {}): ScenarioDef => ({
  id: 'demo',
  title: 'A demo',
  story: 'a story',
  button: 'Go',
  look: 'look there',
  links: [{ label: 'there', href: '/there' }],
  steps: ['one', 'two'],
  async run(ctx) {
    await ctx.step(
      'one',
      () => 'x',
      (v) => `got ${v}`,
    );
    await ctx.step('two', () => undefined);
  },
  ...over,
});

describe('TryItService', () => {
  it('records the intent (actor sandbox-scenario, the person in data) before the first step, the outcome after', async () => {
    const { store, service } = setup([
      scenario({
        async run(ctx) {
          // the intent is on record when the scenario starts
          expect(store.events.map((e) => e.type)).toEqual(['sandbox.scenario']);
          await ctx.step(
            'one',
            () => 'x',
            (v) => `got ${v}`,
          );
          await ctx.step('two', () => undefined);
        },
      }),
    ]);
    const job = await service.run('demo', 'developer');
    expect(job).toMatchObject({ kind: 'scenario', scenario: 'demo', state: 'running', startedBy: 'developer' });
    await service.idle();
    const done = service.job(job.id);
    expect(done).toMatchObject({ state: 'done', links: [{ label: 'there', href: '/there' }] });
    expect(done?.steps).toEqual([
      { name: 'one', state: 'done', detail: 'got x' },
      { name: 'two', state: 'done' },
    ]);
    const [intent, outcome] = store.events;
    expect(intent).toMatchObject({
      type: 'sandbox.scenario',
      actor: 'sandbox-scenario',
      data: { by: 'developer', job: job.id, scenario: 'demo', title: 'A demo' },
    });
    expect(outcome).toMatchObject({
      type: 'action.completed',
      actor: 'sandbox-scenario',
      data: { action: 'sandbox.scenario', intentSeq: intent?.seq, by: 'developer', job: job.id },
    });
    expect(service.current()).toBeUndefined();
    expect(service.recent().map((j) => j.id)).toEqual([job.id]);
  });

  it('fails closed: when the intent cannot be recorded nothing runs (503) and another run may start', async () => {
    const run = vi.fn(async () => undefined);
    const { store, service } = setup([scenario({ run })]);
    store.down = true;
    const err = await service.run('demo', 'developer').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpError);
    expect((err as HttpError).status).toBe(503);
    expect(run).not.toHaveBeenCalled();
    store.down = false;
    await service.run('demo', 'developer');
    await service.idle();
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('one job at a time: a second press while one runs is a 409, with nothing recorded for it', async () => {
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const { store, service } = setup([scenario({ run: () => gate })]);
    const first = await service.run('demo', 'a');
    const err = await service.reset('b').catch((e: unknown) => e);
    expect((err as HttpError).status).toBe(409);
    expect(service.current()?.id).toBe(first.id);
    release();
    await service.idle();
    expect(store.events.map((e) => e.type)).toEqual(['sandbox.scenario', 'action.completed']);
  });

  it('a failing step: the job fails with the reason, later steps are skipped, the outcome is action.failed', async () => {
    const { store, service } = setup([
      scenario({
        async run(ctx) {
          await ctx.step('one', () => {
            throw new Error('kubectl: connection refused');
          });
          await ctx.step('two', () => undefined);
        },
      }),
    ]);
    const job = await service.run('demo', 'oncall');
    await service.idle();
    expect(service.job(job.id)).toMatchObject({
      state: 'failed',
      error: 'kubectl: connection refused',
      steps: [
        { name: 'one', state: 'failed', detail: 'kubectl: connection refused' },
        { name: 'two', state: 'skipped' },
      ],
    });
    expect(store.events.at(-1)).toMatchObject({
      type: 'action.failed',
      data: { action: 'sandbox.scenario', error: 'kubectl: connection refused', by: 'oncall' },
    });
  });

  it('a precondition not met (the freeze card without a freeze) is a 409 in words, nothing recorded or run', async () => {
    const freezeCard = SCENARIOS.find((s) => s.id === 'freeze-incident');
    if (!freezeCard) throw new Error('no freeze card');
    const run = vi.fn(async () => undefined);
    const { store, service } = setup([{ ...freezeCard, run }]);
    const err = await service.run('freeze-incident', 'developer').catch((e: unknown) => e);
    expect((err as HttpError).status).toBe(409);
    expect((err as HttpError).message).toMatch(/freeze digital-human-prod first/);
    expect(store.events).toHaveLength(0);
    expect(run).not.toHaveBeenCalled();
    // with a freeze: it runs, and links to that freeze
    const frozen = setup([freezeCard], 'frz-0123abcd');
    const edit = vi.fn();
    const k = { scenario: { incidentEditRenderWorker: edit } } as unknown as SandboxKit;
    const svc = new TryItService({
      kit: k,
      recorder: frozen.recorder,
      store: frozen.store,
      scenarios: [freezeCard],
      activeFreezeOf: async () => 'frz-0123abcd',
    });
    const job = await svc.run('freeze-incident', 'oncall');
    await svc.idle();
    expect(edit).toHaveBeenCalledWith('prod', 'prod');
    expect(svc.job(job.id)?.links[0]).toEqual({
      label: 'the freeze (end it, write back)',
      href: '/freezes/frz-0123abcd',
    });
  });

  it('"Push a new image" refuses while dev or staging is held by the prune policy, saying how to finish or undo it', async () => {
    const card = SCENARIOS.find((s) => s.id === 'push-image');
    if (!card) throw new Error('no push-image card');
    const run = vi.fn(async () => undefined);
    const store = new FlakyMemoryStore();
    const recorder = new EvidenceRecorder(store, log, { retryBaseMs: 1 });
    const holds = new Map([
      [
        'nonprod/flux-system/kustomization/digital-human-staging',
        { objects: ['ConfigMap/render-worker-config'], count: 1, message: 'prune of ConfigMap/render-worker-config …' },
      ],
    ]);
    const svc = new TryItService({
      kit,
      recorder,
      store,
      scenarios: [{ ...card, run }],
      activeFreezeOf: async () => undefined,
      pruneHoldOf: (id) => holds.get(id),
      sleep: async () => undefined,
    });
    const err = (await svc.run('push-image', 'developer').catch((e: unknown) => e)) as HttpError;
    expect(err.status).toBe(409);
    expect(err.message).toBe(
      'staging is held by the prune policy: deleting ConfigMap/render-worker-config needs an approved prune preview, so Flux applies no new commit there: approve that app’s prune preview (Prune previews; a reviewer who did not request it), or press “Reset to the seed”, then run this card',
    );
    expect(store.events).toHaveLength(0);
    expect(run).not.toHaveBeenCalled();
    // once the hold is gone, it runs
    holds.clear();
    await svc.run('push-image', 'developer');
    await svc.idle();
    expect(run).toHaveBeenCalledOnce();
    // the card that leaves the hold says so, with how to finish and undo it
    expect(SCENARIOS.find((s) => s.id === 'remove-configmap')?.leaves).toMatch(
      /held by the prune policy .* approves .* finishes it .*Reset to the seed.* undoes it/,
    );
  });

  it('the reset voids the previews planned before it, after its intent, and says how many', async () => {
    const store = new FlakyMemoryStore();
    const recorder = new EvidenceRecorder(store, log, { retryBaseMs: 1 });
    const voided: Array<{ before: string; reason: string; intents: number }> = [];
    const svc = new TryItService({
      kit,
      recorder,
      store,
      scenarios: [],
      activeFreezeOf: async () => undefined,
      voidPendingPreviews: async (before, reason) => {
        voided.push({ before, reason, intents: store.events.filter((e) => e.type === 'sandbox.reset').length });
        return 2;
      },
    });
    // every step but the last is the sandbox's: run only the last one through the real reset code
    const { runReset, RESET_STEPS } = await import('./reset.ts');
    expect(RESET_STEPS.at(-1)).toBe('Void the prune previews planned before the reset');
    const steps: Array<{ name: string; detail?: string }> = [];
    const fakeCtx = {
      kit: { sandbox: { mustState: () => ({ clusters: [] }) } } as unknown as SandboxKit,
      evidence: store,
      startedAt: '2026-12-06T18:00:00.000Z',
      sleep: async () => undefined,
      voidPendingPreviews: (b: string, r: string) => svc['d'].voidPendingPreviews!(b, r),
      step: async <T>(name: string, fn: () => T | Promise<T>, detail?: (v: T) => string | undefined) => {
        if (name !== RESET_STEPS.at(-1)) return (name.startsWith('Git') ? 'f'.repeat(40) : 0) as T;
        const v = await fn();
        steps.push({ name, ...(detail?.(v) ? { detail: detail(v) as string } : {}) });
        return v;
      },
    };
    await runReset(fakeCtx as never);
    expect(voided).toEqual([
      {
        before: '2026-12-06T18:00:00.000Z',
        reason: 'void: the sandbox was reset to its seed (Try it); the state this preview decided on is gone',
        intents: 0,
      },
    ]);
    expect(steps).toEqual([{ name: 'Void the prune previews planned before the reset', detail: '2 voided' }]);
  });

  it('an unknown scenario is a 404', async () => {
    const { service } = setup([scenario()]);
    expect(((await service.run('nope', 'a').catch((e: unknown) => e)) as HttpError).status).toBe(404);
  });
});

describe('the cards', () => {
  it('each has a story, a button, where to look and declared steps; ids are unique', () => {
    expect(new Set(SCENARIOS.map((s) => s.id)).size).toBe(SCENARIOS.length);
    expect(SCENARIOS.map((s) => s.id)).toEqual([
      'scale-by-hand',
      'remove-configmap',
      'empty-render',
      'freeze-incident',
      'break-prod-endpoint',
      'push-image',
      'cluster-offline',
    ]);
    for (const s of SCENARIOS) {
      expect(s.story.length, s.id).toBeGreaterThan(20);
      expect(s.links.length, s.id).toBeGreaterThan(0);
      expect(s.steps.length, s.id).toBeGreaterThan(0);
    }
  });

  it('withRenderWorkerTag rewrites the render worker image line only', () => {
    const overlay = [
      'images:',
      '  - name: registry.example.com/digital-human/render-worker',
      '    digest: sha256:abc',
      '  - name: registry.example.com/digital-human/tts-gateway',
      '    newTag: 2.1.0',
    ].join('\n');
    expect(withRenderWorkerTag(overlay, '1.5.0')).toBe(overlay.replace('digest: sha256:abc', 'newTag: 1.5.0'));
    expect(() => withRenderWorkerTag('images: []', '1.5.0')).toThrow(/no render worker image/);
  });

  it('the reset writes exactly the seed into the work tree (everything else removed, .git kept)', () => {
    const w = mkdtempSync(join(tmpdir(), 'tryit-seed-'));
    mkdirSync(join(w, '.git'));
    writeFileSync(join(w, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    mkdirSync(join(w, 'overlays', 'extra'), { recursive: true });
    writeFileSync(join(w, 'overlays', 'extra', 'x.yaml'), 'x');
    const fake = {
      seed: { seedFiles: () => ({ 'README.md': 'seed\n', 'base/a.yaml': 'a\n' }) },
      scenario: {
        writeRepoFile: (work: string, p: string, c: string) => {
          mkdirSync(dirname(join(work, p)), { recursive: true });
          writeFileSync(join(work, p), c);
        },
      },
    } as unknown as SandboxKit;
    writeSeed(fake, w);
    expect(readdirSync(w).sort()).toEqual(['.git', 'README.md', 'base']);
    expect(readFileSync(join(w, 'base/a.yaml'), 'utf8')).toBe('a\n');
    expect(readFileSync(join(w, '.git', 'HEAD'), 'utf8')).toContain('main');
  });
});

describe('tryitRoutes', () => {
  const deps = (over: Partial<AppDeps>) => {
    const store = new FlakyMemoryStore();
    return { store, recorder: new EvidenceRecorder(store, log), ...over } as unknown as AppDeps;
  };

  it('without the sandbox kit (a console on a kubeconfig) no route is registered: 404', async () => {
    const app = Fastify();
    await app.register(tryitRoutes, deps({}));
    for (const [method, url] of [
      ['GET', '/api/tryit/scenarios'],
      ['POST', '/api/tryit/scenarios/scale-by-hand/run'],
      ['POST', '/api/tryit/reset'],
      ['GET', '/api/tryit/jobs/try-01234567'],
    ] as const)
      expect((await app.inject({ method, url })).statusCode, url).toBe(404);
    await app.close();
  });

  it('with it, the routes are there and each declares its access rule', async () => {
    const app = Fastify();
    const rules: Array<[string, unknown]> = [];
    app.addHook('onRoute', (r) => {
      if (r.method !== 'HEAD') rules.push([`${String(r.method)} ${r.url}`, r.config?.access]);
    });
    await app.register(tryitRoutes, deps({ tryit: kit }));
    await app.ready();
    expect(rules).toEqual([
      ['GET /api/tryit/scenarios', { signedIn: true }],
      ['GET /api/tryit/jobs/:id', { signedIn: true }],
      ['POST /api/tryit/scenarios/:id/run', { action: 'app.reconcile', scope: 'anywhere' }],
      ['POST /api/tryit/reset', { action: 'app.reconcile', scope: 'anywhere' }],
    ]);
    await app.close();
  });
});

describe('the reset waits for Flux at the seed commit', () => {
  const sha = 'a732a031f00dbeefa732a031f00dbeefa732a031';
  const fakeKit = (statuses: object[]) => {
    let i = 0;
    const reconciles: string[] = [];
    const k = {
      scenario: {
        getJson: () => ({ status: statuses[Math.min(i++, statuses.length - 1)] }),
        requestReconcile: (_c: string, kind: string) => reconciles.push(kind),
      },
    } as unknown as SandboxKit;
    return { k, reconciles };
  };
  const ready = (status: string, reason: string, message = '') => ({
    conditions: [{ type: 'Ready', status, reason, message }],
  });

  it('applied: Ready at the commit (after an older revision), nothing held', async () => {
    const { k, reconciles } = fakeKit([
      { lastAppliedRevision: 'main@sha1:0ld', ...ready('True', 'ReconciliationSucceeded') },
      { lastAppliedRevision: `main@sha1:${sha}`, ...ready('True', 'ReconciliationSucceeded') },
    ]);
    await expect(appliedOrPruneDenied(k, 'nonprod', 'digital-human-dev', sha)).resolves.toBeUndefined();
    expect(reconciles).toEqual(['gitrepository', 'kustomization']);
  });

  it('a prune the admission policy denies (an object the seed does not have) is reported, never deleted around', async () => {
    const msg = 'prune of Secret/api-token needs an approved prune preview (gitops-console.dev/prune-approved)';
    const { k } = fakeKit([
      {
        lastAttemptedRevision: `main@sha1:${sha}`,
        lastAppliedRevision: 'main@sha1:0ld',
        ...ready('False', 'PruneFailed', msg),
      },
    ]);
    await expect(appliedOrPruneDenied(k, 'nonprod', 'digital-human-dev', sha)).resolves.toBe(msg);
  });

  it('any other failure at the commit is not taken for done: it times out', async () => {
    const { k } = fakeKit([
      { lastAttemptedRevision: `main@sha1:${sha}`, ...ready('False', 'BuildFailed', 'kustomize build failed') },
    ]);
    await expect(appliedOrPruneDenied(k, 'nonprod', 'digital-human-dev', sha, 50)).rejects.toThrow(/timed out/);
  });
});
