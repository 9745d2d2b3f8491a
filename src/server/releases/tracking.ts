// What the release recorder keeps of the release it follows per app (the states recorded so far, the times and
// images later states need), its timings, and the context each state's recorder (record-*.ts) is given.
import type { App } from '../../domain/app.ts';
import type { EvidenceType } from '../../domain/evidence.ts';
import { shaOf } from '../../domain/release-commit.ts';
import type { ImageRef } from '../../domain/release-images.ts';
import type { ReleaseStateName } from '../../domain/release.ts';
import type { ReleaseRecorderOptions } from './recorder-options.ts';

export interface Recorded {
  status: string;
  reason?: string | undefined;
  time: string;
}

export interface Tracked {
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
  /** its render is the running release's (this sha): no change here, no release of this app (release-effect.ts) */
  unchangedFrom?: string | undefined;
  /** the promotion into this release's environment was looked for */
  promotionChecked?: boolean;
  /** since when the app has been Degraded or Missing after the reconcile, while that is not yet the release's health */
  unhealthySince?: number | undefined;
  /** per Rollout (`ns/name`): the canary's last recorded step (record-canary.ts) */
  canarySeen?: Map<string, string>;
  /** per canary: the furthest step / most iterations and failed checks seen (reset when the canary is given up) */
  canaryPeak?: Map<string, { iteration: number; failedChecks: number }>;
  /** a commit recorded as claiming image automation, looked at again until its controller reports the push */
  pushReport?:
    | {
        data: Record<string, unknown>;
        commit: { sha: string; author: { name: string; email: string }; committerTime: string };
        until: number;
      }
    | undefined;
  /** the release of this app the recorder followed before this one (its commit range starts after it) */
  previousSha?: string | undefined;
  /** Flux: since when (ISO) and on what its controller held this release for a dependency (record-reconcile.ts) */
  dependencyWait?: { since: string; on: string[]; line: string } | undefined;
}

/** How long a release is followed before its missing states are recorded as unknown. */
export const FOLLOW_MS = 15 * 60_000;
export const TICK_MS = 3000;
/** after the reconcile, health is taken once the objects had this long to start rolling */
export const HEALTH_SETTLE_MS = 3000;
/**
 * Degraded or Missing right after a rollout is often a moment (an HPA waiting for its new Pods' first metrics —
 * metrics-server needs two scrapes —, a Pod that restarts once): it becomes the release's health once it has
 * lasted this long; Healthy in between wins. A release followed to its end records what it then sees.
 */
export const UNHEALTHY_CONFIRM_MS = 60_000;
/** the live-digest check waits this long for a rollout to finish before it records what it sees */
export const ROLLOUT_SETTLE_MS = 90_000;
/** a forge that did not answer is asked again after this long (while the release is followed) */
export const REVIEW_RETRY_MS = 20_000;

export const message = (e: unknown) => (e instanceof Error ? e.message : String(e)).slice(0, 2000);

/** What a state's recorder works with: the recorder's options, and `emit` to record the state as evidence. */
export interface StateContext {
  readonly o: ReleaseRecorderOptions;
  emit(app: App, rel: Tracked, state: ReleaseStateName, actor: string, data: Record<string, unknown>): void;
  /** records evidence of the release that is not one of its states (a canary's step) */
  emitOther(app: App, rel: Tracked, type: EvidenceType, actor: string, data: Record<string, unknown>): void;
}

/** The revision the app's controller is asked to apply (or, without one, has applied), and its commit sha. */
export function releaseSha(app: App): { sha: string; revision: string } | undefined {
  const w = shaOf(app.source.revisionWanted);
  if (w) return { sha: w, revision: app.source.revisionWanted as string };
  const o = shaOf(app.source.revisionObserved);
  return o ? { sha: o, revision: app.source.revisionObserved as string } : undefined;
}

export function controllerActor(app: App): string {
  return app.controller === 'flux'
    ? app.kind === 'HelmRelease'
      ? 'helm-controller'
      : 'kustomize-controller'
    : 'argocd-application-controller';
}
