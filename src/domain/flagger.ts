// Flagger (issue 25): a Canary's health (as Argo CD's built-in check for flagger.app/Canary judges it), what a person
// needs of it (its phase, the iteration it is on of how many, the failed checks against the threshold, the weight,
// the revision under analysis and the one last promoted, the webhooks that gate it), and where its canary stands
// for the release chain. Pure.
import type { HealthStatus } from './app.ts';

type Obj = Record<string, unknown>;
const asObj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);

export const FLAGGER_GROUP = 'flagger.app';

/** The Promoted condition's message, else the newest condition's. */
function conditionMessage(st: Obj): string {
  const cs = Array.isArray(st.conditions) ? (st.conditions as unknown[]).map(asObj) : [];
  const c = cs.find((x) => x.type === 'Promoted') ?? cs[cs.length - 1];
  return str(c?.message) ?? '';
}

/**
 * A Canary's health (Argo CD resource_customizations/flagger.app/Canary/health.lua): Initialized and Succeeded are
 * Healthy, Failed is Degraded, a canary waiting on a gate (Waiting, WaitingPromotion) is Suspended, any other
 * phase is Progressing; no status yet is Progressing.
 */
export function flaggerCanaryHealth(o: Obj): { status: HealthStatus; message: string } {
  const st = o.status === undefined ? undefined : asObj(o.status);
  const phase = str(st?.phase);
  if (!st || !phase) return { status: 'Progressing', message: 'Waiting for Flagger to initialize the canary' };
  const message = conditionMessage(st);
  switch (phase) {
    case 'Initialized':
    case 'Succeeded':
      return { status: 'Healthy', message };
    case 'Failed':
      return { status: 'Degraded', message: message || 'Canary analysis failed' };
    case 'Waiting':
    case 'WaitingPromotion':
      return { status: 'Suspended', message: message || 'Waiting for approval' };
    default:
      return { status: 'Progressing', message: message || `Canary ${phase}` };
  }
}

export interface FlaggerWebhook {
  name: string;
  type: string;
  url: string;
}

export interface FlaggerCanaryView {
  namespace: string;
  name: string;
  /** the Deployment (or DaemonSet) it analyses, and the copy that serves: `<name>-primary` */
  target: string;
  primary: string;
  provider: string;
  phase: string;
  message: string;
  /** iterations done of how many (blue/green), or null for a weighted canary */
  iteration: number;
  iterations: number | null;
  failedChecks: number;
  threshold: number | null;
  weight: number;
  /** the revision under analysis and the revision last promoted (Flagger's spec hashes) */
  lastAppliedSpec: string | null;
  lastPromotedSpec: string | null;
  lastTransitionTime: string | null;
  webhooks: FlaggerWebhook[];
  /** a confirm-promotion webhook gates the promotion, and the canary waits on it now */
  waitingForPromotion: boolean;
  failed: boolean;
  suspended: boolean;
}

export function flaggerCanaryView(o: Obj): FlaggerCanaryView {
  const md = asObj(o.metadata);
  const spec = asObj(o.spec);
  const st = asObj(o.status);
  const an = asObj(spec.analysis ?? spec.canaryAnalysis);
  const target = str(asObj(spec.targetRef).name) ?? '?';
  const phase = str(st.phase) ?? 'Pending';
  return {
    namespace: str(md.namespace) ?? '',
    name: str(md.name) ?? '?',
    target,
    primary: `${target}-primary`,
    provider: str(spec.provider) ?? 'default',
    phase,
    message: conditionMessage(st),
    iteration: num(st.iterations) ?? 0,
    iterations: num(an.iterations),
    failedChecks: num(st.failedChecks) ?? 0,
    threshold: num(an.threshold),
    weight: num(st.canaryWeight) ?? 0,
    lastAppliedSpec: str(st.lastAppliedSpec) ?? null,
    lastPromotedSpec: str(st.lastPromotedSpec) ?? null,
    lastTransitionTime: str(st.lastTransitionTime) ?? null,
    webhooks: (Array.isArray(an.webhooks) ? (an.webhooks as unknown[]).map(asObj) : []).map((w) => ({
      name: str(w.name) ?? '?',
      type: str(w.type) ?? 'rollout',
      url: str(w.url) ?? '',
    })),
    waitingForPromotion: phase === 'WaitingPromotion',
    failed: phase === 'Failed',
    suspended: spec.suspend === true,
  };
}

/**
 * The gate a governed action opens (Flagger's load tester API): promote opens the `confirm-promotion` webhook's
 * gate (`…/gate/check` → `…/gate/open`), rollback the `rollback` webhook's (`…/rollback/check` →
 * `…/rollback/open`). Undefined (with why) when the Canary has no such webhook, or it is not a load tester gate.
 */
export function gateOf(
  v: FlaggerCanaryView,
  verb: 'promote' | 'rollback',
): { url: string; webhook: string } | { why: string } {
  const type = verb === 'promote' ? 'confirm-promotion' : 'rollback';
  const check = verb === 'promote' ? '/gate/check' : '/rollback/check';
  const w = v.webhooks.find((x) => x.type === type);
  if (!w)
    return { why: `Canary ${v.namespace}/${v.name} has no ${type} webhook: Flagger needs no approval to ${verb}` };
  let u: URL;
  try {
    u = new URL(w.url);
  } catch {
    return { why: `the ${type} webhook ${w.name} has no usable URL (${w.url})` };
  }
  if (!u.pathname.endsWith(check))
    return { why: `the ${type} webhook ${w.name} (${w.url}) is not a Flagger load tester gate (…${check})` };
  u.pathname = `${u.pathname.slice(0, -check.length)}${check.replace('/check', '/open')}`;
  return { url: u.toString(), webhook: w.name };
}
