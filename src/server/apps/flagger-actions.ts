// Governed control of a Flagger canary (issue 25): promote and rollback, each with a required reason, the same role
// rule as an Argo Rollouts canary (`rollout.control`), and the intent recorded before anything happens (fail
// closed). Flagger takes no command from the API: a promotion waits on the Canary's `confirm-promotion` webhook and
// a rollback is asked by its `rollback` webhook. Both are Flagger load tester gates in the usual set-up; the console
// opens the gate the Canary itself names, for the revision the person saw (`status.lastAppliedSpec`): a gate that
// has moved on answers 409 and nothing is opened. The gate's URL comes from Git: only an allow-listed load tester
// host is called, at the addresses checked (flagger-gate.ts), and only the status of its answer is used — its body
// never reaches a message, an evidence record or a log.
import type { App } from '../../domain/app.ts';
import { FLAGGER_GROUP, flaggerCanaryView, gateOf } from '../../domain/flagger.ts';
import { withoutUserInfo } from '../../domain/url-credentials.ts';
import type { EvidenceRecorder } from '../evidence/index.ts';
import { UnfetchableUrlError, type UrlPolicy } from '../git/url-policy.ts';
import { HttpError } from '../http/errors.ts';
import { postPinned } from '../http/pinned-post.ts';
import type { ClusterConnection } from '../kube/connection.ts';
import { readCanaryObject } from './canary-object.ts';
import { checkGateUrl } from './flagger-gate.ts';

export const FLAGGER_VERBS = ['promote', 'rollback'] as const;
export type FlaggerVerb = (typeof FLAGGER_VERBS)[number];

/** the phases in which Flagger asks each gate (its analysis is running or waits for the promotion) */
const ASKS: Record<FlaggerVerb, string[]> = {
  promote: ['Progressing', 'Waiting', 'WaitingPromotion'],
  rollback: ['Progressing', 'Waiting', 'WaitingPromotion'],
};

type Obj = Record<string, unknown>;

export async function controlFlaggerCanary(
  a: App,
  ref: { namespace: string; name: string },
  verb: FlaggerVerb,
  reason: string,
  actor: string,
  deps: {
    recorder: EvidenceRecorder;
    conn: ClusterConnection;
    /** the load tester hosts the console may call (flagger-gate.ts gatePolicy) */
    gates: UrlPolicy;
    /** how long a gate has to answer; default 10 s */
    gateTimeoutMs?: number;
  },
): Promise<{ verb: FlaggerVerb; phase: string; gate: string }> {
  const { obj: canary } = await readCanaryObject(
    a,
    ref,
    { group: FLAGGER_GROUP, version: 'v1beta1', kind: 'Canary', plural: 'canaries', what: 'Flagger Canary' },
    deps.conn,
  );
  const v = flaggerCanaryView(canary);
  if (!ASKS[verb].includes(v.phase))
    throw new HttpError(
      409,
      'Conflict',
      `nothing to ${verb}: the Canary is ${v.phase}${v.message ? ` (${v.message})` : ''}; Flagger asks its gates only while it analyses a new revision`,
    );
  const gate = gateOf(v, verb);
  if ('why' in gate) throw new HttpError(409, 'Conflict', gate.why);
  const shownUrl = withoutUserInfo(gate.url) ?? gate.url;
  // checked and resolved before the intent is recorded: a gate the console may not call is refused, not attempted
  let checked: Awaited<ReturnType<typeof checkGateUrl>>;
  try {
    checked = await checkGateUrl(gate.url, deps.gates);
  } catch (e) {
    if (!(e instanceof UnfetchableUrlError)) throw e;
    if (e.reason === 'unresolved') throw new HttpError(502, 'BadGateway', `the gate ${shownUrl}: ${e.message}`);
    throw new HttpError(409, 'Conflict', `the gate ${shownUrl}: ${e.message}`);
  }
  const timeoutMs = deps.gateTimeoutMs ?? 10_000;
  return deps.recorder.act(
    {
      time: new Date().toISOString(),
      type: 'rollout.control',
      actor,
      app: a.id,
      cluster: a.cluster,
      env: a.env,
      data: {
        controller: 'flagger',
        verb,
        reason,
        canary: `${ref.namespace}/${ref.name}`,
        uid: ((canary.metadata as Obj | undefined)?.uid as string | undefined) ?? null,
        before: {
          phase: v.phase,
          iteration: v.iteration,
          failedChecks: v.failedChecks,
          weight: v.weight,
          lastAppliedSpec: v.lastAppliedSpec,
          lastPromotedSpec: v.lastPromotedSpec,
        },
        // the addresses the console connects to (resolved once, here)
        gate: { webhook: gate.webhook, url: shownUrl, addresses: checked.addresses },
      },
    },
    async () => {
      let status: number;
      try {
        status = await postPinned(
          checked,
          JSON.stringify({ name: ref.name, namespace: ref.namespace, lastAppliedSpec: v.lastAppliedSpec, by: actor }),
          { timeoutMs },
        );
      } catch (e) {
        throw new HttpError(
          502,
          'BadGateway',
          `the gate ${shownUrl} did not answer: ${e instanceof Error ? e.message : String(e)}`,
        );
      }
      // the status only: the gate's body is never read into a message, a record or a log
      if (status === 409)
        throw new HttpError(409, 'Conflict', `the Canary moved on before the gate opened (the gate answered HTTP 409)`);
      if (status < 200 || status > 299)
        throw new HttpError(
          502,
          'BadGateway',
          `the gate ${shownUrl} answered HTTP ${status}${status >= 300 && status < 400 ? ' (a redirect, which is not followed)' : ''}`,
        );
      return { verb, phase: v.phase, gate: gate.webhook };
    },
    (o) => (o.ok ? { gate: o.value.gate } : {}),
  );
}
