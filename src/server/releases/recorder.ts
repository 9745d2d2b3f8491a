// The release recorder (issue 16): for every app, whether or not anyone looks, records the states of each
// release — a new source revision — as evidence observations, as they happen:
//   1 change        the commit, read with `git` from a cached bare mirror under the data dir
//   2 review        the pull request that merged it and its approvers (the forge of the repo host), or without a
//                   forge the merge commit and its review trailers; a direct push is flagged (fails where the
//                   environment requires review)
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
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { App } from '../../domain/app.ts';
import type { EvidenceInput, EvidenceType } from '../../domain/evidence.ts';
import {
  checkLiveDigests,
  excerpt,
  GIT_SHOW_FORMAT,
  imagesOf,
  judgeVerification,
  parseGitShow,
  parseImage,
  promoted,
  RELEASE_EVIDENCE,
  RELEASE_GAP,
  RELEASE_EVIDENCE_TYPES,
  redactUrl,
  releaseDigests,
  reviewFromCommit,
  secondsBetween,
  shaOf,
  stateOfType,
  verificationFor,
  type ImageRef,
  type PodImage,
  type ReleaseStateName,
  type VerificationSpec,
} from '../../domain/release.ts';
import { familyOf } from '../diff/env-compare.ts';
import type { ForgeDirectory } from '../forge/forge-directory.ts';
import { git, GitMirrors } from '../git/mirror.ts';
import type { KubeObject } from '../kube/informer.ts';
import type { AppDiff } from '../diff/app-diff.ts';
import type { AppCatalog } from '../apps/catalog.ts';
import type { ObjectIndex } from '../kube/object-index.ts';
import { assertFetchableUrl, RenderError, type RenderResult } from '../diff/render.ts';
import type { EvidenceStore } from '../evidence/store.ts';
import type { EvidenceRecorder } from '../evidence/recorder.ts';

export interface ReleaseRecorderLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface ReleaseRecorderOptions {
  catalog: AppCatalog;
  recorder: EvidenceRecorder;
  store: EvidenceStore;
  index: ObjectIndex;
  /** the app's desired state as its controller renders it (DiffService.desired as the console) */
  desired: (app: App) => Promise<RenderResult>;
  dataDir: string;
  log: ReleaseRecorderLog;
  /** CONSOLE_VERIFICATIONS_FILE: {"<cluster>/<env>" | app id: {url, expectStatus, bodyMatch?, versionHeader?, timeoutMs}} */
  verificationsFile?: string | undefined;
  /** image host → registry base URL the tags are resolved at (CONSOLE_REGISTRY_MIRRORS host=url,…) */
  registryMirrors?: Record<string, string>;
  /** periodic verification of every app's live release (default 5 min) */
  verifyIntervalMs?: number;
  /** is the app's cluster answering now */
  reachable?: (cluster: string) => boolean;
  /** forges per repo host: the review state reads the pull request that merged a commit */
  forges?: ForgeDirectory | undefined;
  /** environments whose commits must be reviewed (a direct push fails the review state); default prod */
  reviewRequiredEnvs?: string[];
  /** dev → staging → prod: where a release is promoted to next */
  envOrder?: string[];
  /** a server-side dry-run of the app's render as its controller (the diff's); absent: validation is unknown */
  validate?: (app: App) => Promise<ValidationResult>;
  /** a forge that did not answer is asked again after this long (default 20 s) */
  reviewRetryMs?: number;
}

/** The server-side dry-run of one render: each desired object accepted, rejected (with why) or not checked. */
export interface ValidationResult {
  revision?: string | undefined;
  renderHash?: string | undefined;
  accepted: number;
  rejected: Array<{ object: string; reason: string }>;
  unchecked: Array<{ object: string; reason: string }>;
}

interface Recorded {
  status: string;
  reason?: string | undefined;
  time: string;
}

interface Tracked {
  sha: string;
  revision: string;
  seenAt: number;
  recorded: Map<ReleaseStateName, Recorded>;
  commitTime?: string | undefined;
  reconciledAt?: number | undefined;
  healthAt?: number | undefined;
  images?: Array<ImageRef & { resolved?: string }> | undefined;
  /** the commit's parents and message (the review state without a forge) */
  commit?: { parents: string[]; message: string } | undefined;
  /** the forge could not answer: the review is read again after this time */
  reviewRetryAt?: number | undefined;
  /** the promotion into this release's environment was looked for */
  promotionChecked?: boolean;
}

/** How long a release is followed before its missing states are recorded as unknown. */
const FOLLOW_MS = 15 * 60_000;
const TICK_MS = 3000;
/** after the reconcile, health is taken once the objects had this long to start rolling */
const HEALTH_SETTLE_MS = 3000;
/** the live-digest check waits this long for a rollout to finish before it records what it sees */
const ROLLOUT_SETTLE_MS = 90_000;
/** a forge that did not answer is asked again after this long (while the release is followed) */
const REVIEW_RETRY_MS = 20_000;

const message = (e: unknown) => (e instanceof Error ? e.message : String(e)).slice(0, 2000);

/** A small counting semaphore: renders and git fetches do not pile up on a 2-core machine. */
class Limiter {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(private readonly max: number) {}
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.running >= this.max) await new Promise<void>((r) => this.waiting.push(r));
    this.running++;
    try {
      return await fn();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }
}

export function parseRegistryMirrors(v: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (v ?? '').split(',')) {
    const i = part.indexOf('=');
    if (i > 0)
      out[part.slice(0, i).trim()] = part
        .slice(i + 1)
        .trim()
        .replace(/\/$/, '');
  }
  return out;
}

export class ReleaseRecorder {
  private readonly tracked = new Map<string, Tracked>();
  private readonly loaded = new Set<string>();
  private readonly chains = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  private readonly retryAfterError = new Set<string>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly mirrors: GitMirrors;
  private readonly heavy = new Limiter(2);
  private interval: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly onApp = (e: { type: 'upsert'; app: App } | { type: 'delete'; id: string }) => {
    if (e.type === 'upsert') this.schedule(e.app.id);
  };

  constructor(private readonly o: ReleaseRecorderOptions) {
    this.mirrors = GitMirrors.for(join(o.dataDir, 'release-git'));
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
    // the states, without the periodic verifications (one per interval would push them out of any window)
    const events = await this.o.store.list({
      app: app.id,
      type: RELEASE_EVIDENCE_TYPES.filter((t) => t !== 'release.verification'),
      limit: 200,
    });
    this.loaded.add(app.id);
    // a promotion is recorded on an older release when the next environment catches up: not this app's newest
    const newest = events.find((e) => e.type !== RELEASE_GAP && e.type !== 'release.promotion');
    const sha = typeof newest?.data.sha === 'string' ? newest.data.sha : undefined;
    if (!sha) return;
    const cur = this.releaseSha(app);
    // the revision moved while this console was not recording: say so in the chain, once per restart
    if (cur && cur.sha !== sha && newest)
      this.o.recorder.observe({
        time: new Date().toISOString(),
        type: RELEASE_GAP as EvidenceType,
        actor: 'console',
        app: app.id,
        cluster: app.cluster,
        env: app.env,
        data: {
          from: newest.time,
          to: new Date().toISOString(),
          lastRecordedSha: sha,
          currentSha: cur.sha,
          reason:
            'the console was not recording between these times: the releases in between, if any, are not in the chain',
        },
      });
    const t: Tracked = { sha, revision: String(newest?.data.revision ?? sha), seenAt: Date.now(), recorded: new Map() };
    for (const e of [...events].reverse()) {
      if (e.data.sha !== sha) continue;
      const name = stateOfType(e.type);
      if (!name) continue;
      t.recorded.set(name, {
        status: String(e.data.status ?? 'ok'),
        reason: typeof e.data.reason === 'string' ? e.data.reason : undefined,
        time: e.time,
      });
      if (name === 'change' && typeof e.data.commitTime === 'string') t.commitTime = e.data.commitTime;
      if (name === 'change' && Array.isArray(e.data.parents))
        t.commit = { parents: e.data.parents.map(String), message: String(e.data.message ?? '') };
      if (name === 'reconcile' && e.data.status === 'ok') t.reconciledAt = Date.parse(e.time);
      if (name === 'health') t.healthAt = Date.parse(e.time);
      if (name === 'artifact' && Array.isArray(e.data.images)) t.images = e.data.images as Tracked['images'];
    }
    this.tracked.set(app.id, t);
  }

  private releaseSha(app: App): { sha: string; revision: string } | undefined {
    const w = shaOf(app.source.revisionWanted);
    if (w) return { sha: w, revision: app.source.revisionWanted as string };
    const o = shaOf(app.source.revisionObserved);
    return o ? { sha: o, revision: app.source.revisionObserved as string } : undefined;
  }

  private async tick(id: string): Promise<void> {
    const app = this.o.catalog.get(id);
    if (!app || this.closed) return;
    await this.load(app);
    const cur = this.releaseSha(app);
    if (!cur) return;
    let t = this.tracked.get(id);
    if (!t || t.sha !== cur.sha) {
      t = { sha: cur.sha, revision: cur.revision, seenAt: Date.now(), recorded: new Map() };
      this.tracked.set(id, t);
    }
    const rel = t;
    const expired = Date.now() - rel.seenAt > FOLLOW_MS;

    if (!rel.recorded.has('change')) await this.heavy.run(() => this.recordChange(app, rel, expired));
    if (this.reviewDue(rel, expired)) await this.recordReview(app, rel);
    if (this.superseded(app, rel)) return this.schedule(id);
    if (!rel.recorded.has('render') && this.artifactIsFor(app, rel))
      await this.heavy.run(() => this.recordArtifactAndRender(app, rel));
    if (rel.recorded.get('render')?.status === 'ok' && !rel.recorded.has('validation'))
      await this.heavy.run(() => this.recordValidation(app, rel));
    const latest = this.o.catalog.get(id) ?? app;
    this.recordReconcile(latest, rel);
    if (rel.recorded.get('reconcile')?.status === 'ok' && !rel.promotionChecked)
      await this.recordPromotion(latest, rel);
    this.recordHealth(latest, rel, expired);
    if (rel.recorded.has('health') && !rel.recorded.has('verification'))
      await this.recordVerification(latest, rel, false);

    const done =
      ['change', 'review', 'render', 'reconcile', 'health', 'verification'].every((s) =>
        rel.recorded.has(s as ReleaseStateName),
      ) &&
      (rel.recorded.has('validation') || rel.recorded.get('render')?.status !== 'ok') &&
      rel.reviewRetryAt === undefined;
    if (!done && !expired) this.later(id);
  }

  private superseded(app: App, rel: Tracked): boolean {
    const now = this.o.catalog.get(app.id);
    const cur = now ? this.releaseSha(now) : undefined;
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
    const type = RELEASE_EVIDENCE[state] as EvidenceType;
    const time = new Date().toISOString();
    const status = typeof data.status === 'string' ? data.status : 'ok';
    rel.recorded.set(state, { status, reason: typeof data.reason === 'string' ? data.reason : undefined, time });
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
        ...data,
        status,
      },
    };
    this.o.recorder.observe(ev);
  }

  private controllerActor(app: App): string {
    return app.controller === 'flux'
      ? app.kind === 'HelmRelease'
        ? 'helm-controller'
        : 'kustomize-controller'
      : 'argocd-application-controller';
  }

  // ---- 1 change ----------------------------------------------------------------------------------------------

  private async recordChange(app: App, rel: Tracked, expired: boolean): Promise<void> {
    const url = app.source.url;
    const base = { sourceUrl: redactUrl(url) ?? null };
    if (app.controller === 'flux' && app.source.kind && app.source.kind !== 'GitRepository') {
      this.emit(app, rel, 'change', 'console', {
        ...base,
        status: 'unknown',
        reason: `the source is a ${app.source.kind}, not a Git repository: no commit to read`,
      });
      return;
    }
    if (!url) {
      // right after start the source object may not be in the cache yet: wait for it while the release is followed
      if (!expired) return;
      this.emit(app, rel, 'change', 'console', { ...base, status: 'unknown', reason: 'the app names no source URL' });
      return;
    }
    try {
      const c = await this.readCommit(url, rel.sha);
      rel.commitTime = c.committer.time;
      rel.commit = { parents: c.parents, message: c.message };
      this.emit(app, rel, 'change', 'console', {
        ...base,
        author: c.author,
        committer: c.committer,
        commitTime: c.committer.time,
        signature: c.signature,
        parents: c.parents,
        merge: c.parents.length > 1,
        subject: c.subject,
        message: c.message,
      });
    } catch (e) {
      this.emit(app, rel, 'change', 'console', {
        ...base,
        status: 'unknown',
        reason: `cannot read the commit: ${message(e)}`,
      });
    }
  }

  /** `git fetch` into a bare mirror under the data dir (once per sha), then `git show -s`. */
  async readCommit(rawUrl: string, sha: string): Promise<ReturnType<typeof parseGitShow>> {
    return this.mirrors.with(rawUrl, sha, async (dir) =>
      parseGitShow(await git(['-C', dir, 'show', '-s', `--format=${GIT_SHOW_FORMAT}`, sha])),
    );
  }

  // ---- 2 review ------------------------------------------------------------------------------------------------

  private reviewDue(rel: Tracked, expired: boolean): boolean {
    if (!rel.recorded.has('change')) return false;
    if (!rel.recorded.has('review')) return true;
    if (rel.reviewRetryAt === undefined) return false;
    if (expired) {
      rel.reviewRetryAt = undefined; // the unknown state stays, with its reason
      return false;
    }
    return Date.now() >= rel.reviewRetryAt;
  }

  private async recordReview(app: App, rel: Tracked): Promise<void> {
    const required = (this.o.reviewRequiredEnvs ?? ['prod']).includes(app.env);
    const base = { reviewRequired: required, branch: rel.revision.includes('@') ? rel.revision.split('@')[0] : null };
    const commit = rel.commit;
    const found = app.source.url && this.o.forges ? this.o.forges.forRepoUrl(app.source.url) : undefined;
    if (found?.ok) {
      const { forge, repo } = found.value;
      const r = await forge.mergedPullRequest(repo, rel.sha);
      if (!r.ok) {
        // the forge is down or refused: unknown with why, asked again while the release is followed
        const retry = r.state === 'forge-unreachable';
        rel.reviewRetryAt = retry ? Date.now() + (this.o.reviewRetryMs ?? REVIEW_RETRY_MS) : undefined;
        if (rel.recorded.get('review')?.reason !== r.message)
          this.emit(app, rel, 'review', 'console', {
            ...base,
            source: 'forge',
            forge: `${forge.kind} ${repo.host}`,
            status: 'unknown',
            reason: r.message,
          });
        return;
      }
      rel.reviewRetryAt = undefined;
      const pr = r.value;
      if (pr) {
        const approvers = pr.approvers.map((a) => a.login);
        const unreviewed = approvers.length === 0;
        this.emit(app, rel, 'review', pr.mergedBy ?? pr.author, {
          ...base,
          source: 'forge',
          forge: `${forge.kind} ${repo.host}`,
          pullRequest: {
            number: pr.number,
            url: pr.url,
            title: pr.title.slice(0, 300),
            author: pr.author,
            mergedAt: pr.mergedAt,
            mergedBy: pr.mergedBy ?? null,
            baseBranch: pr.baseBranch,
            headBranch: pr.headBranch,
          },
          approvers,
          approvals: pr.approvers.map((a) => ({ login: a.login, at: a.at ?? null, commit: a.commit ?? null })),
          mergeTime: pr.mergedAt,
          ...(unreviewed && required
            ? { status: 'failed', reason: `pull request #${pr.number} was merged without an approving review` }
            : {}),
        });
        return;
      }
      // no pull request merged it: a direct push (review trailers, if any, are named but not a forge review)
      const fromCommit = commit ? reviewFromCommit(commit, required) : undefined;
      this.emit(app, rel, 'review', 'console', {
        ...base,
        source: 'forge',
        forge: `${forge.kind} ${repo.host}`,
        pullRequest: null,
        directPush: true,
        merge: fromCommit?.merge ?? null,
        approvers: [],
        trailers: fromCommit?.approvers ?? [],
        ...(required
          ? {
              status: 'failed',
              reason: `direct push: no pull request on ${repo.host} merged this commit, and ${app.env} requires review`,
            }
          : {}),
      });
      return;
    }
    rel.reviewRetryAt = undefined;
    const noForge = found && !found.ok ? found.message : 'no forge configured';
    if (!commit) {
      this.emit(app, rel, 'review', 'console', {
        ...base,
        source: 'commit',
        forge: noForge,
        status: 'unknown',
        reason: `${noForge}, and the commit could not be read`,
      });
      return;
    }
    const v = reviewFromCommit(commit, required);
    this.emit(app, rel, 'review', 'console', {
      ...base,
      source: 'commit',
      forge: noForge,
      merge: v.merge,
      directPush: v.directPush,
      approvers: v.approvers,
      ...(v.status !== 'ok' ? { status: v.status, reason: v.reason } : {}),
    });
  }

  // ---- 5 validation --------------------------------------------------------------------------------------------

  private async recordValidation(app: App, rel: Tracked): Promise<void> {
    if (!this.o.validate) {
      this.emit(app, rel, 'validation', 'console', {
        status: 'unknown',
        reason: 'no server-side dry-run configured for the recorder',
      });
      return;
    }
    let v: ValidationResult;
    try {
      v = await this.o.validate(app);
    } catch (e) {
      this.emit(app, rel, 'validation', 'console', {
        status: 'unknown',
        reason: `the server-side dry-run could not run: ${message(e)}`,
      });
      return;
    }
    const rendered = shaOf(v.revision);
    if (rendered && rendered !== rel.sha) return; // the source moved on meanwhile: the next tick validates again
    const status = v.rejected.length ? 'failed' : v.unchecked.length ? 'unknown' : 'ok';
    const first = v.rejected[0] ?? v.unchecked[0];
    this.emit(app, rel, 'validation', 'console', {
      renderHash: v.renderHash ?? null,
      accepted: v.accepted,
      rejected: v.rejected.length,
      unchecked: v.unchecked.length,
      objects: [
        ...v.rejected.map((r) => ({ ...r, result: 'rejected' })),
        ...v.unchecked.map((r) => ({ ...r, result: 'unchecked' })),
      ].slice(0, 50),
      ...(status !== 'ok'
        ? {
            status,
            reason:
              status === 'failed'
                ? `the API server rejected ${v.rejected.length} object(s) in a dry-run, e.g. ${first?.object}: ${first?.reason}`
                : `${v.unchecked.length} object(s) could not be dry-run, e.g. ${first?.object}: ${first?.reason}`,
          }
        : {}),
    });
  }

  // ---- 9 promotion ---------------------------------------------------------------------------------------------

  /**
   * This release was applied: if the previous environment's app of the same family ran the same image digests
   * in one of its releases, that release was promoted here. Recorded on the earlier release, once.
   */
  private async recordPromotion(app: App, rel: Tracked): Promise<void> {
    const order = this.o.envOrder ?? ['dev', 'staging', 'prod'];
    const at = order.indexOf(app.env);
    if (at <= 0 || !rel.images) {
      rel.promotionChecked = rel.images !== undefined || at <= 0;
      return;
    }
    // every image must have a digest (pinned or resolved): otherwise the releases cannot be compared
    if (rel.images.some((i) => !i.digest && !i.resolved)) {
      rel.promotionChecked = true;
      return;
    }
    const here = releaseDigests(rel.images);
    const prevEnv = order[at - 1];
    const prev = familyOf(app, this.o.catalog.list(), order).find((a) => a.env === prevEnv);
    if (!prev || !here.length) {
      rel.promotionChecked = true;
      return;
    }
    const artifacts = await this.o.store.list({ app: prev.id, type: ['release.artifact'], limit: 50 });
    // the release that brought these digests to the previous environment: the oldest of the newest run of its
    // releases that all name them (in a monorepo, later commits for other environments keep the same digests)
    const matches = (e: (typeof artifacts)[number]) => {
      const imgs = Array.isArray(e.data.images) ? (e.data.images as Array<Record<string, unknown>>) : [];
      if (!imgs.length || imgs.some((i) => typeof i.digest !== 'string' && typeof i.resolved !== 'string'))
        return false;
      return promoted(releaseDigests(imgs), here) === true;
    };
    let match: (typeof artifacts)[number] | undefined;
    for (const e of artifacts) {
      if (matches(e)) match = e;
      else if (match) break;
    }
    const fromSha = typeof match?.data.sha === 'string' ? match.data.sha : undefined;
    if (!match || !fromSha) {
      rel.promotionChecked = true;
      return;
    }
    const done = await this.o.store.list({ app: prev.id, type: ['release.promotion'], limit: 100 });
    const reconciled = (await this.o.store.list({ app: prev.id, type: ['release.reconcile'], limit: 100 })).find(
      (e) => e.data.sha === fromSha && e.data.status === 'ok',
    );
    rel.promotionChecked = true; // the reads succeeded: a failure above leaves it to the next tick
    if (done.some((e) => e.data.sha === fromSha && e.data.toSha === rel.sha)) return;
    const now = new Date().toISOString();
    this.o.recorder.observe({
      time: now,
      type: 'release.promotion',
      actor: this.controllerActor(app),
      app: prev.id,
      cluster: prev.cluster,
      env: prev.env,
      data: {
        sha: fromSha,
        revision: String(match.data.revision ?? fromSha),
        controller: prev.controller,
        status: 'ok',
        toEnv: app.env,
        toApp: app.id,
        toCluster: app.cluster,
        toSha: rel.sha,
        digests: here.filter((d) =>
          releaseDigests(
            (Array.isArray(match.data.images) ? match.data.images : []) as Array<Record<string, unknown>>,
          ).includes(d),
        ),
        secondsAfter: secondsBetween(reconciled?.time ?? match.time, now) ?? null,
      },
    });
  }

  // ---- 3 artifact, 4 render ---------------------------------------------------------------------------------

  private async recordArtifactAndRender(app: App, rel: Tracked): Promise<void> {
    const digest = app.source.artifactDigest ?? null;
    let render: RenderResult;
    try {
      render = await this.o.desired(app);
    } catch (e) {
      const source = e instanceof RenderError && e.stage === 'source';
      if (!rel.recorded.has('artifact'))
        this.emit(app, rel, 'artifact', 'console', {
          artifactDigest: digest,
          sourceUrl: redactUrl(app.source.url) ?? null,
          ...(source
            ? { status: 'unknown', reason: `source not fetched: ${message(e)}` }
            : { images: [], imagesUnknown: 'the render failed: no images to list' }),
        });
      this.emit(app, rel, 'render', 'console', {
        status: source ? 'unknown' : 'failed',
        reason: source ? `no source to render: ${message(e)}` : `render failed: ${message(e)}`,
        stage: e instanceof RenderError ? e.stage : 'unknown',
      });
      return;
    }
    const rendered = shaOf(render.revision);
    if (rendered && rendered !== rel.sha) return; // the source moved on meanwhile (or Argo CD is at another revision)
    const images: Array<ImageRef & { resolved?: string; resolveError?: string }> = [];
    for (const img of imagesOf(render.objects).slice(0, 100)) {
      const r = img.digest ? {} : await this.resolveTag(img.image);
      images.push({ ...img, ...r });
    }
    rel.images = images;
    this.emit(app, rel, 'artifact', 'console', {
      artifactDigest: render.artifactDigest ?? digest,
      sourceUrl: redactUrl(app.source.url) ?? null,
      images,
      mutableImages: images.filter((i) => i.mutable).length,
    });
    this.emit(app, rel, 'render', 'console', {
      renderer: render.renderer,
      renderedRevision: render.revision,
      renderHash: render.renderHash,
      objects: render.objects.length,
    });
  }

  /** A tag's digest at a configured registry mirror (HEAD on the manifest); nothing when none is configured. */
  private async resolveTag(image: string): Promise<{ resolved?: string; resolveError?: string }> {
    const p = parseImage(image);
    const slash = p.name.indexOf('/');
    const host = slash > 0 ? p.name.slice(0, slash) : '';
    const base = this.o.registryMirrors?.[host];
    if (!base) return {};
    try {
      const r = await fetch(`${base}/v2/${p.name.slice(slash + 1)}/manifests/${p.tag ?? 'latest'}`, {
        method: 'HEAD',
        headers: {
          accept: [
            'application/vnd.oci.image.index.v1+json',
            'application/vnd.oci.image.manifest.v1+json',
            'application/vnd.docker.distribution.manifest.list.v2+json',
            'application/vnd.docker.distribution.manifest.v2+json',
          ].join(', '),
        },
        signal: AbortSignal.timeout(5000),
      });
      const d = r.headers.get('docker-content-digest');
      return r.ok && d ? { resolved: d } : { resolveError: `registry answered HTTP ${r.status}` };
    } catch (e) {
      return { resolveError: message(e) };
    }
  }

  // ---- 6 reconcile, 7 health ----------------------------------------------------------------------------------

  private recordReconcile(app: App, rel: Tracked): void {
    const prev = rel.recorded.get('reconcile');
    if (prev?.status === 'ok') return;
    const ready = app.conditions.find((c) => c.type === 'Ready');
    const readyView = ready
      ? { status: ready.status, reason: ready.reason ?? null, message: ready.message?.slice(0, 1000) ?? null }
      : null;
    const base = {
      secondsAfterCommit: secondsBetween(rel.commitTime, new Date().toISOString()) ?? null,
      ready: readyView,
    };
    const applied = shaOf(app.source.revisionObserved) === rel.sha;
    if (app.controller === 'flux') {
      if (applied && ready?.status === 'True') {
        rel.reconciledAt = Date.now();
        this.emit(app, rel, 'reconcile', this.controllerActor(app), {
          ...base,
          appliedRevision: app.source.revisionObserved,
        });
        return;
      }
      const attempted = shaOf(app.source.revisionAttempted) === rel.sha;
      if ((attempted || applied) && ready?.status === 'False') {
        const reason = `${ready.reason ?? 'Ready=False'}: ${ready.message ?? ''}`.slice(0, 1000);
        if (prev?.reason === reason) return;
        this.emit(app, rel, 'reconcile', this.controllerActor(app), {
          ...base,
          ...(applied ? { appliedRevision: app.source.revisionObserved } : {}),
          attemptedRevision: app.source.revisionAttempted ?? null,
          status: 'failed',
          reason,
        });
      }
      return;
    }
    // Argo CD: synced at this revision; an error condition fails it
    const err = app.conditions.find((c) => /Error$/.test(c.type));
    if (applied && app.sync === 'Synced') {
      rel.reconciledAt = Date.now();
      this.emit(app, rel, 'reconcile', this.controllerActor(app), {
        ...base,
        appliedRevision: app.source.revisionObserved,
      });
    } else if (err) {
      const reason = `${err.type}: ${err.message ?? ''}`.slice(0, 1000);
      if (prev?.reason === reason) return;
      this.emit(app, rel, 'reconcile', this.controllerActor(app), { ...base, status: 'failed', reason });
    }
  }

  private recordHealth(app: App, rel: Tracked, expired: boolean): void {
    if (rel.recorded.has('health') || rel.recorded.get('reconcile')?.status !== 'ok') return;
    const since = rel.reconciledAt ?? Date.now();
    if (Date.now() - since < HEALTH_SETTLE_MS) return;
    const settled = ['Healthy', 'Degraded', 'Missing', 'Suspended'].includes(app.health);
    if (!settled && !expired) return;
    rel.healthAt = Date.now();
    this.emit(app, rel, 'health', 'console', {
      health: app.health,
      message: app.healthMessage.slice(0, 1000),
      secondsAfterReconcile: Math.round((Date.now() - since) / 100) / 10,
      secondsAfterCommit: secondsBetween(rel.commitTime, new Date().toISOString()) ?? null,
      ...(app.health === 'Healthy'
        ? {}
        : {
            status: app.health === 'Degraded' || app.health === 'Missing' ? 'failed' : 'unknown',
            reason: settled
              ? `${app.health}: ${app.healthMessage}`.slice(0, 1000)
              : `still ${app.health} ${Math.round(FOLLOW_MS / 60_000)} min after the revision appeared: ${app.healthMessage}`.slice(
                  0,
                  1000,
                ),
          }),
    });
  }

  // ---- 8 verification -------------------------------------------------------------------------------------------

  private verifications(): Record<string, Partial<VerificationSpec>> {
    const f = this.o.verificationsFile;
    if (!f) return {};
    try {
      return JSON.parse(readFileSync(f, 'utf8')) as Record<string, Partial<VerificationSpec>>;
    } catch (e) {
      this.o.log.warn({ file: f, err: message(e) }, 'release recorder: cannot read the verifications file');
      return {};
    }
  }

  /** Running Pods under the app's managed objects (owner references, through the object index). */
  private livePods(app: App): PodImage[] {
    const out: PodImage[] = [];
    const seen = new Set<string>();
    const walk = (o: KubeObject | undefined, depth: number) => {
      const uid = o?.metadata?.uid;
      if (!o || !uid || seen.has(uid) || depth > 4) return;
      seen.add(uid);
      if (o.kind === 'Pod') {
        const st = (
          o as {
            status?: { phase?: string; containerStatuses?: Array<{ name?: string; image?: string; imageID?: string }> };
          }
        ).status;
        const gone = (o.metadata as { deletionTimestamp?: string } | undefined)?.deletionTimestamp;
        if (st?.phase === 'Running' && !gone)
          for (const cs of st.containerStatuses ?? [])
            out.push({
              pod: o.metadata?.name ?? '?',
              container: cs.name ?? '?',
              image: cs.image ?? '',
              imageID: cs.imageID ?? '',
            });
        return;
      }
      for (const c of this.o.index.childrenOf(app.cluster, uid)) walk(c, depth + 1);
    };
    for (const r of app.inventory) {
      if (!['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job', 'CronJob', 'Pod'].includes(r.kind)) continue;
      const o = this.o.index.get(app.cluster, r);
      if (o) walk({ ...o, kind: o.kind ?? r.kind }, 0);
    }
    return out;
  }

  private async recordVerification(app: App, rel: Tracked, periodic: boolean): Promise<void> {
    const images = rel.images ?? [];
    let live = checkLiveDigests(images, this.livePods(app));
    // right after a reconcile the old Pods may still run: wait (bounded) for the rollout before judging
    const sinceHealth = Date.now() - (rel.healthAt ?? 0);
    if (!periodic && (live.unexpected.length || live.unresolved) && sinceHealth < ROLLOUT_SETTLE_MS) return;
    const spec = verificationFor(this.verifications(), app);
    const http = spec ? await this.httpCheck(spec) : undefined;
    live = checkLiveDigests(images, this.livePods(app));
    const reasons: string[] = [];
    let status: 'ok' | 'failed' | 'unknown' = 'ok';
    if (!spec) {
      status = 'unknown';
      reasons.push(`no HTTP check configured for ${app.cluster}/${app.env} or ${app.id}`);
    } else if (http && !http.ok) {
      status = 'failed';
      reasons.push(`HTTP check: ${http.reason}`);
    }
    if (live.unexpected.length) {
      status = 'failed';
      const u = live.unexpected[0];
      reasons.push(
        `${live.unexpected.length} container(s) run a digest Git did not name (e.g. ${u?.pod}/${u?.container}: ${u?.digest})`,
      );
    }
    if (live.pods === 0 && images.length) {
      if (status === 'ok') status = 'unknown';
      reasons.push('no running Pods found for the images Git names');
    }
    this.emit(app, rel, 'verification', 'console', {
      periodic,
      ...(http ? { http } : { http: { configured: false } }),
      live,
      gitDigests: images.map((i) => ({ image: i.image, digest: i.digest ?? i.resolved ?? null, mutable: i.mutable })),
      ...(status !== 'ok' ? { status, reason: reasons.join('; ') } : {}),
    });
  }

  private async httpCheck(spec: VerificationSpec): Promise<Record<string, unknown> & { ok: boolean; reason: string }> {
    const t0 = performance.now();
    const url = redactUrl(spec.url) ?? spec.url;
    try {
      assertFetchableUrl(spec.url);
      const r = await fetch(spec.url, { redirect: 'manual', signal: AbortSignal.timeout(spec.timeoutMs) });
      const body = (await r.text()).slice(0, 64 * 1024);
      const latencyMs = Math.round(performance.now() - t0);
      const headers: Record<string, string> = {};
      r.headers.forEach((v, k) => (headers[k] = v));
      const j = judgeVerification(spec, { status: r.status, body, headers });
      return {
        url,
        status: r.status,
        latencyMs,
        body: excerpt(body),
        ...(spec.versionHeader ? { version: headers[spec.versionHeader.toLowerCase()] ?? null } : {}),
        ...j,
      };
    } catch (e) {
      const j = judgeVerification(spec, { error: message(e) });
      return { url, latencyMs: Math.round(performance.now() - t0), ...j };
    }
  }

  /** Every interval: a verification of each app's applied release (status changes show between releases too). */
  private verifyAll(): void {
    for (const [id, rel] of this.tracked) {
      const app = this.o.catalog.get(id);
      if (!app || rel.recorded.get('reconcile')?.status !== 'ok' || this.chains.has(id)) continue;
      if (this.superseded(app, rel)) continue; // a new revision: its own tick verifies it
      if (this.o.reachable && !this.o.reachable(app.cluster)) continue;
      const p = this.recordVerification(app, rel, true)
        .catch((e: unknown) => this.o.log.warn({ app: id, err: message(e) }, 'release recorder: verification failed'))
        .finally(() => {
          this.chains.delete(id);
          if (this.again.delete(id)) this.schedule(id);
        });
      this.chains.set(id, p);
    }
  }
}

/**
 * The validation state from the diff's server-side dry-runs (as the controller's field manager, as the
 * console's identity): each rendered object the API server accepted, rejected (its words), or that could not be
 * checked (dry-run forbidden). Throws when the render is unknown.
 */
export async function validateRender(
  diffs: { diff(a: App, user: undefined): Promise<AppDiff> },
  app: App,
): Promise<ValidationResult> {
  const d = await diffs.diff(app, undefined);
  if (d.state === 'unknown') throw new Error(d.error ?? 'the render is unknown');
  const out: ValidationResult = {
    revision: d.render?.revision,
    renderHash: d.render?.renderHash,
    accepted: 0,
    rejected: [],
    unchecked: [],
  };
  for (const o of d.objects) {
    if (o.status === 'extraneous') continue;
    const object = `${o.ref.kind}/${o.ref.namespace ? `${o.ref.namespace}/` : ''}${o.ref.name}`;
    if (o.mode === 'server-dry-run') out.accepted++;
    else {
      const failed = /server-side dry-run failed: (.*)$/.exec(o.note ?? '');
      if (failed?.[1]) out.rejected.push({ object, reason: failed[1].slice(0, 500) });
      else out.unchecked.push({ object, reason: (o.note ?? 'not dry-run').slice(0, 500) });
    }
  }
  return out;
}
