// The release recorder (issue 16): for every app, whether or not anyone looks, records the states of each
// release — a new source revision — as evidence observations, as they happen:
//   1 change        the commit, read with `git` from a cached bare mirror under the data dir
//   2 review        the pull request that merged it and the approvals that count (someone other than its authors,
//                   on the merged head, into the app's branch: the forge of the repo host); without a forge
//                   `unknown` (a commit message proves no review); a direct push fails where review is required
//   3 artifact      the source artifact digest; each container image the render names (mutable tags flagged,
//                   tags resolved to digests through configured registry mirrors)
//   4 render        renderer, version, render hash, object count (DiffService.desired: the diff's renderer)
//   5 validation    a server-side dry-run of every rendered object as the controller's field manager
//   6 reconcile     the applied revision, when, seconds after the commit; or the controller's failure
//   7 health        Healthy / Degraded (with the reason) after the reconcile
//   8 verification  an HTTP check per app / environment (CONSOLE_VERIFICATIONS_FILE) after the health state and
//                   every interval, plus the running Pods' image digests against the artifact's
//   9 promotion     recorded on the earlier environment's release when the next environment (CONSOLE_ENV_ORDER)
//                   applies a release running the same image digests
// At start, an app whose revision moved since its last recorded release gets a `release.gap` record: the
// console was not recording in between (releases in that window are not in the chain, and it says so).
// A state that cannot be read (Git down, URL unreachable) is recorded as unknown with the reason, and the
// recorder goes on; nothing here blocks the BFF (work runs beside it, two heavy jobs at a time). After a
// restart each app's latest release is read back from the store first: recorded states are not recorded again.
// This file holds the scheduling (one tick per app, retries, the periodic verification); each state's recording
// is in record-*.ts, the read-back in resume.ts.
import { join } from 'node:path';
import type { App } from '../../domain/app.ts';
import type { EvidenceInput, EvidenceType } from '../../domain/evidence.ts';
import { shaOf, type CommitInfo } from '../../domain/release-commit.ts';
import { RELEASE_EVIDENCE, type ReleaseStateName } from '../../domain/release.ts';
import { GitMirrors } from '../git/mirror.ts';
import { Limiter } from './limiter.ts';
import { recordArtifactAndRender } from './record-artifact.ts';
import { CommitMemo } from './commit-memo.ts';
import { commitsBetween, readCommit, recheckPushReport, recordChange, type ChangeContext } from './record-change.ts';
import { recordPromotion } from './record-promotion.ts';
import { noteDependencyWait, recordHealth, recordReconcile } from './record-reconcile.ts';
import { recordReview, reviewDue } from './record-review.ts';
import { recordValidation } from './record-validation.ts';
import { canaryPhase, recordCanarySteps } from './record-canary.ts';
import { recordVerification } from './record-verification.ts';
import type { ReleaseRecorderOptions } from './recorder-options.ts';
import { readLatestRelease, resumeFrom } from './resume.ts';
import { FOLLOW_MS, message, releaseSha, TICK_MS, type Tracked } from './tracking.ts';

/** Every state a release can record here is recorded (and nothing is to be asked again). */
function followedToTheEnd(rel: Tracked): boolean {
  return (
    ['change', 'review', 'render', 'reconcile', 'health', 'verification'].every((s) =>
      rel.recorded.has(s as ReleaseStateName),
    ) &&
    (rel.recorded.has('validation') || rel.recorded.get('render')?.status !== 'ok') &&
    rel.reviewRetryAt === undefined &&
    rel.pushReport === undefined
  );
}

export class ReleaseRecorder {
  private readonly tracked = new Map<string, Tracked>();
  /** per app: the release before the newest, followed while the newest changes nothing here (followCarried) */
  private readonly carried = new Map<string, Tracked>();
  private readonly loaded = new Set<string>();
  private readonly chains = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  private readonly retryAfterError = new Set<string>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly mirrors: GitMirrors;
  private readonly heavy = new Limiter(2);
  /** each (repository, commit) read once: in a monorepo every app's release is the same commit */
  private readonly commits = new CommitMemo<CommitInfo>((url, sha) => readCommit(this.mirrors, url, sha));
  /** what the state recorders (record-*.ts) work with */
  private readonly ctx: ChangeContext;
  private interval: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly onApp = (e: { type: 'upsert'; app: App } | { type: 'delete'; id: string }) => {
    if (e.type === 'upsert') this.schedule(e.app.id);
  };

  constructor(private readonly o: ReleaseRecorderOptions) {
    this.mirrors = GitMirrors.for(join(o.dataDir, 'release-git'));
    this.ctx = {
      o,
      emit: (app, rel, state, actor, data) => this.emit(app, rel, state, actor, data),
      emitOther: (app, rel, type, actor, data) => this.emitOther(app, rel, type, actor, data),
      readCommit: (rawUrl, sha) => this.readCommit(rawUrl, sha),
      commitsBetween: (rawUrl, from, to) => commitsBetween(this.mirrors, rawUrl, from, to),
    };
  }

  /** For /metrics: releases followed now, and those of them still waiting for their verification. */
  stats(): { followed: number; verificationsPending: number } {
    let pending = 0;
    for (const rel of this.tracked.values()) if (!rel.recorded.has('verification')) pending++;
    return { followed: this.tracked.size, verificationsPending: pending };
  }

  start(): void {
    this.o.catalog.on('app', this.onApp);
    for (const a of this.o.catalog.list()) this.schedule(a.id);
    this.interval = setInterval(() => this.verifyAll(), this.o.verifyIntervalMs ?? 300_000);
    this.interval.unref();
  }

  async stop(): Promise<void> {
    this.closed = true;
    this.o.catalog.off('app', this.onApp);
    if (this.interval) clearInterval(this.interval);
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    await Promise.allSettled([...this.chains.values()]);
  }

  /** Waits until no app's work is running (tests). */
  async idle(): Promise<void> {
    while (this.chains.size) await Promise.allSettled([...this.chains.values()]);
  }

  /** One tick per app at a time; an update during a tick asks for one more after it. */
  private schedule(id: string): void {
    if (this.closed) return;
    if (this.chains.has(id)) {
      this.again.add(id);
      return;
    }
    const t = this.timers.get(id);
    if (t) {
      clearTimeout(t);
      this.timers.delete(id);
    }
    const p = this.tick(id)
      .catch((e: unknown) => {
        this.o.log.warn({ app: id, err: message(e) }, 'release recorder: tick failed');
        this.retryAfterError.add(id);
      })
      .finally(() => {
        this.chains.delete(id);
        if (this.again.delete(id)) this.schedule(id);
        // a failed tick (the store or Git did not answer) is tried again, never given up
        else if (this.retryAfterError.delete(id)) this.later(id);
      });
    this.chains.set(id, p);
  }

  private later(id: string): void {
    if (this.closed || this.timers.has(id)) return;
    const t = setTimeout(() => {
      this.timers.delete(id);
      this.schedule(id);
    }, TICK_MS);
    t.unref();
    this.timers.set(id, t);
  }

  /** The app's latest recorded release, read back once (resume after a restart without duplicates). */
  private async load(app: App): Promise<void> {
    if (this.loaded.has(app.id)) return;
    const events = await readLatestRelease(this.o, app);
    this.loaded.add(app.id);
    const t = resumeFrom(this.o, app, events);
    if (t) this.tracked.set(app.id, t);
  }

  private async tick(id: string): Promise<void> {
    const app = this.o.catalog.get(id);
    if (!app || this.closed) return;
    await this.load(app);
    const cur = releaseSha(app);
    if (!cur) return;
    let t = this.tracked.get(id);
    if (!t || t.sha !== cur.sha) {
      // the release before, if still followed, is carried while the new one may turn out to change nothing here;
      // when the one before changed nothing itself, the release it runs stays carried (a busy repository: many
      // unrelated commits in a row all run one release)
      const running = t?.unchangedFrom ? this.carried.get(id) : undefined;
      if (running && running.sha === t?.unchangedFrom) {
        /* keep carrying it */
      } else if (t && !followedToTheEnd(t) && t.recorded.get('reconcile')?.status === 'ok') this.carried.set(id, t);
      else this.carried.delete(id);
      t = {
        sha: cur.sha,
        revision: cur.revision,
        seenAt: Date.now(),
        recorded: new Map(),
        ...(t ? { previousSha: t.sha } : {}),
      };
      this.tracked.set(id, t);
    }
    const rel = t;
    const expired = Date.now() - rel.seenAt > FOLLOW_MS;

    // a canary's steps first and between the slower states: a step can last seconds (record-canary.ts)
    const steps = () => {
      const now = this.o.catalog.get(id) ?? app;
      recordCanarySteps(this.ctx, now, rel);
      noteDependencyWait(now, rel);
    };
    steps();
    if (!rel.recorded.has('change')) await this.heavy.run(() => recordChange(this.ctx, app, rel, expired));
    recheckPushReport(this.ctx, this.o.catalog.get(id) ?? app, rel);
    if (reviewDue(rel, expired)) await recordReview(this.ctx, app, rel);
    if (this.superseded(app, rel)) return this.schedule(id);
    steps();
    if (!rel.recorded.has('render') && this.artifactIsFor(app, rel))
      await this.heavy.run(() => recordArtifactAndRender(this.ctx, app, rel));
    steps();
    if (rel.recorded.get('render')?.status === 'ok' && !rel.recorded.has('validation'))
      await this.heavy.run(() => recordValidation(this.ctx, app, rel));
    const latest = this.o.catalog.get(id) ?? app;
    recordReconcile(this.ctx, latest, rel);
    // a commit that changed nothing here brought nothing to promote (release-effect.ts)
    if (rel.unchangedFrom) rel.promotionChecked = true;
    if (rel.recorded.get('reconcile')?.status === 'ok' && !rel.promotionChecked)
      await recordPromotion(this.ctx, latest, rel);
    recordCanarySteps(this.ctx, latest, rel);
    recordHealth(this.ctx, latest, rel, expired, canaryPhase(this.ctx, latest, rel));
    if (rel.recorded.has('health') && !rel.recorded.has('verification'))
      await recordVerification(this.ctx, latest, rel, false);

    const carried = await this.followCarried(id, latest, rel);
    if ((!followedToTheEnd(rel) && !expired) || carried) this.later(id);
  }

  /**
   * The release before the newest, while the newest changes nothing here (its render is that release's): what runs
   * is still that release, so its health and verification are recorded as the app shows them — in a monorepo
   * another team's commit every few seconds would otherwise leave every release without them. Dropped once the
   * newest changes something, or the carried one is followed to its end. Whether it still needs ticks.
   */
  private async followCarried(id: string, app: App, newest: Tracked): Promise<boolean> {
    const p = this.carried.get(id);
    if (!p) return false;
    const expired = Date.now() - p.seenAt > FOLLOW_MS;
    if (!newest.recorded.has('render')) return !expired;
    if (newest.unchangedFrom !== p.sha) {
      this.carried.delete(id);
      return false;
    }
    recordHealth(this.ctx, app, p, expired, canaryPhase(this.ctx, app, p));
    if (p.recorded.has('health') && !p.recorded.has('verification')) await recordVerification(this.ctx, app, p, false);
    if (followedToTheEnd(p) || expired) {
      this.carried.delete(id);
      return false;
    }
    return true;
  }

  private superseded(app: App, rel: Tracked): boolean {
    const now = this.o.catalog.get(app.id);
    const cur = now ? releaseSha(now) : undefined;
    return !!cur && cur.sha !== rel.sha;
  }

  /** Flux: the source artifact is this revision's; Argo CD renders the revision itself from Git. */
  private artifactIsFor(app: App, rel: Tracked): boolean {
    if (app.controller !== 'flux') return true;
    return shaOf(app.source.revisionWanted) === rel.sha;
  }

  private emit(app: App, rel: Tracked, state: ReleaseStateName, actor: string, data: Record<string, unknown>): void {
    // a stopped recorder (the Lease went to another replica, or the console closes) records nothing more
    if (this.closed) return;
    const status = typeof data.status === 'string' ? data.status : 'ok';
    rel.recorded.set(state, {
      status,
      reason: typeof data.reason === 'string' ? data.reason : undefined,
      time: new Date().toISOString(),
    });
    this.emitOther(app, rel, RELEASE_EVIDENCE[state] as EvidenceType, actor, data);
  }

  private emitOther(app: App, rel: Tracked, type: EvidenceType, actor: string, data: Record<string, unknown>): void {
    if (this.closed) return;
    const time = new Date().toISOString();
    const status = typeof data.status === 'string' ? data.status : 'ok';
    const ev: EvidenceInput = {
      time,
      type,
      actor,
      app: app.id,
      cluster: app.cluster,
      env: app.env,
      data: {
        sha: rel.sha,
        revision: rel.revision,
        controller: app.controller,
        generation: app.generation ?? null,
        observedGeneration: app.observedGeneration ?? null,
        // every record after the render of a release that changed nothing here says so (no deployment: metrics)
        ...(rel.unchangedFrom ? { unchangedFrom: rel.unchangedFrom } : {}),
        ...data,
        status,
      },
    };
    this.o.recorder.observe(ev);
  }

  /** `git fetch` into a bare mirror under the data dir (once per sha), then `git show -s`; once per commit. */
  async readCommit(rawUrl: string, sha: string): Promise<CommitInfo> {
    return this.commits.read(rawUrl, sha);
  }

  /** Every interval: a verification of each app's applied release (status changes show between releases too). */
  private verifyAll(): void {
    for (const [id, rel] of this.tracked) {
      const app = this.o.catalog.get(id);
      if (!app || rel.recorded.get('reconcile')?.status !== 'ok' || this.chains.has(id)) continue;
      if (this.superseded(app, rel)) continue; // a new revision: its own tick verifies it
      if (this.o.reachable && !this.o.reachable(app.cluster)) continue;
      const p = recordVerification(this.ctx, app, rel, true)
        .catch((e: unknown) => this.o.log.warn({ app: id, err: message(e) }, 'release recorder: verification failed'))
        .finally(() => {
          this.chains.delete(id);
          if (this.again.delete(id)) this.schedule(id);
        });
      this.chains.set(id, p);
    }
  }
}
