/**
 * Table-driven tests for assessHealth, with expectations taken from Kubernetes
 * semantics: `kubectl rollout status` for workloads, kubelet container states
 * for pods, the Job / HPA / PVC controllers' conditions and phases, and the
 * kstatus conditions (Ready / Stalled / Reconciling) that Flux kinds expose.
 *
 * Over 500 lines on purpose: one table of captured objects per kind, read as a list of cases; splitting it
 * by kind would scatter the fixtures it shares.
 */
import { describe, it, expect } from 'vitest';
import { HEALTH_STATES, type HealthStatus } from './app.ts';
import { assessHealth } from './health.ts';

type O = Record<string, unknown>;
/** [case name, live object, expected status, substring the message must contain] */
type Row = [string, unknown, HealthStatus, string?];

// ---------------------------------------------------------------- builders

const cond = (type: string, status: string, reason?: string, message?: string): O => ({
  type,
  status,
  ...(reason !== undefined && { reason }),
  ...(message !== undefined && { message }),
});

const meta = (generation: number, extra: O = {}): O => ({ name: 'x', namespace: 'default', generation, ...extra });

interface DeployOpts {
  want?: number;
  updated?: number;
  total?: number;
  available?: number;
  gen?: number;
  obs?: number;
  conds?: O[];
  paused?: boolean;
}
const deploy = ({
  want = 3,
  updated = want,
  total = updated,
  available = updated,
  gen = 2,
  obs = gen,
  conds = [],
  paused,
}: DeployOpts = {}): O => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: meta(gen),
  spec: { replicas: want, ...(paused !== undefined && { paused }) },
  status: {
    observedGeneration: obs,
    replicas: total,
    updatedReplicas: updated,
    availableReplicas: available,
    readyReplicas: available,
    conditions: conds,
  },
});

interface StsOpts {
  want?: number;
  ready?: number;
  updated?: number;
  gen?: number;
  obs?: number;
  strategy?: O;
  current?: string;
  update?: string;
}
const sts = ({
  want = 3,
  ready = want,
  updated = want,
  gen = 1,
  obs = gen,
  strategy = { type: 'RollingUpdate' },
  current = 'web-7c9',
  update = current,
}: StsOpts = {}): O => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: meta(gen),
  spec: { replicas: want, updateStrategy: strategy },
  status: {
    observedGeneration: obs,
    replicas: want,
    readyReplicas: ready,
    updatedReplicas: updated,
    currentRevision: current,
    updateRevision: update,
  },
});

interface DsOpts {
  desired?: number;
  updated?: number;
  available?: number;
  gen?: number;
  obs?: number;
}
const ds = ({ desired = 4, updated = desired, available = desired, gen = 1, obs = gen }: DsOpts = {}): O => ({
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: meta(gen),
  spec: { updateStrategy: { type: 'RollingUpdate' } },
  status: {
    observedGeneration: obs,
    desiredNumberScheduled: desired,
    currentNumberScheduled: desired,
    updatedNumberScheduled: updated,
    numberAvailable: available,
    numberReady: available,
  },
});

interface RsOpts {
  want?: number;
  available?: number;
  gen?: number;
  obs?: number;
  conds?: O[];
}
const rs = ({ want = 2, available = want, gen = 1, obs = gen, conds = [] }: RsOpts = {}): O => ({
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: meta(gen),
  spec: { replicas: want },
  status: { observedGeneration: obs, replicas: available, availableReplicas: available, conditions: conds },
});

// Container statuses, as the kubelet reports them.
const running = (name = 'app', ready = true, lastState: O = {}): O => ({
  name,
  ready,
  restartCount: 0,
  state: { running: { startedAt: '2024-01-01T00:00:00Z' } },
  lastState,
});
const waiting = (reason: string, message?: string, lastTerminated?: O, name = 'app'): O => ({
  name,
  ready: false,
  restartCount: 5,
  state: { waiting: { reason, ...(message !== undefined && { message }) } },
  lastState: lastTerminated ? { terminated: lastTerminated } : {},
});
const terminated = (reason: string, exitCode: number, name = 'app'): O => ({
  name,
  ready: false,
  restartCount: 0,
  state: { terminated: { reason, exitCode } },
  lastState: {},
});

interface PodOpts {
  phase?: string;
  ready?: boolean;
  containers?: O[];
  inits?: O[];
  conds?: O[];
  restartPolicy?: string;
  deleting?: boolean;
  reason?: string;
  message?: string;
}
const pod = ({
  phase = 'Running',
  ready,
  containers = [],
  inits,
  conds,
  restartPolicy = 'Always',
  deleting,
  reason,
  message,
}: PodOpts = {}): O => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'default', ...(deleting && { deletionTimestamp: '2024-01-01T00:00:00Z' }) },
  spec: { restartPolicy, containers: [{ name: 'app', image: 'nginx' }] },
  status: {
    phase,
    ...(reason !== undefined && { reason }),
    ...(message !== undefined && { message }),
    conditions:
      conds ??
      (ready === undefined
        ? []
        : [
            cond('PodScheduled', 'True'),
            cond('ContainersReady', ready ? 'True' : 'False'),
            cond('Ready', ready ? 'True' : 'False'),
          ]),
    containerStatuses: containers,
    ...(inits && { initContainerStatuses: inits }),
  },
});

const job = ({
  suspend,
  conds = [] as O[],
  active = 0,
}: { suspend?: boolean; conds?: O[]; active?: number } = {}): O => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: meta(1),
  spec: { ...(suspend !== undefined && { suspend }), template: {} },
  status: { active, conditions: conds },
});

const cronJob = (suspend: boolean, lastScheduleTime?: string): O => ({
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: meta(1),
  spec: { schedule: '*/5 * * * *', suspend },
  status: lastScheduleTime ? { lastScheduleTime } : {},
});

const svc = (type: string, lbIngress?: O[]): O => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: meta(1),
  spec: { type, ports: [{ port: 80 }] },
  status: lbIngress ? { loadBalancer: { ingress: lbIngress } } : { loadBalancer: {} },
});

const ing = (lbIngress?: O[]): O => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: meta(1),
  spec: { rules: [] },
  status: { loadBalancer: lbIngress ? { ingress: lbIngress } : {} },
});

const pvc = (phase?: string): O => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: meta(0),
  spec: {},
  status: phase ? { phase } : {},
});

const hpa = (conds: O[], currentReplicas = 2): O => ({
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: meta(1),
  spec: { minReplicas: 1, maxReplicas: 5 },
  status: { currentReplicas, desiredReplicas: currentReplicas, conditions: conds },
});

const ns = (phase: string): O => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name: 'team-a' },
  status: { phase },
});

interface FluxOpts {
  conds?: O[];
  gen?: number;
  obs?: number;
  suspend?: boolean;
}
const flux =
  (apiVersion: string, kind: string) =>
  ({ conds = [], gen = 1, obs = gen, suspend }: FluxOpts = {}): O => ({
    apiVersion,
    kind,
    metadata: meta(gen),
    spec: { interval: '5m', ...(suspend !== undefined && { suspend }) },
    status: { observedGeneration: obs, conditions: conds },
  });
const ks = flux('kustomize.toolkit.fluxcd.io/v1', 'Kustomization');
const gitRepo = flux('source.toolkit.fluxcd.io/v1', 'GitRepository');
const helmRelease = flux('helm.toolkit.fluxcd.io/v2', 'HelmRelease');

const argoApp = (health?: O): O => ({
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'Application',
  metadata: meta(1, { namespace: 'argocd' }),
  spec: {},
  status: health ? { health, sync: { status: 'Synced' } } : {},
});

const custom = (status?: unknown, kind = 'Widget', apiVersion = 'example.com/v1', extra: O = {}): O => ({
  apiVersion,
  kind,
  metadata: meta(1),
  spec: {},
  ...(status !== undefined && { status }),
  ...extra,
});

// ---------------------------------------------------------------- tables

const run = (rows: Row[]) =>
  it.each<Row>(rows)('%s', (_name, input, status, msg) => {
    const got = assessHealth(input);
    expect(got.status).toBe(status);
    expect(typeof got.message).toBe('string');
    if (msg !== undefined) expect(got.message).toContain(msg);
  });

describe('assessHealth: Deployment (kubectl rollout status)', () => {
  run([
    [
      'all replicas updated and available → Healthy',
      deploy({ conds: [cond('Available', 'True'), cond('Progressing', 'True', 'NewReplicaSetAvailable')] }),
      'Healthy',
    ],
    [
      'generation not yet observed → Progressing, even if replicas look done',
      deploy({ gen: 3, obs: 2 }),
      'Progressing',
      'generation',
    ],
    [
      'brand-new Deployment with no status → Progressing',
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: meta(1), spec: { replicas: 2 } },
      'Progressing',
    ],
    [
      'updated replicas short of spec → Progressing',
      deploy({ want: 3, updated: 1, total: 3, available: 3 }),
      'Progressing',
      '1 of 3',
    ],
    [
      'old replicas pending termination → Progressing',
      deploy({ want: 3, updated: 3, total: 4, available: 3 }),
      'Progressing',
      'old replicas pending termination',
    ],
    [
      'updated replicas not yet available → Progressing',
      deploy({ want: 3, updated: 3, total: 3, available: 2 }),
      'Progressing',
      '2 of 3',
    ],
    [
      'Progressing condition reason ProgressDeadlineExceeded → Degraded',
      deploy({
        want: 3,
        updated: 1,
        available: 0,
        conds: [
          cond('Progressing', 'False', 'ProgressDeadlineExceeded', 'ReplicaSet "web-5d8" has timed out progressing.'),
        ],
      }),
      'Degraded',
      'timed out progressing',
    ],
    [
      'ProgressDeadlineExceeded without a message still names the reason',
      deploy({ updated: 0, available: 0, conds: [cond('Progressing', 'False', 'ProgressDeadlineExceeded')] }),
      'Degraded',
      'progress deadline exceeded',
    ],
    ['spec.paused → Suspended', deploy({ paused: true, updated: 1 }), 'Suspended', 'paused'],
    ['scaled to zero and observed → Healthy', deploy({ want: 0 }), 'Healthy'],
  ]);
});

describe('assessHealth: StatefulSet', () => {
  run([
    ['all ready, revisions equal → Healthy', sts(), 'Healthy'],
    ['ready replicas short → Progressing', sts({ want: 3, ready: 1 }), 'Progressing', '1 of 3'],
    ['generation not yet observed → Progressing', sts({ gen: 4, obs: 3 }), 'Progressing'],
    [
      'RollingUpdate, currentRevision != updateRevision → Progressing',
      sts({ current: 'web-1', update: 'web-2', updated: 1 }),
      'Progressing',
    ],
    [
      'RollingUpdate all updated but revision not yet rolled over → Progressing',
      sts({ current: 'web-1', update: 'web-2' }),
      'Progressing',
    ],
    [
      'partitioned rolling update: pods above the partition updated → Healthy',
      sts({
        want: 5,
        updated: 3,
        strategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } },
        current: 'web-1',
        update: 'web-2',
      }),
      'Healthy',
    ],
    [
      'partitioned rolling update still short of want − partition → Progressing',
      sts({
        want: 5,
        updated: 1,
        strategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } },
        current: 'web-1',
        update: 'web-2',
      }),
      'Progressing',
      '1 of 3',
    ],
    [
      'OnDelete with stale pods but all ready → Healthy',
      sts({ strategy: { type: 'OnDelete' }, updated: 0, current: 'web-1', update: 'web-2' }),
      'Healthy',
      'OnDelete',
    ],
    [
      'OnDelete with ready short → Progressing',
      sts({ strategy: { type: 'OnDelete' }, ready: 2 }),
      'Progressing',
      '2 of 3',
    ],
  ]);
});

describe('assessHealth: DaemonSet', () => {
  run([
    ['all scheduled pods updated and available → Healthy', ds(), 'Healthy', '4/4'],
    ['updated pods short → Progressing', ds({ updated: 2 }), 'Progressing', '2 of 4'],
    ['available pods short → Progressing', ds({ available: 3 }), 'Progressing', '3 of 4'],
    ['generation not yet observed → Progressing', ds({ gen: 2, obs: 1 }), 'Progressing'],
    ['no eligible nodes (desired 0) → Healthy', ds({ desired: 0 }), 'Healthy'],
  ]);
});

describe('assessHealth: ReplicaSet', () => {
  run([
    ['all available → Healthy', rs(), 'Healthy'],
    ['available short → Progressing', rs({ want: 3, available: 1 }), 'Progressing', '1 of 3'],
    [
      'ReplicaFailure=True (quota) → Degraded',
      rs({
        available: 0,
        conds: [cond('ReplicaFailure', 'True', 'FailedCreate', 'pods "web-x" is forbidden: exceeded quota: compute')],
      }),
      'Degraded',
      'exceeded quota',
    ],
    ['ReplicaFailure=False is not a failure', rs({ conds: [cond('ReplicaFailure', 'False')] }), 'Healthy'],
  ]);
});

describe('assessHealth: Pod', () => {
  run([
    ['Running and Ready → Healthy', pod({ ready: true, containers: [running()] }), 'Healthy'],
    [
      'Running, not Ready (readiness probe failing) → Progressing',
      pod({ ready: false, containers: [running('app', false)] }),
      'Progressing',
    ],
    [
      'CrashLoopBackOff with lastState terminated → Degraded, reason and last exit in message',
      pod({
        ready: false,
        containers: [
          waiting('CrashLoopBackOff', 'back-off 5m0s restarting failed container', { reason: 'Error', exitCode: 1 }),
        ],
      }),
      'Degraded',
      'CrashLoopBackOff',
    ],
    [
      'CrashLoopBackOff message carries the last termination reason',
      pod({ ready: false, containers: [waiting('CrashLoopBackOff', undefined, { reason: 'Error', exitCode: 2 })] }),
      'Degraded',
      'Error',
    ],
    [
      'ImagePullBackOff → Degraded',
      pod({
        phase: 'Pending',
        ready: false,
        containers: [waiting('ImagePullBackOff', 'Back-off pulling image "nginx:nope"')],
      }),
      'Degraded',
      'ImagePullBackOff',
    ],
    [
      'ErrImagePull → Degraded',
      pod({ phase: 'Pending', ready: false, containers: [waiting('ErrImagePull', 'manifest unknown')] }),
      'Degraded',
      'ErrImagePull',
    ],
    [
      'CreateContainerConfigError (missing secret) → Degraded',
      pod({
        phase: 'Pending',
        ready: false,
        containers: [waiting('CreateContainerConfigError', 'secret "db" not found')],
      }),
      'Degraded',
      'CreateContainerConfigError',
    ],
    [
      'container currently terminated OOMKilled → Degraded',
      pod({ ready: false, containers: [terminated('OOMKilled', 137)] }),
      'Degraded',
      'OOMKilled',
    ],
    [
      'OOMKilled, now in CrashLoopBackOff → Degraded naming OOMKilled',
      pod({
        ready: false,
        containers: [waiting('CrashLoopBackOff', undefined, { reason: 'OOMKilled', exitCode: 137 })],
      }),
      'Degraded',
      'OOMKilled',
    ],
    [
      'restarted after OOMKilled and Ready again → Healthy',
      pod({ ready: true, containers: [running('app', true, { terminated: { reason: 'OOMKilled', exitCode: 137 } })] }),
      'Healthy',
    ],
    [
      'init container CrashLoopBackOff → Degraded, names the init container',
      pod({
        phase: 'Pending',
        ready: false,
        inits: [waiting('CrashLoopBackOff', undefined, { reason: 'Error', exitCode: 1 }, 'migrate')],
        containers: [waiting('PodInitializing')],
      }),
      'Degraded',
      'init container migrate',
    ],
    [
      'Pending and unschedulable → Progressing with the scheduler message',
      pod({
        phase: 'Pending',
        conds: [cond('PodScheduled', 'False', 'Unschedulable', '0/3 nodes are available: 3 Insufficient cpu.')],
      }),
      'Progressing',
      'Insufficient cpu',
    ],
    [
      'Pending, containers creating → Progressing',
      pod({ phase: 'Pending', ready: false, containers: [waiting('ContainerCreating')] }),
      'Progressing',
    ],
    [
      'no status at all (just created) → Progressing',
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {} },
      'Progressing',
    ],
    [
      'Succeeded → Healthy',
      pod({ phase: 'Succeeded', restartPolicy: 'Never', ready: false, containers: [terminated('Completed', 0)] }),
      'Healthy',
    ],
    [
      'Failed → Degraded',
      pod({ phase: 'Failed', restartPolicy: 'Never', ready: false, containers: [terminated('Error', 1)] }),
      'Degraded',
      'exit 1',
    ],
    [
      'Failed by eviction → Degraded with the eviction message',
      pod({ phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory.' }),
      'Degraded',
      'low on resource',
    ],
    [
      'restartPolicy Never, one container exited non-zero while another still runs → Degraded',
      pod({ restartPolicy: 'Never', ready: false, containers: [terminated('Error', 3, 'worker'), running('sidecar')] }),
      'Degraded',
      'exit 3',
    ],
    [
      'terminating pod (deletionTimestamp set) → Progressing',
      pod({ deleting: true, ready: true, containers: [running()] }),
      'Progressing',
      'terminating',
    ],
    ['phase Unknown (node lost) → Unknown', pod({ phase: 'Unknown' }), 'Unknown'],
  ]);
});

describe('assessHealth: Job and CronJob', () => {
  run([
    ['Job Complete=True → Healthy', job({ conds: [cond('Complete', 'True')] }), 'Healthy'],
    [
      'Job Failed=True → Degraded with reason',
      job({ conds: [cond('Failed', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit')] }),
      'Degraded',
      'BackoffLimitExceeded',
    ],
    ['Job spec.suspend → Suspended', job({ suspend: true }), 'Suspended'],
    ['Job running → Progressing', job({ active: 2 }), 'Progressing', '2 active'],
    ['Job with no conditions yet → Progressing', job(), 'Progressing'],
    ['CronJob suspended → Suspended', cronJob(true), 'Suspended'],
    ['CronJob active schedule → Healthy', cronJob(false, '2024-01-01T00:05:00Z'), 'Healthy', '2024-01-01T00:05:00Z'],
    ['CronJob never scheduled yet → Healthy', cronJob(false), 'Healthy'],
  ]);
});

describe('assessHealth: Service, Ingress, PVC, Namespace', () => {
  run([
    ['ClusterIP Service → Healthy', svc('ClusterIP'), 'Healthy'],
    ['ExternalName Service → Healthy', svc('ExternalName'), 'Healthy'],
    [
      'LoadBalancer with ingress IP → Healthy',
      svc('LoadBalancer', [{ ip: '203.0.113.10' }]),
      'Healthy',
      '203.0.113.10',
    ],
    [
      'LoadBalancer with ingress hostname → Healthy',
      svc('LoadBalancer', [{ hostname: 'lb.example.com' }]),
      'Healthy',
      'lb.example.com',
    ],
    ['LoadBalancer without ingress → Progressing', svc('LoadBalancer'), 'Progressing'],
    ['LoadBalancer with empty ingress list → Progressing', svc('LoadBalancer', []), 'Progressing'],
    ['Ingress with address → Healthy', ing([{ ip: '198.51.100.7' }]), 'Healthy'],
    ['Ingress without address → Progressing', ing(), 'Progressing'],
    ['PVC Bound → Healthy', pvc('Bound'), 'Healthy'],
    ['PVC Pending → Progressing', pvc('Pending'), 'Progressing'],
    ['PVC with no status → Progressing', pvc(), 'Progressing'],
    ['PVC Lost → Degraded', pvc('Lost'), 'Degraded'],
    ['Namespace Active → Healthy', ns('Active'), 'Healthy'],
    ['Namespace Terminating → Progressing', ns('Terminating'), 'Progressing', 'terminating'],
  ]);
});

describe('assessHealth: HorizontalPodAutoscaler', () => {
  const healthy = [cond('AbleToScale', 'True', 'ReadyForNewScale'), cond('ScalingActive', 'True', 'ValidMetricFound')];
  run([
    ['AbleToScale and ScalingActive True → Healthy', hpa(healthy, 3), 'Healthy', '3'],
    [
      'ScalingLimited=True is normal operation → Healthy',
      hpa([...healthy, cond('ScalingLimited', 'True', 'TooManyReplicas')]),
      'Healthy',
    ],
    [
      'AbleToScale=False (FailedGetScale) → Degraded',
      hpa([
        cond(
          'AbleToScale',
          'False',
          'FailedGetScale',
          "the HPA controller was unable to get the target's current scale",
        ),
      ]),
      'Degraded',
      'unable to get',
    ],
    [
      'AbleToScale=False without message → Degraded naming the reason',
      hpa([cond('AbleToScale', 'False', 'FailedUpdateScale')]),
      'Degraded',
      'FailedUpdateScale',
    ],
    [
      'ScalingActive=False (FailedGetResourceMetric) → Degraded',
      hpa([
        cond('AbleToScale', 'True'),
        cond('ScalingActive', 'False', 'FailedGetResourceMetric', 'failed to get cpu utilization'),
      ]),
      'Degraded',
      'failed to get cpu utilization',
    ],
    [
      'ScalingActive=False reason ScalingDisabled (target at 0) → not Degraded',
      hpa([cond('AbleToScale', 'True'), cond('ScalingActive', 'False', 'ScalingDisabled')], 0),
      'Healthy',
    ],
  ]);
});

describe('assessHealth: Flux kinds (kstatus conditions)', () => {
  run([
    [
      'Kustomization Ready=True → Healthy',
      ks({ conds: [cond('Ready', 'True', 'ReconciliationSucceeded', 'Applied revision: main@sha1:abc')] }),
      'Healthy',
      'Applied revision',
    ],
    [
      'Kustomization Ready=False → Degraded with reason',
      ks({ conds: [cond('Ready', 'False', 'BuildFailed', 'kustomize build failed')] }),
      'Degraded',
      'BuildFailed',
    ],
    [
      'Kustomization held for a dependency (Ready=False DependencyNotReady) → Progressing, waiting, not Degraded',
      ks({
        conds: [cond('Ready', 'False', 'DependencyNotReady', "dependency 'flux-system/infra-dev' is not ready")],
      }),
      'Progressing',
      "waiting on a dependency: dependency 'flux-system/infra-dev' is not ready",
    ],
    [
      'Kustomization Ready=Unknown → Progressing',
      ks({ conds: [cond('Ready', 'Unknown', 'Progressing', 'Reconciliation in progress')] }),
      'Progressing',
      'Reconciliation in progress',
    ],
    [
      'Kustomization Reconciling=True takes precedence over a stale Ready=True → Progressing',
      ks({
        conds: [
          cond('Ready', 'True', 'ReconciliationSucceeded'),
          cond('Reconciling', 'True', 'Progressing', 'Fetching manifests'),
        ],
      }),
      'Progressing',
      'Fetching manifests',
    ],
    [
      'Kustomization Stalled=True → Degraded with reason',
      ks({
        conds: [
          cond('Ready', 'False', 'ArtifactFailed'),
          cond('Stalled', 'True', 'InvalidPath', 'path ./nope not found'),
        ],
      }),
      'Degraded',
      'InvalidPath',
    ],
    [
      'Kustomization spec.suspend → Suspended',
      ks({ suspend: true, conds: [cond('Ready', 'True')] }),
      'Suspended',
      'suspended',
    ],
    [
      'Kustomization generation ahead of observedGeneration → Progressing',
      ks({ gen: 3, obs: 2, conds: [cond('Ready', 'True')] }),
      'Progressing',
      'generation',
    ],
    [
      'GitRepository Ready=True → Healthy',
      gitRepo({ conds: [cond('Ready', 'True', 'Succeeded', "stored artifact for revision 'main@sha1:abc'")] }),
      'Healthy',
    ],
    [
      'GitRepository Ready=False (auth) → Degraded',
      gitRepo({ conds: [cond('Ready', 'False', 'GitOperationFailed', 'authentication required')] }),
      'Degraded',
      'GitOperationFailed',
    ],
    [
      'GitRepository Stalled=True → Degraded',
      gitRepo({ conds: [cond('Stalled', 'True', 'URLInvalid', 'invalid URL')] }),
      'Degraded',
      'URLInvalid',
    ],
    ['GitRepository suspended → Suspended', gitRepo({ suspend: true }), 'Suspended'],
    [
      'HelmRelease Stalled=True RetriesExceeded → Degraded',
      helmRelease({ conds: [cond('Ready', 'False', 'UpgradeFailed'), cond('Stalled', 'True', 'RetriesExceeded')] }),
      'Degraded',
      'RetriesExceeded',
    ],
  ]);
});

describe('assessHealth: Argo CD Application', () => {
  run([
    ['health Healthy passes through', argoApp({ status: 'Healthy' }), 'Healthy'],
    [
      'health Degraded passes through with message',
      argoApp({ status: 'Degraded', message: 'Deployment web exceeded its progress deadline' }),
      'Degraded',
      'progress deadline',
    ],
    ['health Progressing passes through', argoApp({ status: 'Progressing' }), 'Progressing'],
    ['health Suspended passes through', argoApp({ status: 'Suspended' }), 'Suspended'],
    ['health Missing passes through', argoApp({ status: 'Missing' }), 'Missing'],
    ['unrecognised health value → Unknown', argoApp({ status: 'Weird' }), 'Unknown', 'Weird'],
  ]);
});

describe('assessHealth: unknown kinds, absent and malformed objects', () => {
  run([
    ['unknown CRD with no status → Healthy (exists)', custom(), 'Healthy'],
    [
      'unknown CRD with Ready=False → Degraded',
      custom({ conditions: [cond('Ready', 'False', 'ProviderError', 'cannot connect')] }),
      'Degraded',
      'ProviderError',
    ],
    ['unknown CRD with Ready=True → Healthy', custom({ conditions: [cond('Ready', 'True')] }), 'Healthy'],
    [
      'unknown CRD with only non-standard conditions → Healthy',
      custom({ conditions: [cond('Synced', 'True')] }),
      'Healthy',
    ],
    [
      'ConfigMap (core kind without health) → Healthy',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg' }, data: {} },
      'Healthy',
    ],
    [
      'CRD named Deployment in another group is not treated as apps/v1',
      custom({}, 'Deployment', 'example.com/v1', { spec: { replicas: 3 } }),
      'Healthy',
    ],
    ['null → Missing', null, 'Missing'],
    ['undefined → Missing', undefined, 'Missing'],
    ['object without kind → Unknown', { apiVersion: 'v1', metadata: { name: 'x' } }, 'Unknown', 'kind'],
    ['non-string kind → Unknown', { apiVersion: 'v1', kind: 42 }, 'Unknown'],
    [
      'Deployment whose status is a string → Progressing, no throw',
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: meta(1), spec: { replicas: 1 }, status: 'broken' },
      'Progressing',
    ],
    [
      'Pod whose status is a string → Progressing (phase unknown, treated as Pending)',
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, status: 'oops' },
      'Progressing',
    ],
    [
      'Kustomization whose conditions is an object → Healthy (no conditions), no throw',
      custom({ conditions: { Ready: 'True' } }, 'Kustomization', 'kustomize.toolkit.fluxcd.io/v1'),
      'Healthy',
    ],
    [
      'Job whose conditions is a string → Progressing, no throw',
      { apiVersion: 'batch/v1', kind: 'Job', metadata: meta(1), spec: {}, status: { conditions: 'Complete' } },
      'Progressing',
    ],
    [
      'Pod with non-array containerStatuses and junk entries → Progressing, no throw',
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p' },
        spec: {},
        status: { phase: 'Running', containerStatuses: 'x', initContainerStatuses: [null, 5, 'a'] },
      },
      'Progressing',
    ],
    [
      'Deployment with spec as an array and numeric strings → Progressing, no throw',
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { generation: '2' },
        spec: [],
        status: { updatedReplicas: '3' },
      },
      'Progressing',
    ],
    [
      'HPA with conditions as a number → Healthy, no throw',
      { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', status: { conditions: 7 } },
      'Healthy',
    ],
  ]);

  it.each<[string, unknown]>([
    ['a string', 'Deployment'],
    ['a number', 0],
    ['an array', [{ kind: 'Pod' }]],
    ['conditions containing null', custom({ conditions: [null, cond('Ready', 'True')] })],
    [
      'Pod conditions containing null',
      { apiVersion: 'v1', kind: 'Pod', status: { phase: 'Running', conditions: [null] } },
    ],
    [
      'Argo health as a string',
      { apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', status: { health: 'Healthy' } },
    ],
  ])('never throws on %s, and returns a known status', (_name, input) => {
    let got: ReturnType<typeof assessHealth> | undefined;
    expect(() => {
      got = assessHealth(input);
    }).not.toThrow();
    expect(HEALTH_STATES).toContain(got?.status);
    expect(typeof got?.message).toBe('string');
  });
});

describe('assessHealth: kstatus rules found in review', () => {
  it('a Running pod that is not Ready is Progressing whatever its restartPolicy', () => {
    const p = {
      apiVersion: 'v1',
      kind: 'Pod',
      spec: { restartPolicy: 'Never' },
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'False' }],
        containerStatuses: [{ name: 'app', ready: false, state: { running: {} } }],
      },
    };
    expect(assessHealth(p).status).toBe('Progressing');
  });
  it('an object without conditions whose observedGeneration lags is Progressing', () => {
    const w = {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { generation: 2 },
      spec: {},
      status: { observedGeneration: 1 },
    };
    expect(assessHealth(w)).toMatchObject({ status: 'Progressing', message: expect.stringContaining('generation') });
  });
  it('skips null conditions instead of giving up', () => {
    const w = {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      status: { conditions: [null, { type: 'Ready', status: 'False', reason: 'Broken' }] },
    };
    expect(assessHealth(w)).toMatchObject({ status: 'Degraded', message: expect.stringContaining('Broken') });
  });
});
