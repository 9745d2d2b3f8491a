// The release recorder's state 8, verification: an HTTP check per app / environment (CONSOLE_VERIFICATIONS_FILE)
// after the health state and every interval, plus the running Pods' image digests against the artifact's.
import { readFileSync } from 'node:fs';
import type { App } from '../../domain/app.ts';
import { canaryVerdict } from '../../domain/release-canary.ts';
import { checkLiveDigests, type PodImage } from '../../domain/release-images.ts';
import { secondsBetween } from '../../domain/release.ts';
import {
  excerpt,
  expectedVersions,
  judgeVerification,
  verificationFor,
  type VerificationSpec,
} from '../../domain/release-verification.ts';
import { withoutUserInfo } from '../../domain/url-credentials.ts';
import { assertFetchableUrl } from '../git/run.ts';
import type { KubeObject } from '../kube/informer.ts';
import { canariesOf } from './record-canary.ts';
import { FOLLOW_MS, message, ROLLOUT_SETTLE_MS, type StateContext, type Tracked } from './tracking.ts';

function verifications(ctx: StateContext): Record<string, Partial<VerificationSpec>> {
  const f = ctx.o.verificationsFile;
  if (!f) return {};
  try {
    return JSON.parse(readFileSync(f, 'utf8')) as Record<string, Partial<VerificationSpec>>;
  } catch (e) {
    ctx.o.log.warn({ file: f, err: message(e) }, 'release recorder: cannot read the verifications file');
    return {};
  }
}

/** Running Pods under the app's managed objects (owner references, through the object index). */
function livePods(ctx: StateContext, app: App): PodImage[] {
  const out: PodImage[] = [];
  const seen = new Set<string>();
  const walk = (o: KubeObject | undefined, depth: number) => {
    const uid = o?.metadata?.uid;
    if (!o || !uid || seen.has(uid) || depth > 4) return;
    seen.add(uid);
    if (o.kind === 'Pod') {
      const st = (
        o as {
          status?: { phase?: string; containerStatuses?: Array<{ name?: string; image?: string; imageID?: string }> };
        }
      ).status;
      const gone = (o.metadata as { deletionTimestamp?: string } | undefined)?.deletionTimestamp;
      if (st?.phase === 'Running' && !gone)
        for (const cs of st.containerStatuses ?? [])
          out.push({
            pod: o.metadata?.name ?? '?',
            container: cs.name ?? '?',
            image: cs.image ?? '',
            imageID: cs.imageID ?? '',
          });
      return;
    }
    for (const c of ctx.o.index.childrenOf(app.cluster, uid)) walk(c, depth + 1);
  };
  for (const r of app.inventory) {
    // (a Flagger Canary: its Pods are its `-primary` Deployment's, a child of the Canary)
    if (
      !['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job', 'CronJob', 'Pod', 'Rollout', 'Canary'].includes(
        r.kind,
      )
    )
      continue;
    const o = ctx.o.index.get(app.cluster, r);
    if (o) walk({ ...o, kind: o.kind ?? r.kind }, 0);
  }
  return out;
}

export async function recordVerification(ctx: StateContext, app: App, rel: Tracked, periodic: boolean): Promise<void> {
  // with a canary, the release is verified by its canary: promoted all the way, or aborted with what was measured
  const canaries = canariesOf(ctx, app, rel);
  const canary = canaryVerdict(canaries.outcomes);
  const expired = Date.now() - rel.seenAt > FOLLOW_MS;
  if (!periodic && !expired && (canary?.status === 'pending' || canaries.missing.length)) return;
  // the images Git names are unknown when the render did not complete: the running digests cannot be judged
  const imagesKnown = rel.images !== undefined;
  const images = rel.images ?? [];
  let live = checkLiveDigests(images, livePods(ctx, app));
  // right after a reconcile the old Pods may still run: wait (bounded) for the rollout before judging
  const sinceHealth = Date.now() - (rel.healthAt ?? 0);
  // (an aborted canary is judged at once: its stable Pods run the previous digest on purpose)
  if (
    !periodic &&
    imagesKnown &&
    canary?.status !== 'failed' &&
    (live.unexpected.length || live.unresolved) &&
    sinceHealth < ROLLOUT_SETTLE_MS
  )
    return;
  const spec = verificationFor(verifications(ctx), app);
  // a versionHeader must name this release's image (its digest, or its tag): presence alone passes nothing
  const http = spec ? await httpCheck(spec, expectedVersions(images)) : undefined;
  live = checkLiveDigests(images, livePods(ctx, app));
  const reasons: string[] = [];
  let status: 'ok' | 'failed' | 'unknown' = 'ok';
  if (canaries.missing.length) {
    status = 'unknown';
    reasons.push(`${canaries.missing.join(', ')} not seen by the console: its canary is unknown`);
  }
  if (canary?.status === 'failed') {
    status = 'failed';
    reasons.push(canary.reason);
  } else if (canary?.status === 'pending') {
    status = 'unknown';
    reasons.push(`not promoted yet: ${canary.reason}`);
  }
  if (canary && !spec) {
    // the canary's analysis is the business check; a separate HTTP check is optional then
  } else if (!spec) {
    status = 'unknown';
    reasons.push(`no HTTP check configured for ${app.cluster}/${app.env} or ${app.id}`);
  } else if (http && !http.ok) {
    if (status !== 'failed') status = http.unknown ? 'unknown' : 'failed';
    reasons.push(`HTTP check: ${http.reason}`);
  }
  if (!imagesKnown) {
    if (status === 'ok') status = 'unknown';
    reasons.push("the release's images are unknown (its render did not complete): the running digests are not judged");
  } else if (live.unexpected.length) {
    status = 'failed';
    const u = live.unexpected[0];
    reasons.push(
      `${live.unexpected.length} container(s) run a digest Git did not name (e.g. ${u?.pod}/${u?.container}: ${u?.digest})`,
    );
  }
  if (live.pods === 0 && images.length) {
    if (status === 'ok') status = 'unknown';
    reasons.push('no running Pods found for the images Git names');
  }
  ctx.emit(app, rel, 'verification', 'console', {
    periodic,
    ...(http ? { http } : { http: { configured: false } }),
    ...(canary
      ? {
          canary: {
            outcomes: canaries.outcomes,
            // when the recorder saw it happen (not a periodic check long after): lead time ends here
            ...(canary.status === 'ok' && !periodic
              ? {
                  promotedAt: new Date().toISOString(),
                  promotedSecondsAfterCommit: secondsBetween(rel.commitTime, new Date().toISOString()) ?? null,
                }
              : {}),
          },
        }
      : {}),
    live,
    gitDigests: images.map((i) => ({ image: i.image, digest: i.digest ?? i.resolved ?? null, mutable: i.mutable })),
    ...(status !== 'ok' ? { status, reason: reasons.join('; ') } : {}),
  });
}

async function httpCheck(
  spec: VerificationSpec,
  expected: string[],
): Promise<Record<string, unknown> & { ok: boolean; reason: string; unknown?: true }> {
  const t0 = performance.now();
  const url = withoutUserInfo(spec.url) ?? spec.url;
  try {
    assertFetchableUrl(spec.url);
    const r = await fetch(spec.url, { redirect: 'manual', signal: AbortSignal.timeout(spec.timeoutMs) });
    const body = (await r.text()).slice(0, 64 * 1024);
    const latencyMs = Math.round(performance.now() - t0);
    const headers: Record<string, string> = {};
    r.headers.forEach((v, k) => (headers[k] = v));
    const j = judgeVerification(spec, { status: r.status, body, headers }, expected);
    return {
      url,
      status: r.status,
      latencyMs,
      body: excerpt(body),
      ...(spec.versionHeader
        ? { version: headers[spec.versionHeader.toLowerCase()] ?? null, expectedVersions: expected.slice(0, 20) }
        : {}),
      ...j,
    };
  } catch (e) {
    const j = judgeVerification(spec, { error: message(e) });
    return { url, latencyMs: Math.round(performance.now() - t0), ...j };
  }
}
