// The release recorder and canaries (issue 25): for an app whose objects include an Argo Rollout or a Flagger
// Canary, each step its canary reaches is recorded as `release.canary` (step, weight, phase, the analyses with their
// measurements, Flagger's failed checks), and the release's verification is the canary's outcome — promoted all the way, or aborted with what the analysis
// measured (see domain/release-canary.ts). Health waits while a canary runs: a paused canary is not the release's
// health.
import type { App } from '../../domain/app.ts';
import { shaOf } from '../../domain/release-commit.ts';
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
export function canariesOf(
  ctx: StateContext,
  app: App,
  rel?: Tracked,
): { outcomes: CanaryOutcome[]; missing: string[] } {
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
      const target = String((o as { spec?: { targetRef?: { name?: string } } }).spec?.targetRef?.name ?? '');
      const dep = (name: string) =>
        ctx.o.index.get(app.cluster, {
          group: 'apps',
          kind: 'Deployment',
          ...(r.namespace ? { namespace: r.namespace } : {}),
          name,
        }) as Obj | undefined;
      outcomes.push(
        flaggerOutcome(o as Obj, rel?.canaryPeak?.get(`Canary ${r.namespace ?? ''}/${r.name}`), {
          ...(dep(target) ? { target: dep(target) } : {}),
          ...(dep(`${target}-primary`) ? { primary: dep(`${target}-primary`) } : {}),
        }),
      );
      continue;
    }
    const uid = o.metadata?.uid;
    // its children are its ReplicaSets and its AnalysisRuns (list items carry no kind: a run has spec.metrics)
    const runs = uid
      ? ctx.o.index
          .childrenOf(app.cluster, uid)
          .filter((c: KubeObject) => Array.isArray((c as { spec?: { metrics?: unknown } }).spec?.metrics))
      : [];
    outcomes.push(
      canaryOutcome(o as Obj, runs as Obj[], rel?.canaryPeak?.get(`Rollout ${r.namespace ?? ''}/${r.name}`)),
    );
  }
  return { outcomes, missing };
}

/**
 * Where the app's canaries stand for its health: `running` (one not yet promoted nor aborted: health waits for it),
 * `aborted` (the controller gave up on one: its Degraded is confirmed, no need to watch it last), else `none`.
 */
export function canaryPhase(ctx: StateContext, app: App, rel?: Tracked): 'running' | 'aborted' | 'none' {
  const o = canariesOf(ctx, app, rel).outcomes;
  if (o.some((c) => c.state === 'aborted')) return 'aborted';
  return o.some((c) => c.state === 'progressing') ? 'running' : 'none';
}

/** Records each new step of the app's canaries for the release followed (once per change). */
export function recordCanarySteps(ctx: StateContext, app: App, rel: Tracked): void {
  // once the controller has applied this revision (its canary cannot have started before); not waiting for the
  // reconcile state's record, which follows the slower states: a canary step can last seconds
  if (rel.recorded.get('reconcile')?.status !== 'ok' && shaOf(app.source.revisionObserved) !== rel.sha) return;
  const seen = (rel.canarySeen ??= new Map());
  const peaks = (rel.canaryPeak ??= new Map());
  for (const c of canariesOf(ctx, app, rel).outcomes) {
    const id = `${c.kind} ${c.namespace}/${c.name}`;
    // the furthest a canary got (a Flagger Canary's iterations and failed checks, a Rollout's step): both
    // controllers reset them when they give up, and the verification says where it failed
    if (c.state === 'progressing') {
      const p = peaks.get(id);
      peaks.set(id, {
        iteration: Math.max(p?.iteration ?? 0, c.step ?? 0),
        failedChecks: Math.max(p?.failedChecks ?? 0, c.failedChecks?.count ?? 0),
      });
    }
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
