/**
 * Health assessment of live Kubernetes objects, from Kubernetes semantics:
 * workload rollout status (as `kubectl rollout status` decides it), pod
 * container states, and kstatus-style conditions (Ready / Stalled /
 * Reconciling) for custom resources such as Flux's kinds.
 */
import type { HealthStatus } from './app.ts';
import { flaggerCanaryHealth } from './flagger.ts';
import { analysisRunHealth, rolloutHealth } from './rollout.ts';

export interface HealthAssessment {
  status: HealthStatus;
  message: string;
}

type Obj = Record<string, unknown>;
interface Cond {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
}

const asObj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const num = (v: unknown, d = 0): number => (typeof v === 'number' ? v : d);
const conds = (o: Obj): Cond[] => {
  const c = asObj(o.status).conditions;
  return Array.isArray(c) ? (c as Cond[]) : [];
};
const cond = (o: Obj, type: string): Cond | undefined =>
  conds(o).find((c) => c !== null && typeof c === 'object' && c.type === type);
const ok = (message = ''): HealthAssessment => ({ status: 'Healthy', message });
const progressing = (message: string): HealthAssessment => ({ status: 'Progressing', message });
const degraded = (message: string): HealthAssessment => ({ status: 'Degraded', message });

function generationPending(o: Obj): boolean {
  const gen = num(asObj(o.metadata).generation, 0);
  const obs = asObj(o.status).observedGeneration;
  return typeof obs === 'number' && gen > obs;
}

function deployment(o: Obj): HealthAssessment {
  const spec = asObj(o.spec);
  const st = asObj(o.status);
  if (spec.paused === true) return { status: 'Suspended', message: 'Deployment is paused' };
  if (generationPending(o)) return progressing('waiting for the controller to observe the new generation');
  const p = cond(o, 'Progressing');
  if (p?.reason === 'ProgressDeadlineExceeded')
    return degraded(`rollout stalled: ${p.message ?? 'progress deadline exceeded'}`);
  const want = num(spec.replicas, 1);
  const updated = num(st.updatedReplicas);
  const total = num(st.replicas);
  const available = num(st.availableReplicas);
  if (updated < want) return progressing(`${updated} of ${want} replicas updated`);
  if (total > updated) return progressing(`${total - updated} old replicas pending termination`);
  if (available < updated) return progressing(`${available} of ${updated} updated replicas available`);
  return ok(`${available}/${want} replicas available`);
}

function statefulSet(o: Obj): HealthAssessment {
  const spec = asObj(o.spec);
  const st = asObj(o.status);
  if (generationPending(o)) return progressing('waiting for the controller to observe the new generation');
  const want = num(spec.replicas, 1);
  const ready = num(st.readyReplicas);
  const strategy = asObj(spec.updateStrategy);
  if (strategy.type === 'OnDelete')
    return ready < want ? progressing(`${ready} of ${want} ready`) : ok(`${ready}/${want} ready (OnDelete)`);
  const partition = num(asObj(strategy.rollingUpdate).partition);
  const updated = num(st.updatedReplicas);
  if (ready < want) return progressing(`${ready} of ${want} replicas ready`);
  if (updated < want - partition) return progressing(`${updated} of ${want - partition} replicas updated`);
  if (partition === 0 && st.currentRevision !== st.updateRevision) return progressing('rolling update in progress');
  return ok(`${ready}/${want} replicas ready`);
}

function daemonSet(o: Obj): HealthAssessment {
  const st = asObj(o.status);
  if (generationPending(o)) return progressing('waiting for the controller to observe the new generation');
  const want = num(st.desiredNumberScheduled);
  const updated = num(st.updatedNumberScheduled);
  const available = num(st.numberAvailable);
  if (updated < want) return progressing(`${updated} of ${want} pods updated`);
  if (available < want) return progressing(`${available} of ${want} pods available`);
  return ok(`${available}/${want} pods available`);
}

function replicaSet(o: Obj): HealthAssessment {
  const spec = asObj(o.spec);
  const st = asObj(o.status);
  if (generationPending(o)) return progressing('waiting for the controller to observe the new generation');
  const failure = cond(o, 'ReplicaFailure');
  if (failure?.status === 'True') return degraded(failure.message ?? 'replica failure');
  const want = num(spec.replicas, 1);
  const available = num(st.availableReplicas);
  if (available < want) return progressing(`${available} of ${want} replicas available`);
  return ok(`${available}/${want} replicas available`);
}

const BAD_WAITING = new Set([
  'CrashLoopBackOff',
  'ImagePullBackOff',
  'ErrImagePull',
  'InvalidImageName',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
]);

function containerProblem(statuses: unknown, init: boolean): string | undefined {
  if (!Array.isArray(statuses)) return undefined;
  for (const raw of statuses) {
    const cs = asObj(raw);
    const name = String(cs.name ?? '?');
    const waiting = asObj(asObj(cs.state).waiting);
    const reason = typeof waiting.reason === 'string' ? waiting.reason : '';
    if (BAD_WAITING.has(reason)) {
      const last = asObj(asObj(cs.lastState).terminated);
      const extra = last.reason ? ` (last exit: ${String(last.reason)}, code ${String(last.exitCode ?? '?')})` : '';
      return `${init ? 'init ' : ''}container ${name}: ${reason}${extra}${waiting.message ? `: ${String(waiting.message)}` : ''}`;
    }
    const term = asObj(asObj(cs.state).terminated);
    if (term.reason === 'OOMKilled') return `${init ? 'init ' : ''}container ${name} was OOMKilled`;
    if (!init && term.exitCode !== undefined && term.exitCode !== 0) {
      return `container ${name} terminated: ${String(term.reason ?? 'Error')} (exit ${String(term.exitCode)})`;
    }
    const lastTerm = asObj(asObj(cs.lastState).terminated);
    if (lastTerm.reason === 'OOMKilled' && cs.ready !== true)
      return `container ${name} was OOMKilled (restarts: ${String(cs.restartCount ?? 0)})`;
  }
  return undefined;
}

function pod(o: Obj): HealthAssessment {
  const st = asObj(o.status);
  if (asObj(o.metadata).deletionTimestamp) return progressing('pod is terminating');
  const phase = String(st.phase ?? 'Pending');
  const problem = containerProblem(st.initContainerStatuses, true) ?? containerProblem(st.containerStatuses, false);
  if (phase === 'Failed') return degraded(problem ?? String(st.message ?? st.reason ?? 'pod failed'));
  if (phase === 'Succeeded') return ok('pod completed');
  if (problem) return degraded(problem);
  if (phase === 'Pending') {
    const sched = cond(o, 'PodScheduled');
    if (sched?.status === 'False') return progressing(`not scheduled: ${sched.message ?? sched.reason ?? ''}`.trim());
    return progressing('pod is pending');
  }
  if (phase === 'Running') {
    const ready = cond(o, 'Ready');
    if (ready?.status === 'True') return ok('pod is running and ready');
    return progressing(`pod is running, not ready${ready?.message ? `: ${ready.message}` : ''}`);
  }
  return { status: 'Unknown', message: `pod phase ${phase}` };
}

function job(o: Obj): HealthAssessment {
  const spec = asObj(o.spec);
  if (spec.suspend === true) return { status: 'Suspended', message: 'Job is suspended' };
  const failed = cond(o, 'Failed');
  if (failed?.status === 'True') return degraded(`job failed: ${failed.reason ?? ''} ${failed.message ?? ''}`.trim());
  const complete = cond(o, 'Complete');
  if (complete?.status === 'True') return ok('job completed');
  return progressing(`job running (${num(asObj(o.status).active)} active)`);
}

function cronJob(o: Obj): HealthAssessment {
  if (asObj(o.spec).suspend === true) return { status: 'Suspended', message: 'CronJob is suspended' };
  return ok(
    asObj(o.status).lastScheduleTime
      ? `last scheduled ${String(asObj(o.status).lastScheduleTime)}`
      : 'not scheduled yet',
  );
}

function service(o: Obj): HealthAssessment {
  if (asObj(o.spec).type !== 'LoadBalancer') return ok();
  const ingress = asObj(asObj(o.status).loadBalancer).ingress;
  if (Array.isArray(ingress) && ingress.length > 0) {
    const i = asObj(ingress[0]);
    return ok(`load balancer ${String(i.ip ?? i.hostname ?? '')}`.trim());
  }
  return progressing('waiting for a load balancer address');
}

function ingress(o: Obj): HealthAssessment {
  const lb = asObj(asObj(o.status).loadBalancer).ingress;
  if (Array.isArray(lb) && lb.length > 0) return ok();
  return progressing('waiting for an ingress address');
}

function pvc(o: Obj): HealthAssessment {
  const phase = asObj(o.status).phase;
  if (phase === 'Bound') return ok('bound');
  if (phase === 'Lost') return degraded('claim lost its volume');
  return progressing(`claim is ${String(phase ?? 'Pending')}`);
}

function hpa(o: Obj): HealthAssessment {
  const able = cond(o, 'AbleToScale');
  if (able?.status === 'False') return degraded(`cannot scale: ${able.message ?? able.reason ?? ''}`.trim());
  const active = cond(o, 'ScalingActive');
  if (active?.status === 'False' && active.reason !== 'ScalingDisabled') {
    return degraded(`scaling inactive: ${active.message ?? active.reason ?? ''}`.trim());
  }
  return ok(`${num(asObj(o.status).currentReplicas)} current replicas`);
}

function namespace(o: Obj): HealthAssessment {
  return asObj(o.status).phase === 'Terminating' ? progressing('namespace is terminating') : ok();
}

function argoApplication(o: Obj): HealthAssessment | undefined {
  const h = asObj(asObj(o.status).health);
  if (typeof h.status !== 'string') return undefined;
  const known = ['Healthy', 'Progressing', 'Degraded', 'Suspended', 'Missing', 'Unknown'] as const;
  const status = (known as readonly string[]).includes(h.status) ? (h.status as HealthStatus) : 'Unknown';
  return { status, message: typeof h.message === 'string' ? h.message : `Argo CD reports ${h.status}` };
}

/** kstatus semantics for any object that carries standard conditions. */
function byConditions(o: Obj): HealthAssessment | undefined {
  if (asObj(o.spec).suspend === true) return { status: 'Suspended', message: 'reconciliation is suspended' };
  const cs = conds(o).filter((c) => c && typeof c === 'object');
  const stalled = cs.find((c) => c.type === 'Stalled');
  if (stalled?.status === 'True') return degraded(`${stalled.reason ?? 'Stalled'}: ${stalled.message ?? ''}`.trim());
  // kstatus: a controller that has not observed the latest generation is still working
  if (generationPending(o)) return progressing('waiting for the controller to observe the new generation');
  if (cs.length === 0) return undefined;
  const reconciling = cond(o, 'Reconciling');
  if (reconciling?.status === 'True') return progressing(reconciling.message ?? reconciling.reason ?? 'reconciling');
  const ready = cond(o, 'Ready');
  // Flux holds it until a dependency is Ready (dependsOn): it waits, nothing of it is broken (the dependency is)
  if (ready?.status === 'False' && ready.reason === 'DependencyNotReady')
    return progressing(`waiting on a dependency: ${ready.message ?? 'DependencyNotReady'}`);
  if (ready?.status === 'False') return degraded(`${ready.reason ?? 'NotReady'}: ${ready.message ?? ''}`.trim());
  if (ready?.status === 'Unknown') return progressing(ready.message ?? ready.reason ?? 'readiness unknown');
  if (ready?.status === 'True') return ok(ready.message ?? '');
  return undefined;
}

/**
 * Health of one live object. Kinds it does not know are Healthy when they
 * exist, unless their conditions say otherwise.
 */
export function assessHealth(obj: unknown): HealthAssessment {
  if (obj === null || obj === undefined) return { status: 'Missing', message: 'object does not exist' };
  const o = asObj(obj);
  const kind = typeof o.kind === 'string' ? o.kind : '';
  const group = typeof o.apiVersion === 'string' && o.apiVersion.includes('/') ? o.apiVersion.split('/')[0] : '';
  if (!kind) return { status: 'Unknown', message: 'object has no kind' };
  try {
    if (
      group === '' ||
      group === 'apps' ||
      group === 'batch' ||
      group === 'autoscaling' ||
      group === 'networking.k8s.io'
    ) {
      switch (kind) {
        case 'Deployment':
          return deployment(o);
        case 'StatefulSet':
          return statefulSet(o);
        case 'DaemonSet':
          return daemonSet(o);
        case 'ReplicaSet':
          return replicaSet(o);
        case 'Pod':
          return pod(o);
        case 'Job':
          return job(o);
        case 'CronJob':
          return cronJob(o);
        case 'Service':
          return service(o);
        case 'Ingress':
          return ingress(o);
        case 'PersistentVolumeClaim':
          return pvc(o);
        case 'HorizontalPodAutoscaler':
          return hpa(o);
        case 'Namespace':
          return namespace(o);
      }
    }
    if (group === 'argoproj.io' && kind === 'Application') {
      const a = argoApplication(o);
      if (a) return a;
    }
    // Argo Rollouts: Argo CD's own checks (domain/rollout.ts)
    if (group === 'argoproj.io' && kind === 'Rollout') return rolloutHealth(o);
    if (group === 'argoproj.io' && kind === 'AnalysisRun') return analysisRunHealth(o);
    // Flagger: Argo CD's check of a Canary (domain/flagger.ts)
    if (group === 'flagger.app' && kind === 'Canary') return flaggerCanaryHealth(o);
    return byConditions(o) ?? ok();
  } catch (e) {
    return { status: 'Unknown', message: `cannot assess: ${e instanceof Error ? e.message : String(e)}` };
  }
}
