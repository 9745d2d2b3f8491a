// Governed control of an Argo Rollouts canary (issue 25): promote (one step), promote-full, abort, retry, pause,
// resume — each with a required reason, the role `rollout.control` (on-call only in the on-call environments),
// the intent recorded before the first write (fail closed), and the same patches the `kubectl argo rollouts`
// plugin sends (its promote.go / abort.go / retry.go): the controller honours them exactly as from the plugin.
import type { App } from '../../domain/app.ts';
import { rolloutView } from '../../domain/rollout.ts';
import type { EvidenceRecorder } from '../evidence/index.ts';
import { clusterHttpError, HttpError } from '../http/errors.ts';
import type { ClusterConnection, KubeResponse } from '../kube/connection.ts';
import { settleUnansweredWrite, unanswered, type SettleOpts } from '../kube/unanswered-write.ts';
import { readCanaryObject } from './canary-object.ts';

export const ROLLOUT_VERBS = ['promote', 'promote-full', 'abort', 'retry', 'pause', 'resume'] as const;
export type RolloutVerb = (typeof ROLLOUT_VERBS)[number];

type Obj = Record<string, unknown>;
const asObj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const rvOf = (o: Obj) => String(asObj(o.metadata).resourceVersion ?? '');
const ROLLOUT_KIND = {
  group: 'argoproj.io',
  version: 'v1alpha1',
  kind: 'Rollout',
  plural: 'rollouts',
  what: 'Rollout',
};
/** conflicting writes (the controller's status updates) a control outlasts while the Rollout stands still */
const CONFLICT_ATTEMPTS = 5;

const num = (v: unknown) => (typeof v === 'number' ? v : 0);
const count = (v: unknown) => (Array.isArray(v) ? v.length : 0);

/**
 * Whether the Rollout shows what `p` does, compared with `before`: how an unanswered write is known to have been
 * applied when the console's managedFields entry cannot tell (a write that only removes a field leaves the console
 * owning nothing there, so its entry goes), or the controller has moved on since.
 */
export function patchSeen(p: RolloutPatch, verb: RolloutVerb, before: Obj, live: Obj): boolean {
  const sp = asObj(live.spec);
  const st = asObj(live.status);
  const b = asObj(before.status);
  if (p.target === 'spec') return sp.paused === asObj(p.body.spec).paused;
  switch (verb) {
    case 'promote':
      // on to a later step; or its pause lifted (the controller sets the next pause's conditions only at that step)
      return (
        num(st.currentStepIndex) > num(b.currentStepIndex) ||
        (count(b.pauseConditions) > 0 && count(st.pauseConditions) === 0)
      );
    case 'promote-full':
      return st.promoteFull === true || (typeof st.stableRS === 'string' && st.stableRS === st.currentPodHash);
    case 'abort':
      return st.abort === true;
    case 'retry':
      return st.abort !== true;
    default:
      return false;
  }
}

/** The console's managedFields entry (its Update) of the spec or the status, as JSON; undefined when none. */
function consoleEntry(o: Obj, target: 'spec' | 'status'): Obj | undefined {
  const entries = Array.isArray(asObj(o.metadata).managedFields) ? (asObj(o.metadata).managedFields as Obj[]) : [];
  return entries.find(
    (m) =>
      m.manager === 'gitops-console' &&
      m.operation === 'Update' &&
      (m.subresource ?? '') === (target === 'status' ? 'status' : ''),
  );
}

/**
 * Whether the console wrote the Rollout's spec or status since `t0` (its managedFields entry's time, whole
 * seconds): how an unanswered write is known to have been applied once the Rollout has moved on. An entry the
 * Rollout already had before the write (`before`: same time, same fields; an earlier write in the same second) is
 * not this write's.
 */
export function wroteSince(live: Obj, target: 'spec' | 'status', t0: number, before?: Obj): boolean {
  const m = consoleEntry(live, target);
  if (!m || typeof m.time !== 'string' || Date.parse(m.time) < Math.floor(t0 / 1000) * 1000) return false;
  const was = before && consoleEntry(before, target);
  return !was || was.time !== m.time || JSON.stringify(was.fieldsV1) !== JSON.stringify(m.fieldsV1);
}

export interface RolloutPatch {
  /** the spec (the main resource) or the status subresource */
  target: 'spec' | 'status';
  body: Obj;
}

/** The plugin's patches for a verb, given the Rollout as it is live. */
export function rolloutPatches(verb: RolloutVerb, ro: Obj): RolloutPatch[] {
  const spec = asObj(ro.spec);
  const st = asObj(ro.status);
  const paused = spec.paused === true;
  const out: RolloutPatch[] = [];
  switch (verb) {
    case 'abort':
      return [{ target: 'status', body: { status: { abort: true } } }];
    case 'retry':
      return [{ target: 'status', body: { status: { abort: false } } }];
    case 'pause':
      return [{ target: 'spec', body: { spec: { paused: true } } }];
    case 'resume':
      return [{ target: 'spec', body: { spec: { paused: false } } }];
    case 'promote-full':
      if (paused) out.push({ target: 'spec', body: { spec: { paused: false } } });
      if (st.currentPodHash !== st.stableRS) out.push({ target: 'status', body: { status: { promoteFull: true } } });
      return out;
    case 'promote': {
      if (paused) out.push({ target: 'spec', body: { spec: { paused: false } } });
      const pcs = Array.isArray(st.pauseConditions) ? st.pauseConditions : [];
      if (pcs.length) out.push({ target: 'status', body: { status: { pauseConditions: null } } });
      else if (!paused) {
        // not paused: the plugin's skip of the current step
        const steps = Array.isArray(asObj(asObj(spec.strategy).canary).steps)
          ? (asObj(asObj(spec.strategy).canary).steps as unknown[])
          : [];
        const i = typeof st.currentStepIndex === 'number' ? st.currentStepIndex : 0;
        if (i < steps.length) out.push({ target: 'status', body: { status: { currentStepIndex: i + 1 } } });
      }
      return out;
    }
  }
}

export async function controlRollout(
  a: App,
  ref: { namespace: string; name: string },
  verb: RolloutVerb,
  reason: string,
  actor: string,
  deps: { recorder: EvidenceRecorder; conn: ClusterConnection; settle?: SettleOpts },
): Promise<{ verb: RolloutVerb; patches: number; phase: string }> {
  const { obj: ro, path } = await readCanaryObject(a, ref, ROLLOUT_KIND, deps.conn);
  const before = rolloutView(ro);
  const patches = rolloutPatches(verb, ro);
  if (!patches.length)
    throw new HttpError(
      409,
      'Conflict',
      `nothing to ${verb}: the Rollout is ${before.phase} (${before.message || 'no message'})`,
    );
  return deps.recorder.act(
    {
      time: new Date().toISOString(),
      type: 'rollout.control',
      actor,
      app: a.id,
      cluster: a.cluster,
      env: a.env,
      data: {
        verb,
        reason,
        rollout: `${ref.namespace}/${ref.name}`,
        uid: (asObj(ro.metadata).uid as string | undefined) ?? null,
        before: {
          phase: before.phase,
          step: before.currentStep,
          weight: before.weight,
          canary: before.canaryHash,
          stable: before.stableHash,
        },
        patches,
      },
    },
    async () => {
      // each write names the version it was made from (the plugin's do not): a write the cluster never answered
      // is settled before the outcome (kube/unanswered-write.ts), and a conflict is retried only while the
      // Rollout still stands where the intent saw it
      const startedAt = Date.now();
      let rv = rvOf(ro);
      for (const p of patches) {
        const url = `${path}${p.target === 'status' ? '/status' : ''}?fieldManager=gitops-console`;
        for (let attempt = 1; ; attempt++) {
          const body = JSON.stringify({ ...p.body, metadata: { resourceVersion: rv } });
          const r = await deps.conn
            .request('PATCH', url, {
              timeoutMs: 10_000,
              contentType: 'application/merge-patch+json',
              headers: { 'Content-Length': String(Buffer.byteLength(body)) },
              body,
            })
            .catch(async (e: unknown) => {
              if (!unanswered(e)) throw clusterHttpError(e, `${verb} Rollout ${ref.name}`, a.cluster);
              const settled = await settleUnansweredWrite(
                deps.conn,
                path,
                rv,
                (live) => wroteSince(live, p.target, startedAt, ro) || patchSeen(p, verb, ro, live),
                `rollout.control ${verb}`,
                deps.settle,
              );
              if (settled.outcome === 'applied') return { status: 200, body: JSON.stringify(settled.live) };
              if (settled.outcome === 'unknown')
                throw new HttpError(
                  502,
                  'ClusterUnreachable',
                  `${verb} Rollout ${ref.name}: the cluster did not answer whether it took the change (${settled.why}); look at the Rollout before you try again`,
                  a.cluster,
                );
              throw clusterHttpError(e, `${verb} Rollout ${ref.name}`, a.cluster);
            });
          if (r.status === 409 && attempt < CONFLICT_ATTEMPTS) {
            const { obj: now } = await readCanaryObject(a, ref, ROLLOUT_KIND, deps.conn);
            const v = rolloutView(now);
            if (v.currentStep !== before.currentStep || v.canaryHash !== before.canaryHash || v.phase !== before.phase)
              throw new HttpError(
                409,
                'Conflict',
                `${verb} Rollout ${ref.name}: it moved on meanwhile (${v.phase}, step ${String(v.currentStep)}); look again`,
                a.cluster,
              );
            rv = rvOf(now);
            continue;
          }
          if (r.status !== 200)
            throw clusterHttpError(
              deps.conn.httpError(r as KubeResponse, `${verb} Rollout ${ref.name}`),
              `${verb} Rollout ${ref.name}`,
              a.cluster,
            );
          rv = rvOf(JSON.parse(r.body) as Obj);
          break;
        }
      }
      return { verb, patches: patches.length, phase: before.phase };
    },
    (o) => (o.ok ? { patches: o.value.patches } : {}),
  );
}
