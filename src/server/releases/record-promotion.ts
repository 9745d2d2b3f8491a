// The release recorder's state 9, promotion: recorded on the earlier environment's release when the next
// environment (CONSOLE_ENV_ORDER) applies a release running the same image digests. The credit goes to a release
// that went live there (reconciled, not unhealthy, a change: release-effect.ts), a verified one first — never to
// one whose reconcile failed, though it named the same digests.
import type { App } from '../../domain/app.ts';
import { promoted, releaseDigests } from '../../domain/release-images.ts';
import { secondsBetween } from '../../domain/release.ts';
import { familyOf } from '../diff/index.ts';
import { controllerActor, type StateContext, type Tracked } from './tracking.ts';

/**
 * This release was applied: if the previous environment's app of the same family ran the same image digests
 * in one of its releases, that release was promoted here. Recorded on the earlier release, once.
 */
export async function recordPromotion(ctx: StateContext, app: App, rel: Tracked): Promise<void> {
  const order = ctx.o.envOrder ?? ['dev', 'staging', 'prod'];
  const at = order.indexOf(app.env);
  if (at <= 0 || !rel.images) {
    rel.promotionChecked = rel.images !== undefined || at <= 0;
    return;
  }
  // every image must have a digest (pinned or resolved): otherwise the releases cannot be compared
  if (rel.images.some((i) => !i.digest && !i.resolved)) {
    rel.promotionChecked = true;
    return;
  }
  const here = releaseDigests(rel.images);
  const prevEnv = order[at - 1];
  const prev = familyOf(app, ctx.o.catalog.list(), order).find((a) => a.env === prevEnv);
  if (!prev || !here.length) {
    rel.promotionChecked = true;
    return;
  }
  const [artifacts, states] = await Promise.all([
    ctx.o.store.list({ app: prev.id, type: ['release.artifact'], limit: 200 }),
    ctx.o.store.list({
      app: prev.id,
      type: ['release.render', 'release.reconcile', 'release.health', 'release.verification', 'release.promotion'],
      limit: 1000,
    }),
  ]);
  // the releases that went live there: reconciled, never unhealthy, a change there (release-effect.ts); verified ones
  // are preferred
  const live = liveReleases(states);
  const matches = (e: (typeof artifacts)[number]) => {
    const imgs = Array.isArray(e.data.images) ? (e.data.images as Array<Record<string, unknown>>) : [];
    if (!imgs.length || imgs.some((i) => typeof i.digest !== 'string' && typeof i.resolved !== 'string')) return false;
    return promoted(releaseDigests(imgs), here) === true;
  };
  // the release that brought these digests to the previous environment: the oldest of the newest run of its live
  // releases that all name them (in a monorepo, later changes for other environments keep the same digests)
  const run: Array<(typeof artifacts)[number]> = [];
  let waiting = false;
  for (const e of artifacts) {
    const sha = typeof e.data.sha === 'string' ? e.data.sha : '';
    const l = live.get(sha);
    if (!l?.reconciled || l.unhealthy || l.unchanged) {
      // matching, but not live (yet): a reconcile or health of it may still be recorded
      if (matches(e) && !l?.reconciled && !l?.unchanged) waiting = true;
      continue;
    }
    if (matches(e)) run.push(e);
    else if (run.length) break;
  }
  const verified = run.filter((e) => live.get(String(e.data.sha))?.verified);
  const match = (verified.length ? verified : run).at(-1);
  const fromSha = typeof match?.data.sha === 'string' ? match.data.sha : undefined;
  if (!match || !fromSha) {
    rel.promotionChecked = !waiting;
    return;
  }
  const reconciled = live.get(fromSha)?.reconciledAt;
  rel.promotionChecked = true; // the reads succeeded: a failure above leaves it to the next tick
  // once per release and environment: a later release here with the same digests is no second promotion of it
  if (states.some((e) => e.type === 'release.promotion' && e.data.sha === fromSha && e.data.toEnv === app.env)) return;
  const now = new Date().toISOString();
  ctx.o.recorder.observe({
    time: now,
    type: 'release.promotion',
    actor: controllerActor(app),
    app: prev.id,
    cluster: prev.cluster,
    env: prev.env,
    data: {
      sha: fromSha,
      revision: String(match.data.revision ?? fromSha),
      controller: prev.controller,
      status: 'ok',
      toEnv: app.env,
      toApp: app.id,
      toCluster: app.cluster,
      toSha: rel.sha,
      digests: here.filter((d) =>
        releaseDigests(
          (Array.isArray(match.data.images) ? match.data.images : []) as Array<Record<string, unknown>>,
        ).includes(d),
      ),
      secondsAfter: secondsBetween(reconciled ?? match.time, now) ?? null,
    },
  });
}

interface LiveRelease {
  reconciled: boolean;
  reconciledAt?: string;
  unhealthy: boolean;
  verified: boolean;
  unchanged: boolean;
}

/** Per sha of the previous environment's app: whether it went live (and stayed healthy), was verified, changed. */
function liveReleases(
  events: Array<{ type: string; time: string; data: Record<string, unknown> }>,
): Map<string, LiveRelease> {
  const out = new Map<string, LiveRelease>();
  for (const e of events) {
    const sha = typeof e.data.sha === 'string' ? e.data.sha : '';
    if (!sha || e.type === 'release.promotion') continue;
    let r = out.get(sha);
    if (!r) out.set(sha, (r = { reconciled: false, unhealthy: false, verified: false, unchanged: false }));
    const ok = e.data.status === undefined || e.data.status === 'ok';
    if (typeof e.data.unchangedFrom === 'string' || (e.type === 'release.render' && e.data.effect === 'unchanged'))
      r.unchanged = true;
    if (e.type === 'release.reconcile' && ok) {
      r.reconciled = true;
      // the newest-first list: the last seen is the first reconcile
      r.reconciledAt = e.time;
    }
    if (
      e.type === 'release.health' &&
      (e.data.status === 'failed' || ['Degraded', 'Missing'].includes(String(e.data.health)))
    )
      r.unhealthy = true;
    if (e.type === 'release.verification' && ok) r.verified = true;
  }
  return out;
}
