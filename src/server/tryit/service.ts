// Runs the "Try it" scenarios and the reset as jobs, one at a time (they share one sandbox), each with its
// steps. Evidence, intent first: the run's `sandbox.scenario` (or `sandbox.reset`) intent is recorded before
// anything runs — a store that cannot write refuses it (503) and nothing happens — with actor
// `sandbox-scenario` and the person who pressed the button in `data.by`; the outcome (`action.completed` /
// `action.failed`, naming the intent's seq) is recorded when the job ends.
import { randomUUID } from 'node:crypto';
import type { TryItJob, TryItLink, TryItScenario, TryItStep } from '../../api/tryit.ts';
import type { EvidenceRecorder, EvidenceStore } from '../evidence/index.ts';
import { HttpError } from '../http/errors.ts';
import type { PruneHold } from '../../domain/prune-hold.ts';
import type { SandboxKit } from './kit.ts';
import { RESET_STEPS, runReset } from './reset.ts';
import { SCENARIOS, scenarioById, type ScenarioContext, type ScenarioDef } from './scenarios.ts';

export const SCENARIO_ACTOR = 'sandbox-scenario';
const KEEP_JOBS = 50;

export interface TryItServiceDeps {
  kit: SandboxKit;
  recorder: EvidenceRecorder;
  store: EvidenceStore;
  /** the active freeze holding an app (the freeze card needs one) */
  activeFreezeOf(appId: string): Promise<string | undefined>;
  /** the app's "held by the prune policy" now (cards that need dev or staging to move refuse while it lasts) */
  pruneHoldOf?(appId: string): PruneHold | undefined;
  /** voids the pending prune previews made before `before` (the reset: the state they decided on is gone) */
  voidPendingPreviews?(before: string, reason: string): Promise<number>;
  /** the scenarios offered (tests give their own); default SCENARIOS */
  scenarios?: ScenarioDef[];
  log?: { error(o: object, m: string): void };
  sleep?: (ms: number) => Promise<void>;
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

export class TryItService {
  private readonly jobs = new Map<string, TryItJob>();
  /** the job running now, or a run being started (its intent being recorded) */
  private busy: { title: string; job?: TryItJob } | undefined;
  /** settles when the running job ends (tests, shutdown) */
  private running: Promise<void> = Promise.resolve();

  constructor(private readonly d: TryItServiceDeps) {}

  private get scenarios(): ScenarioDef[] {
    return this.d.scenarios ?? SCENARIOS;
  }

  cards(): TryItScenario[] {
    return this.scenarios.map((s) => ({
      id: s.id,
      title: s.title,
      story: s.story,
      button: s.button,
      ...(s.needs ? { needs: s.needs } : {}),
      look: s.look,
      ...(s.leaves ? { leaves: s.leaves } : {}),
      links: s.links,
    }));
  }

  current(): TryItJob | undefined {
    return this.busy?.job;
  }

  /** The newest job of each scenario and of the reset, newest first. */
  recent(): TryItJob[] {
    const seen = new Set<string>();
    const out: TryItJob[] = [];
    for (const j of [...this.jobs.values()].reverse()) {
      const key = j.scenario ?? j.kind;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(j);
    }
    return out;
  }

  job(id: string): TryItJob | undefined {
    return this.jobs.get(id);
  }

  /** Settles when the job running now (if any) has ended. */
  idle(): Promise<void> {
    return this.running;
  }

  async run(scenarioId: string, person: string): Promise<TryItJob> {
    const s = scenarioById(scenarioId, this.scenarios);
    if (!s) throw new HttpError(404, 'NotFound', `no scenario ${scenarioId}`);
    return this.start({
      kind: 'scenario',
      scenario: s.id,
      title: s.title,
      steps: s.steps,
      person,
      links: s.links,
      check: s.precondition
        ? () =>
            s.precondition!({
              activeFreezeOf: (a) => this.d.activeFreezeOf(a),
              pruneHoldOf: (a) => this.d.pruneHoldOf?.(a),
            })
        : undefined,
      body: (ctx) => s.run(ctx),
    });
  }

  async reset(person: string): Promise<TryItJob> {
    return this.start({
      kind: 'reset',
      title: 'Reset the sandbox to its seed',
      steps: [...RESET_STEPS],
      person,
      links: [{ label: 'All apps', href: '/' }],
      body: (ctx) => runReset(ctx),
    });
  }

  private async start(o: {
    kind: TryItJob['kind'];
    scenario?: string;
    title: string;
    steps: readonly string[];
    person: string;
    links: TryItLink[];
    check?: (() => ReturnType<NonNullable<ScenarioDef['precondition']>>) | undefined;
    body: (ctx: ScenarioContext) => Promise<TryItLink[] | void>;
  }): Promise<TryItJob> {
    if (this.busy)
      throw new HttpError(
        409,
        'Busy',
        `“${this.busy.title}” is running: one scenario at a time (they share the sandbox); try again when it is done`,
      );
    // reserved before the first await: two presses at once start one job
    const reservation: { title: string; job?: TryItJob } = { title: o.title };
    this.busy = reservation;
    try {
      const pre = o.check ? await o.check() : { ok: true as const };
      if (!pre.ok) throw new HttpError(409, 'NotReady', pre.message);
      const id = `try-${randomUUID().slice(0, 8)}`;
      const startedAt = new Date().toISOString();
      const type = o.kind === 'reset' ? 'sandbox.reset' : 'sandbox.scenario';
      // fail closed: without the intent on record, nothing runs
      const intent = await this.d.recorder.intent({
        time: startedAt,
        type,
        actor: SCENARIO_ACTOR,
        data: {
          by: o.person,
          job: id,
          title: o.title,
          ...(o.scenario ? { scenario: o.scenario } : {}),
          steps: [...o.steps],
        },
      });
      const job: TryItJob = {
        id,
        kind: o.kind,
        ...(o.scenario ? { scenario: o.scenario } : {}),
        title: o.title,
        state: 'running',
        startedBy: o.person,
        startedAt,
        steps: o.steps.map((name) => ({ name, state: 'pending' })),
        links: [],
        intentSeq: intent.seq,
      };
      this.jobs.set(id, job);
      while (this.jobs.size > KEEP_JOBS) this.jobs.delete(this.jobs.keys().next().value as string);
      reservation.job = job;
      const found = 'found' in pre ? pre.found : undefined;
      this.running = this.execute(job, type, o, found).finally(() => {
        if (this.busy === reservation) this.busy = undefined;
      });
      return structuredClone(job);
    } catch (e) {
      if (this.busy === reservation && !reservation.job) this.busy = undefined;
      throw e;
    }
  }

  private async execute(
    job: TryItJob,
    type: 'sandbox.scenario' | 'sandbox.reset',
    o: { person: string; links: TryItLink[]; body: (ctx: ScenarioContext) => Promise<TryItLink[] | void> },
    found: string | undefined,
  ): Promise<void> {
    const stepOf = (name: string): TryItStep => {
      let s = job.steps.find((x) => x.name === name);
      if (!s) job.steps.push((s = { name, state: 'pending' }));
      return s;
    };
    const ctx: ScenarioContext = {
      kit: this.d.kit,
      evidence: this.d.store,
      startedAt: job.startedAt,
      found,
      ...(this.d.voidPendingPreviews ? { voidPendingPreviews: this.d.voidPendingPreviews } : {}),
      sleep: this.d.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms))),
      step: async (name, fn, detail) => {
        const s = stepOf(name);
        s.state = 'running';
        try {
          const v = await fn();
          const d = detail?.(v);
          s.state = 'done';
          if (d) s.detail = d;
          return v;
        } catch (e) {
          s.state = 'failed';
          s.detail = message(e).slice(0, 500);
          throw e;
        }
      },
    };
    const base = { actor: SCENARIO_ACTOR, app: null, cluster: null, env: null };
    try {
      const links = await o.body(ctx);
      job.links = links && links.length ? links : o.links;
      job.state = 'done';
    } catch (e) {
      job.state = 'failed';
      job.error = message(e).slice(0, 500);
      this.d.log?.error({ err: message(e), job: job.id }, 'try-it job failed');
    }
    for (const s of job.steps) if (s.state === 'pending') s.state = 'skipped';
    job.finishedAt = new Date().toISOString();
    await this.d.recorder.outcome({
      ...base,
      time: job.finishedAt,
      type: job.state === 'done' ? 'action.completed' : 'action.failed',
      data: {
        action: type,
        intentSeq: job.intentSeq,
        by: o.person,
        job: job.id,
        ...(job.scenario ? { scenario: job.scenario } : {}),
        steps: job.steps.map((s) => ({ name: s.name, state: s.state, ...(s.detail ? { detail: s.detail } : {}) })),
        ...(job.error ? { error: job.error } : {}),
      },
    });
  }
}
