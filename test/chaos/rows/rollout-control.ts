// Chaos row: an on-call promotes an Argo Rollouts canary one step through the console (rollout-actions.ts, intent
// `rollout.control`, verb `promote`). Its own estate (lifted from test/support/rollout-estate.ts): the seed's checkout
// Rollout in its own repository, synced by its own Argo CD Application into its own staging namespace, but with no
// analysis step and indefinite pauses (20 % → pause → 50 % → pause → full), so the Rollout moves only when promoted:
// one promote from the first pause (step 1) lands exactly at the next pause (step 3); two would finish it (step 4).
// Promote (not abort) because its effect counts: an abort twice looks like an abort once.
// Invariants, from outside (the Rollout as the sandbox admin reads it, the evidence export): the intent recorded the
// step the Rollout was at; a `completed` promote moved it exactly one pause on, `failed`/`voided` or no intent left it
// at step 1 (and no intent answered an error), an `interrupted` one left it at step 1 or 3, never beyond; the revision
// is the one prepared and nothing aborted it; and the survivor (c.reader()) shows the Rollout as the cluster has it.
import { sleep, waitFor } from '../../../sandbox/procs.ts';
import { getJson, writeRepoFile } from '../../../sandbox/scenario.ts';
import { CHECKOUT_IMAGE, checkoutFiles } from '../../../sandbox/seed.ts';
import { kubectl } from '../../../sandbox/state.ts';
import type { AppResponse, RolloutDto } from '../../../src/api/schemas.ts';
import { rolloutView } from '../../../src/domain/rollout.ts';
import { as } from '../../support/auth.ts';
import { ownEstate, type Estate } from '../../support/own-estate.ts';
import { exportChain } from '../invariants.ts';
import type { ActionRow, Replica } from '../types.ts';
import { answered, outcomeOf } from './freeze-start.ts';

const APP = 'checkout';
const DIR = 'argo/checkout';
/** the pod template's annotation each prepared revision changes (a new pod-template hash: a new canary) */
const REV = 'chaos.gitops-console.dev/rev';

type Obj = Record<string, unknown>;
const asObj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});

export interface RolloutRowState {
  estate: Estate;
  /** the revision last pushed */
  rev: number;
  /** the Rollout as prepare() left it: its step and ReplicaSet hashes */
  before?: { step: number; canary: string; stable: string };
}

function replaceOnce(text: string, from: string, to: string): string {
  const at = text.indexOf(from);
  if (at < 0 || text.indexOf(from, at + 1) >= 0)
    throw new Error(`the seed's checkout files changed: ${JSON.stringify(from)}`);
  return text.slice(0, at) + to + text.slice(at + from.length);
}

/** The seed's checkout files: no analysis step, both pauses until promoted, the pod template at revision `rev`. */
function files(rev: number): Record<string, string> {
  const f = checkoutFiles(CHECKOUT_IMAGE);
  let ro = f[`${DIR}/rollout.yaml`] ?? '';
  ro = replaceOnce(
    ro,
    '        - analysis:\n            templates:\n              - templateName: business-check-staging\n                clusterScope: true\n',
    '',
  );
  ro = replaceOnce(ro, '        - pause:\n            duration: 30s\n', '        - pause: {}\n');
  ro = replaceOnce(ro, '        - pause:\n            duration: 10s\n', '        - pause: {}\n');
  ro = replaceOnce(
    ro,
    '  template:\n    metadata:\n',
    `  template:\n    metadata:\n      annotations:\n        ${REV}: "${rev}"\n`,
  );
  return { ...f, [`${DIR}/rollout.yaml`]: ro };
}

const rolloutOf = (s: RolloutRowState): Obj =>
  getJson(s.estate.cluster, ['-n', s.estate.namespace, 'get', 'rollout', APP]);
const st = (ro: Obj): Obj => asObj(ro.status);
const stepOf = (ro: Obj): number =>
  typeof st(ro).currentStepIndex === 'number' ? (st(ro).currentStepIndex as number) : -1;
const stepsOf = (ro: Obj): Obj[] => {
  const steps = asObj(asObj(asObj(ro.spec).strategy).canary).steps;
  return Array.isArray(steps) ? steps.map(asObj) : [];
};
const pausedAtStep = (ro: Obj): boolean =>
  Array.isArray(st(ro).pauseConditions) &&
  (st(ro).pauseConditions as unknown[]).some((p) => asObj(p).reason === 'CanaryPauseStep');
const revOf = (ro: Obj): unknown => asObj(asObj(asObj(asObj(ro.spec).template).metadata).annotations)[REV];

/** The step the Rollout pauses at after `k` promotes from step `from` (the steps' count once it is done). */
function stepAfter(steps: Obj[], from: number, k: number): number {
  let i = from;
  for (let n = 0; n < k && i < steps.length; n++) {
    i++;
    while (i < steps.length && steps[i]?.pause === undefined) i++;
  }
  return i;
}

/** The start: revision `rev`, paused by the controller at its first pause step, the canary not the stable. */
function atStart(ro: Obj, rev: number): boolean {
  const s = st(ro);
  return (
    revOf(ro) === String(rev) &&
    String(s.observedGeneration) === String(asObj(ro.metadata).generation) &&
    stepOf(ro) === stepsOf(ro).findIndex((x) => x.pause !== undefined) &&
    pausedAtStep(ro) &&
    s.abort !== true &&
    asObj(ro.spec).paused !== true &&
    typeof s.currentPodHash === 'string' &&
    s.currentPodHash !== s.stableRS
  );
}

/** Paused at a step, done (the canary stable), or aborted: the controller has nothing left to do without a person. */
const settled = (ro: Obj): boolean =>
  st(ro).abort === true ||
  pausedAtStep(ro) ||
  (stepOf(ro) >= stepsOf(ro).length && st(ro).currentPodHash === st(ro).stableRS);

const appPath = (s: RolloutRowState) => `/api/apps/${s.estate.argoAppId(APP)}`;

/** What the survivor shows of the Rollout against what the cluster has; undefined once they agree (≤ 30 s). */
async function readerDisagrees(r: Replica, s: RolloutRowState): Promise<string | undefined> {
  const pick = (v: Pick<RolloutDto, 'currentStep' | 'weight' | 'paused' | 'aborted' | 'canaryHash' | 'stableHash'>) =>
    JSON.stringify([v.currentStep, v.weight, v.paused !== null, v.aborted, v.canaryHash, v.stableHash]);
  let said = '';
  return waitFor(
    'the survivor shows the Rollout as the cluster has it',
    async () => {
      const live = pick(rolloutView(rolloutOf(s)));
      const res = await as(r.admin, r.base, appPath(s));
      const shown = (res.body as AppResponse).rollouts?.find((x) => x.name === APP);
      said = `${r.name} shows ${res.status === 200 ? (shown ? pick(shown) : 'no Rollout') : `HTTP ${res.status}`}, the cluster has ${live} [step, weight, paused, aborted, canary, stable]`;
      return !!shown && pick(shown) === live;
    },
    { timeoutMs: 30_000, intervalMs: 1000 },
  ).then(
    () => undefined,
    () => `the survivor does not show the Rollout as it is: ${said}`,
  );
}

export const rolloutControl: ActionRow<RolloutRowState> = {
  id: 'rollout-control',
  label: 'rollout/canary control (promote)',
  intentType: 'rollout.control',
  points: ['after-intent', 'after-act'],
  cluster: (s) => s.estate.cluster,
  async setup() {
    const estate = await ownEstate({
      name: 'chaos-ro',
      env: 'staging',
      files: files(0),
      argoApps: [{ name: APP, path: DIR }],
    });
    const s: RolloutRowState = { estate, rev: 0 };
    // the first revision goes straight to stable (no canary without one)
    await waitFor('the estate’s Rollout is Healthy', async () => st(rolloutOf(s)).phase === 'Healthy', {
      timeoutMs: 120_000,
      intervalMs: 1000,
    }).catch(async (e: unknown) => {
      await estate.teardown();
      throw e;
    });
    return s;
  },
  teardown: (s) => s.estate.teardown(),
  async prepare(s) {
    const { cluster, namespace } = s.estate;
    if (!atStart(rolloutOf(s), s.rev)) {
      // whatever the last cell left (promoted on, finished, half-processed): a new revision starts the canary over
      s.rev += 1;
      const sha = s.estate.push(`chaos: checkout revision ${s.rev}`, (w) => {
        for (const [p, text] of Object.entries(files(s.rev))) writeRepoFile(w, p, text);
      });
      await s.estate.waitArgoSynced(APP, sha, { healthy: false, timeoutMs: 60_000 });
      const patch = (args: string[]) =>
        kubectl(cluster, ['-n', namespace, 'patch', 'rollout', APP, '--type=merge', ...args]);
      await waitFor(
        'the new canary pauses at its first pause step',
        async () => {
          const ro = rolloutOf(s);
          // what a new revision does not clear: an abort (the retry's patch), a pause of the spec (the resume's)
          if (st(ro).abort === true) patch(['--subresource=status', '-p', '{"status":{"abort":false}}']);
          if (asObj(ro.spec).paused === true) patch(['-p', '{"spec":{"paused":false}}']);
          return atStart(ro, s.rev);
        },
        { timeoutMs: 60_000, intervalMs: 1000 },
      );
    }
    const ro = rolloutOf(s);
    s.before = { step: stepOf(ro), canary: String(st(ro).currentPodHash), stable: String(st(ro).stableRS) };
  },
  perform: (s, c) =>
    answered(c.actor, `${appPath(s)}/rollouts/${s.estate.namespace}/${APP}/promote`, {
      reason: 'chaos: promote one step',
    }),
  async check(s, c, run) {
    const broken: string[] = [];
    const before = s.before;
    if (!before) return ['prepare() recorded no start state'];
    const reader = c.reader();
    const { records } = await exportChain(reader);
    const outcomes = run.intents.map((seq) => ({ seq, type: outcomeOf(records, seq) ?? 'none' }));
    for (const seq of run.intents) {
      const d = records.find((r) => r.seq === seq)?.data ?? {};
      const step = asObj(d.before).step;
      if (d.verb !== 'promote' || step !== before.step)
        broken.push(
          `intent ${seq} recorded ${String(d.verb)} at step ${String(step)}, the Rollout was at ${before.step}`,
        );
    }
    const done = outcomes.filter((o) => o.type === 'action.completed').length;
    const maybe = outcomes.filter((o) => o.type === 'action.interrupted').length;
    const a = run.answer;
    if (run.intents.length === 0 && !('error' in a) && a.status < 400)
      broken.push(`no intent recorded, yet the console answered ${a.status}`);
    if (!('error' in a) && a.status === 200 && done === 0)
      broken.push(
        `the console answered 200, but no intent completed (${outcomes.map((o) => `${o.seq} ${o.type}`).join(', ')})`,
      );
    // a late effect (a PATCH the apiserver took after the console gave up on it) shows by now
    await sleep(2000);
    let ro: Obj = {};
    await waitFor('the Rollout settles', async () => settled((ro = rolloutOf(s))), {
      timeoutMs: 60_000,
      intervalMs: 1000,
    }).catch(() =>
      broken.push(
        `the Rollout did not settle within 60 s: step ${stepOf(ro)}, phase ${String(st(ro).phase)}, ${String(st(ro).message ?? '')}`,
      ),
    );
    const step = stepOf(ro);
    const allowed = [...Array(maybe + 1).keys()].map((k) => stepAfter(stepsOf(ro), before.step, done + k));
    const said = outcomes.length
      ? outcomes.map((o) => `intent ${o.seq} ${o.type.replace('action.', '')}`).join(', ')
      : 'no intent';
    if (!allowed.includes(step))
      broken.push(
        `${said}: the Rollout went from step ${before.step} to ${step}, expected ${allowed.join(' or ')}` +
          (step > Math.max(...allowed)
            ? ' (promoted further than recorded)'
            : ' (a recorded promote did not take effect)'),
      );
    if (st(ro).abort === true) broken.push(`the Rollout is aborted: ${String(st(ro).message ?? '')}`);
    if (st(ro).currentPodHash !== before.canary)
      broken.push(
        `the canary changed from ${before.canary} to ${String(st(ro).currentPodHash)} (a revision nobody pushed)`,
      );
    if (step < stepsOf(ro).length && st(ro).stableRS !== before.stable)
      broken.push(`the stable ReplicaSet changed from ${before.stable} to ${String(st(ro).stableRS)} mid-canary`);
    const disagrees = await readerDisagrees(reader, s);
    if (disagrees) broken.push(disagrees);
    return broken;
  },
};
