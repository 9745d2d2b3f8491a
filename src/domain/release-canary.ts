// A canary as the verification state of a release (issue 25). For an app with an Argo Rollout (or a Flagger
// Canary), "verified" means the canary was promoted all the way, and "failed" means it was aborted (or rolled
// back), with what the analysis measured. The recorder (server/releases/record-canary.ts) records each step the
// canary reaches as `release.canary` and the outcome as the release's `release.verification`. Pure.
import { flaggerCanaryView } from './flagger.ts';
import { rolloutView } from './rollout.ts';

type Obj = Record<string, unknown>;
const asObj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
const arr = (v: unknown): Obj[] => (Array.isArray(v) ? (v as unknown[]).map(asObj) : []);

export interface AnalysisSummary {
  name: string;
  /** the canary step that ran it (its `step-index` label, 0-based); null for a background analysis */
  stepIndex: number | null;
  phase: string;
  message: string | null;
  startedAt: string | null;
  metrics: Array<{
    name: string;
    phase: string;
    successful: number;
    failed: number;
    error: number;
    message: string | null;
    /** the last measurements (at most 5): what was measured, when, and its verdict */
    measurements: Array<{ phase: string; value: string | null; message: string | null; at: string | null }>;
  }>;
}

/** What a run measured, as evidence keeps it (bounded: 5 measurements per metric, messages cut at 300 chars). */
export function summarizeAnalysis(run: Obj): AnalysisSummary {
  const md = asObj(run.metadata);
  const st = asObj(run.status);
  const cut = (v: unknown) => (str(v) ? (v as string).slice(0, 300) : null);
  const step = Number(asObj(md.labels)['step-index']);
  return {
    name: str(md.name) ?? '?',
    stepIndex: Number.isInteger(step) && step >= 0 ? step : null,
    phase: str(st.phase) ?? 'Pending',
    message: cut(st.message),
    startedAt: str(st.startedAt) ?? str(md.creationTimestamp) ?? null,
    metrics: arr(st.metricResults).map((m) => ({
      name: str(m.name) ?? 'metric',
      phase: str(m.phase) ?? 'Pending',
      successful: typeof m.successful === 'number' ? m.successful : 0,
      failed: typeof m.failed === 'number' ? m.failed : 0,
      error: typeof m.error === 'number' ? m.error : 0,
      message: cut(m.message),
      measurements: arr(m.measurements)
        .slice(-5)
        .map((x) => ({
          phase: str(x.phase) ?? '?',
          value: x.value === undefined ? null : String(x.value).slice(0, 200),
          message: cut(x.message),
          at: str(x.finishedAt) ?? str(x.startedAt) ?? null,
        })),
    })),
  };
}

/** The first failing measurement of a run, in words: "business-endpoint: received non 2xx response code: 503". */
export function measuredReason(a: AnalysisSummary): string | undefined {
  for (const m of a.metrics) {
    if (m.phase === 'Successful' || m.phase === 'Running' || m.phase === 'Pending') continue;
    const bad = [...m.measurements].reverse().find((x) => x.phase !== 'Successful' && x.phase !== 'Running');
    const what =
      bad?.message ?? (bad?.value !== null && bad?.value !== undefined ? `measured ${bad.value}` : undefined);
    return `${m.name} ${m.phase.toLowerCase()}: ${what ?? m.message ?? 'no measurement message'}`;
  }
  return a.message ?? undefined;
}

export type CanaryState = 'progressing' | 'promoted' | 'aborted';

export interface CanaryOutcome {
  /** an Argo Rollout, or a Flagger Canary */
  kind: 'Rollout' | 'Canary';
  namespace: string;
  name: string;
  state: CanaryState;
  /** the step the canary is on (null before it starts) and how many there are */
  step: number | null;
  steps: number;
  weight: number;
  phase: string;
  /** the stable and the canary revision: pod-template hashes (Rollouts), or last promoted/applied spec (Flagger) */
  stableHash: string | null;
  canaryHash: string | null;
  /** Flagger: failed checks of this canary and the threshold that rolls it back */
  failedChecks?: { count: number; threshold: number | null };
  /** the AnalysisRuns of this canary (its pod-template hash), oldest first */
  analyses: AnalysisSummary[];
  /** why it is not (yet) promoted: the abort's measured reason, the pause, the step */
  reason: string;
}

const hashOf = (run: Obj): string | undefined => str(asObj(asObj(run.metadata).labels)['rollouts-pod-template-hash']);

/**
 * Where a Rollout's canary stands. `promoted`: the controller observed the spec and the stable ReplicaSet is the
 * current pod template (the canary was promoted all the way, or the release did not change the pod template).
 * `aborted`: the controller aborted it (an analysis failed, or
 * someone aborted it), with the analysis's measured reason. Anything else is `progressing`.
 */
export function canaryOutcome(
  rollout: Obj,
  runs: Obj[],
  /** the furthest step (0-based) seen while the canary ran: an abort resets the Rollout's step to 0 */
  peak?: { iteration: number },
): CanaryOutcome {
  const v = rolloutView(rollout);
  const md = asObj(rollout.metadata);
  const st = asObj(rollout.status);
  const observed = typeof st.observedGeneration === 'string' ? Number(st.observedGeneration) : st.observedGeneration;
  const seen = observed === undefined || observed === md.generation;
  const mine = runs
    .filter((r) => !v.canaryHash || hashOf(r) === v.canaryHash)
    .sort((a, b) =>
      String(asObj(a.metadata).creationTimestamp ?? '').localeCompare(
        String(asObj(b.metadata).creationTimestamp ?? ''),
      ),
    )
    .map(summarizeAnalysis);
  const failedRun = [...mine].reverse().find((a) => ['Failed', 'Error', 'Inconclusive'].includes(a.phase));
  let state: CanaryState = 'progressing';
  let reason: string;
  if (seen && v.aborted) {
    state = 'aborted';
    const measured = failedRun ? measuredReason(failedRun) : undefined;
    const at = failedRun?.stepIndex ?? peak?.iteration ?? null;
    reason = `canary ${v.namespace}/${v.name} aborted${at !== null ? ` at step ${at + 1} of ${v.steps.length}` : ''}: ${
      measured ? `analysis ${failedRun?.name} ${measured}` : v.message || 'aborted (no analysis failed: by hand?)'
    }`;
  } else if (seen && v.phase === 'Healthy' && v.stableHash && v.stableHash === v.canaryHash) {
    state = 'promoted';
    reason = `canary ${v.namespace}/${v.name} fully promoted (${v.steps.length} steps)`;
  } else {
    const cur = v.currentStep === null ? null : v.steps[v.currentStep];
    reason = `canary ${v.namespace}/${v.name} at ${v.weight} %${
      cur ? `, step ${cur.index + 1} of ${v.steps.length} (${cur.text})` : ''
    }${v.paused ? `, paused: ${v.paused.reasons.join(', ')}` : ''}`;
  }
  return {
    kind: 'Rollout',
    namespace: v.namespace,
    name: v.name,
    state,
    step: v.currentStep,
    steps: v.steps.length,
    weight: v.weight,
    phase: v.phase,
    stableHash: v.stableHash,
    canaryHash: v.canaryHash,
    analyses: mine,
    reason,
  };
}

/**
 * Where a Flagger Canary stands: `promoted` when its revision under analysis is the one it last promoted (Succeeded,
 * or Initialized with nothing to analyse), `aborted` when it failed (rolled back: the checks failed, the rollback
 * webhook asked for it, or the deadline passed), else `progressing` (analysing, waiting on its promotion gate).
 */
/** The containers' names and images of a Deployment's Pod template ("" when it is not known). */
export function templateImages(d: Obj | undefined): string {
  const containers = asObj(asObj(asObj(asObj(d?.spec).template).spec)).containers;
  if (!d || !Array.isArray(containers)) return '';
  return JSON.stringify(containers.map((c) => [str(asObj(c).name) ?? '', str(asObj(c).image) ?? '']));
}

export function flaggerOutcome(
  canary: Obj,
  /** the most this canary reached while it was followed: Flagger resets its counts when it rolls back */
  peak?: { iteration: number; failedChecks: number },
  /**
   * its target and `-primary` Deployments as they are live: a revision Git just applied to the target is not
   * promoted until the primary runs the target's images (Flagger's own status still says Succeeded for the
   * previous revision until its next loop picks the change up)
   */
  workloads?: { target?: Obj; primary?: Obj },
): CanaryOutcome {
  const seen = flaggerCanaryView(canary);
  const v =
    seen.failed && peak
      ? {
          ...seen,
          iteration: Math.max(seen.iteration, peak.iteration),
          failedChecks: Math.max(seen.failedChecks, peak.failedChecks),
        }
      : seen;
  const id = `${v.namespace}/${v.name}`;
  let state: CanaryState = 'progressing';
  let reason: string;
  const checks = `${v.failedChecks} failed check(s)${v.threshold !== null ? ` of ${v.threshold} allowed` : ''}`;
  if (v.failed) {
    state = 'aborted';
    reason = `canary ${id} rolled back at iteration ${v.iteration}${v.iterations ? ` of ${v.iterations}` : ''} after ${checks}: ${v.message || 'Canary analysis failed'}`;
  } else if (
    (v.phase === 'Succeeded' || v.phase === 'Initialized') &&
    v.lastAppliedSpec !== null &&
    v.lastAppliedSpec === v.lastPromotedSpec &&
    (!workloads ||
      (templateImages(workloads.target) !== '' &&
        templateImages(workloads.target) === templateImages(workloads.primary)))
  ) {
    state = 'promoted';
    reason = `canary ${id} ${v.phase === 'Succeeded' ? 'promoted' : 'initialized'} (revision ${v.lastPromotedSpec})`;
  } else if (v.phase === 'Succeeded' || v.phase === 'Initialized') {
    reason = `canary ${id}: the target ${v.target} runs a revision Flagger has not promoted yet (its primary runs other images)`;
  } else {
    reason = `canary ${id} ${v.phase}${v.iterations ? `, iteration ${v.iteration} of ${v.iterations}` : `, weight ${v.weight} %`}, ${checks}${
      v.waitingForPromotion ? ': waiting for the promotion gate (a governed promote)' : ''
    }`;
  }
  return {
    kind: 'Canary',
    namespace: v.namespace,
    name: v.name,
    state,
    step: v.iteration,
    steps: v.iterations ?? 0,
    weight: v.weight,
    phase: v.phase,
    stableHash: v.lastPromotedSpec,
    canaryHash: v.lastAppliedSpec,
    failedChecks: { count: v.failedChecks, threshold: v.threshold },
    analyses: [],
    reason,
  };
}

/** A change of the canary worth a `release.canary` record: its step, weight, phase, pause or analysis verdicts. */
export function canaryKey(c: CanaryOutcome): string {
  return JSON.stringify([
    c.canaryHash,
    c.step,
    c.weight,
    c.phase,
    c.state,
    c.failedChecks?.count ?? null,
    c.analyses.map((a) => a.phase),
  ]);
}

/** The release's verification from its canaries: failed if one aborted, ok when all were promoted, else pending. */
export function canaryVerdict(
  outcomes: CanaryOutcome[],
): { status: 'ok' | 'failed' | 'pending'; reason: string } | undefined {
  if (!outcomes.length) return undefined;
  const aborted = outcomes.find((c) => c.state === 'aborted');
  if (aborted) return { status: 'failed', reason: aborted.reason };
  const waiting = outcomes.find((c) => c.state === 'progressing');
  if (waiting) return { status: 'pending', reason: waiting.reason };
  return { status: 'ok', reason: outcomes.map((c) => c.reason).join('; ') };
}
