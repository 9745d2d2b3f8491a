// Argo Rollouts (issue 25): a Rollout's health as Argo CD judges it (its built-in Lua check for argoproj.io/Rollout,
// ported), an AnalysisRun's, and what a person needs of a canary: its phase, the step it is on of how many, the
// weight it holds, why it is paused, which ReplicaSet is stable and which is the canary (their pod-template hashes),
// and the analysis of the current step. Pure.
import type { HealthStatus } from './app.ts';

/** (health.ts's HealthAssessment; not imported from there: health.ts uses these checks) */
interface HealthAssessment {
  status: HealthStatus;
  message: string;
}

type Obj = Record<string, unknown>;
const asObj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown, d: number): number => (typeof v === 'number' ? v : d);

/** Argo CD's health check of a Rollout (resource_customizations/argoproj.io/Rollout/health.lua). */
export function rolloutHealth(o: Obj): HealthAssessment {
  const md = asObj(o.metadata);
  const spec = asObj(o.spec);
  const st = o.status === undefined ? undefined : asObj(o.status);
  if (!st) return { status: 'Progressing', message: 'Waiting for rollout spec update to be observed' };
  const observed = Number(st.observedGeneration);
  const generation = num(md.generation, 0);
  if (!Number.isNaN(observed) && observed <= generation && observed !== generation)
    return { status: 'Progressing', message: 'Waiting for rollout spec update to be observed' };
  const phase = str(st.phase);
  if (phase) {
    const status = phase === 'Paused' ? 'Suspended' : phase;
    const known = ['Healthy', 'Progressing', 'Degraded', 'Suspended'];
    return {
      status: (known.includes(status) ? status : 'Unknown') as HealthAssessment['status'],
      message: str(st.message) ?? '',
    };
  }
  for (const c of Array.isArray(st.conditions) ? (st.conditions as unknown[]).map(asObj) : []) {
    if (c.type === 'InvalidSpec') return { status: 'Degraded', message: str(c.message) ?? '' };
    if (c.type === 'Progressing' && (c.reason === 'RolloutAborted' || c.reason === 'ProgressDeadlineExceeded'))
      return { status: 'Degraded', message: str(c.message) ?? '' };
  }
  if ((Array.isArray(st.pauseConditions) && st.pauseConditions.length > 0) || spec.paused === true)
    return { status: 'Suspended', message: 'Rollout is paused' };
  if (!st.currentPodHash)
    return { status: 'Progressing', message: 'Waiting for rollout to finish: status has not been reconciled.' };
  const desired = num(spec.replicas, 1);
  const updated = num(st.updatedReplicas, 0);
  if (updated < desired)
    return { status: 'Progressing', message: 'Waiting for roll out to finish: More replicas need to be updated' };
  if (num(st.availableReplicas, 0) < updated)
    return {
      status: 'Progressing',
      message: 'Waiting for roll out to finish: updated replicas are still becoming available',
    };
  const stable = str(st.stableRS) ?? str(asObj(st.canary).stableRS) ?? '';
  const strategy = asObj(spec.strategy);
  if (strategy.canary !== undefined) {
    if (num(st.replicas, 0) > updated)
      return { status: 'Progressing', message: 'Waiting for roll out to finish: old replicas are pending termination' };
    if (!stable || stable !== st.currentPodHash)
      return { status: 'Progressing', message: 'Waiting for rollout to finish steps' };
  }
  return { status: 'Healthy', message: '' };
}

/** Argo CD's health check of an AnalysisRun. */
export function analysisRunHealth(o: Obj): HealthAssessment {
  if (o.status === undefined)
    return { status: 'Progressing', message: 'Waiting for analysis run to finish: status has not been reconciled.' };
  const st = asObj(o.status);
  const msg = str(st.message);
  switch (st.phase) {
    case 'Pending':
    case 'Running':
      return { status: 'Progressing', message: 'Analysis run is running' };
    case 'Successful':
      return { status: 'Healthy', message: msg ?? 'Analysis run completed successfully' };
    case 'Failed':
      return { status: 'Degraded', message: msg ?? 'Analysis run failed' };
    case 'Error':
      return { status: 'Degraded', message: msg ?? 'Analysis run had an error' };
    case 'Inconclusive':
      return { status: 'Unknown', message: msg ?? 'Analysis run was inconclusive' };
    default:
      return { status: 'Unknown', message: '' };
  }
}

export interface RolloutStep {
  index: number;
  /** "set weight 20 %", "pause 30s", "pause until promoted", "analysis business-check-staging" */
  text: string;
  kind: 'setWeight' | 'pause' | 'analysis' | 'other';
  state: 'done' | 'current' | 'pending';
}

export interface RolloutView {
  namespace: string;
  name: string;
  strategy: 'canary' | 'blueGreen' | 'unknown';
  phase: string;
  message: string;
  /** the canary's share now (the last setWeight reached; 100 when the rollout is done) */
  weight: number;
  currentStep: number | null;
  steps: RolloutStep[];
  paused: { reasons: string[]; since: string | null } | null;
  aborted: boolean;
  stableHash: string | null;
  canaryHash: string | null;
  replicas: { desired: number; updated: number; ready: number; available: number };
  /** the AnalysisRun of the current step (status.canary.currentStepAnalysisRunStatus) */
  analysis: { name: string; status: string; message: string | null } | null;
}

function stepText(s: Obj): Pick<RolloutStep, 'text' | 'kind'> {
  if (s.setWeight !== undefined) return { kind: 'setWeight', text: `set weight ${String(s.setWeight)} %` };
  if (s.pause !== undefined) {
    const d = asObj(s.pause).duration;
    return { kind: 'pause', text: d !== undefined ? `pause ${String(d)}` : 'pause until promoted' };
  }
  if (s.analysis !== undefined) {
    const names = (Array.isArray(asObj(s.analysis).templates) ? (asObj(s.analysis).templates as unknown[]) : [])
      .map((t) => str(asObj(t).templateName))
      .filter(Boolean);
    return { kind: 'analysis', text: `analysis ${names.join(', ') || '(no template)'}` };
  }
  return { kind: 'other', text: Object.keys(s)[0] ?? 'step' };
}

export function rolloutView(o: Obj): RolloutView {
  const md = asObj(o.metadata);
  const spec = asObj(o.spec);
  const st = asObj(o.status);
  const strategy = asObj(spec.strategy);
  const canary = strategy.canary !== undefined ? asObj(strategy.canary) : undefined;
  const rawSteps = canary && Array.isArray(canary.steps) ? (canary.steps as unknown[]).map(asObj) : [];
  const current = typeof st.currentStepIndex === 'number' ? st.currentStepIndex : null;
  const done = current !== null && current >= rawSteps.length;
  const steps: RolloutStep[] = rawSteps.map((s, i) => ({
    index: i,
    ...stepText(s),
    state: current === null ? 'pending' : i < current ? 'done' : i === current ? 'current' : 'pending',
  }));
  let weight = 0;
  if (current !== null)
    for (const s of rawSteps.slice(0, Math.min(current + 1, rawSteps.length)))
      if (typeof s.setWeight === 'number') weight = s.setWeight;
  const stableHash = str(st.stableRS) ?? null;
  const canaryHash = str(st.currentPodHash) ?? null;
  if (done || (stableHash && stableHash === canaryHash)) weight = 100;
  const pcs = Array.isArray(st.pauseConditions) ? (st.pauseConditions as unknown[]).map(asObj) : [];
  const ar = asObj(asObj(st.canary).currentStepAnalysisRunStatus);
  const health = rolloutHealth(o);
  return {
    namespace: str(md.namespace) ?? '',
    name: str(md.name) ?? '?',
    strategy: canary ? 'canary' : strategy.blueGreen !== undefined ? 'blueGreen' : 'unknown',
    phase: str(st.phase) ?? health.status,
    message: str(st.message) ?? health.message,
    weight,
    currentStep: current,
    steps,
    paused:
      pcs.length || spec.paused === true
        ? {
            reasons: pcs.length ? pcs.map((p) => str(p.reason) ?? 'Paused') : ['paused (spec.paused)'],
            since: str(pcs[0]?.startTime) ?? null,
          }
        : null,
    aborted: st.abort === true,
    stableHash,
    canaryHash,
    replicas: {
      desired: num(spec.replicas, 1),
      updated: num(st.updatedReplicas, 0),
      ready: num(st.readyReplicas, 0),
      available: num(st.availableReplicas, 0),
    },
    analysis: str(ar.name)
      ? { name: str(ar.name) as string, status: str(ar.status) ?? 'Unknown', message: str(ar.message) ?? null }
      : null,
  };
}

/**
 * The newest AnalysisRun of a Rollout's canary (its children; by creation time) as the view shows it: its phase and
 * what was measured (the run's message, else each metric's message or its last measured value).
 */
export function latestAnalysis(runs: Obj[]): RolloutView['analysis'] {
  const newest = [...runs].sort((a, b) =>
    String(asObj(b.metadata).creationTimestamp ?? '').localeCompare(String(asObj(a.metadata).creationTimestamp ?? '')),
  )[0];
  if (!newest) return null;
  const st = asObj(newest.status);
  const metrics = Array.isArray(st.metricResults) ? (st.metricResults as unknown[]).map(asObj) : [];
  const measured = metrics
    .map((m) => {
      const ms = Array.isArray(m.measurements) ? (m.measurements as unknown[]).map(asObj) : [];
      const last = ms[ms.length - 1];
      const what =
        str(m.message) ??
        str(last?.message) ??
        (last?.value !== undefined ? `measured ${String(last.value)}` : undefined);
      return what ? `${str(m.name) ?? 'metric'}: ${what}` : undefined;
    })
    .filter(Boolean)
    .join('; ');
  return {
    name: str(asObj(newest.metadata).name) ?? '?',
    status: str(st.phase) ?? 'Pending',
    message: str(st.message) ?? (measured || null),
  };
}
