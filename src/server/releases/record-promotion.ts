// The release recorder's state 9, promotion: recorded on the earlier environment's release when the next
// environment (CONSOLE_ENV_ORDER) applies a release running the same image digests.
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
  const artifacts = await ctx.o.store.list({ app: prev.id, type: ['release.artifact'], limit: 50 });
  // the release that brought these digests to the previous environment: the oldest of the newest run of its
  // releases that all name them (in a monorepo, later commits for other environments keep the same digests)
  const matches = (e: (typeof artifacts)[number]) => {
    const imgs = Array.isArray(e.data.images) ? (e.data.images as Array<Record<string, unknown>>) : [];
    if (!imgs.length || imgs.some((i) => typeof i.digest !== 'string' && typeof i.resolved !== 'string')) return false;
    return promoted(releaseDigests(imgs), here) === true;
  };
  let match: (typeof artifacts)[number] | undefined;
  for (const e of artifacts) {
    if (matches(e)) match = e;
    else if (match) break;
  }
  const fromSha = typeof match?.data.sha === 'string' ? match.data.sha : undefined;
  if (!match || !fromSha) {
    rel.promotionChecked = true;
    return;
  }
  const done = await ctx.o.store.list({ app: prev.id, type: ['release.promotion'], limit: 100 });
  const reconciled = (await ctx.o.store.list({ app: prev.id, type: ['release.reconcile'], limit: 100 })).find(
    (e) => e.data.sha === fromSha && e.data.status === 'ok',
  );
  rel.promotionChecked = true; // the reads succeeded: a failure above leaves it to the next tick
  if (done.some((e) => e.data.sha === fromSha && e.data.toSha === rel.sha)) return;
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
      secondsAfter: secondsBetween(reconciled?.time ?? match.time, now) ?? null,
    },
  });
}
