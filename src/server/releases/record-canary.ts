// The release recorder and canaries (issue 25): for an app whose objects include an Argo Rollout or a Flagger
// Canary, each step its canary reaches is recorded as `release.canary` (step, weight, phase, the analyses with their
// measurements, Flagger's failed checks), and the release's verification is the canary's outcome — promoted all the way, or aborted with what the analysis
// measured (see domain/release-canary.ts). Health waits while a canary runs: a paused canary is not the release's
// health.
import type { App } from '../../domain/app.ts';
import type { EvidenceType } from '../../domain/evidence.ts';
import { FLAGGER_GROUP } from '../../domain/flagger.ts';
import { RELEASE_CANARY } from '../../domain/release.ts';
import { canaryKey, canaryOutcome, flaggerOutcome, type CanaryOutcome } from '../../domain/release-canary.ts';
import type { KubeObject } from '../kube/informer.ts';
import type { StateContext, Tracked } from './tracking.ts';

type Obj = Record<string, unknown>;

/**
 * The app's Rollouts and where their canaries stand; `missing` names a Rollout Git manages that the console cannot
 * see (not listed yet, or not readable): its outcome is unknown, never "promoted".
 */
export function canariesOf(ctx: StateContext, app: App): { outcomes: CanaryOutcome[]; missing: string[] } {
  const outcomes: CanaryOutcome[] = [];
  const missing: string[] = [];
  for (const r of app.inventory) {
    const flagger = r.group === FLAGGER_GROUP && r.kind === 'Canary';
    if (!flagger && (r.group !== 'argoproj.io' || r.kind !== 'Rollout')) continue;
    const o = ctx.o.index.get(app.cluster, {
      group: r.group,
      kind: r.kind,
      ...(r.namespace ? { namespace: r.namespace } : {}),
      name: r.name,
    });
    if (!o) {
      missing.push(`${r.kind} ${r.namespace ?? ''}/${r.name}`);
      continue;
    }
    if (flagger) {
      outcomes.push(flaggerOutcome(o as Obj));
      continue;
    }
    const uid = o.metadata?.uid;
    // its children are its ReplicaSets and its AnalysisRuns (list items carry no kind: a run has spec.metrics)
    const runs = uid
      ? ctx.o.index
          .childrenOf(app.cluster, uid)
          .filter((c: KubeObject) => Array.isArray((c as { spec?: { metrics?: unknown } }).spec?.metrics))
      : [];
    outcomes.push(canaryOutcome(o as Obj, runs as Obj[]));
  }
  return { outcomes, missing };
}

/** Does the app run a canary now (a Rollout not yet promoted nor aborted)? Health waits for it. */
export function canaryRunning(ctx: StateContext, app: App): boolean {
  return canariesOf(ctx, app).outcomes.some((c) => c.state === 'progressing');
}

/** Records each new step of the app's canaries for the release followed (once per change). */
export function recordCanarySteps(ctx: StateContext, app: App, rel: Tracked): void {
  if (rel.recorded.get('reconcile')?.status !== 'ok') return;
  const seen = (rel.canarySeen ??= new Map());
  for (const c of canariesOf(ctx, app).outcomes) {
    const id = `${c.kind} ${c.namespace}/${c.name}`;
    const key = canaryKey(c);
    if (seen.get(id) === key) continue;
    seen.set(id, key);
    ctx.emitOther(app, rel, RELEASE_CANARY as EvidenceType, c.kind === 'Canary' ? 'flagger' : 'argo-rollouts', {
      kind: c.kind,
      rollout: id,
      state: c.state,
      // a Rollout's step (1-based), a Flagger Canary's iterations done
      step: c.step === null ? null : c.kind === 'Rollout' ? c.step + 1 : c.step,
      steps: c.steps,
      weight: c.weight,
      phase: c.phase,
      stableHash: c.stableHash,
      canaryHash: c.canaryHash,
      analyses: c.analyses,
      ...(c.failedChecks ? { failedChecks: c.failedChecks } : {}),
      reason: c.reason,
      ...(c.state === 'aborted' ? { status: 'failed' } : {}),
    });
  }
}
