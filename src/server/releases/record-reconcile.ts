// The release recorder's states 6 reconcile and 7 health: the applied revision, when, seconds after the commit,
// or the controller's failure; then Healthy / Degraded (with the reason) once the objects had time to roll.
import type { App } from '../../domain/app.ts';
import { pruneHold, pruneHoldLine } from '../../domain/prune-hold.ts';
import { shaOf } from '../../domain/release-commit.ts';
import { secondsBetween } from '../../domain/release.ts';
import {
  controllerActor,
  FOLLOW_MS,
  HEALTH_SETTLE_MS,
  UNHEALTHY_CONFIRM_MS,
  type StateContext,
  type Tracked,
} from './tracking.ts';

/**
 * Notes that kustomize-controller holds this release for a dependency (cheap: the recorder calls it before and
 * between its slower states, so a short wait is seen too). True while it is held.
 */
export function noteDependencyWait(app: App, rel: Tracked): boolean {
  if (app.controller !== 'flux' || rel.recorded.get('reconcile')?.status === 'ok') return false;
  const ready = app.conditions.find((c) => c.type === 'Ready');
  if (shaOf(app.source.revisionObserved) === rel.sha || ready?.status === 'True') return false;
  if (ready?.reason !== 'DependencyNotReady') return false;
  rel.dependencyWait = {
    since: rel.dependencyWait?.since ?? new Date().toISOString(),
    on: dependenciesNamed(ready.message, app),
    line: (app.waitingOn ?? ready.message ?? 'DependencyNotReady').slice(0, 1000),
  };
  return true;
}

export function recordReconcile(ctx: StateContext, app: App, rel: Tracked): void {
  const prev = rel.recorded.get('reconcile');
  if (prev?.status === 'ok') return;
  const ready = app.conditions.find((c) => c.type === 'Ready');
  const readyView = ready
    ? { status: ready.status, reason: ready.reason ?? null, message: ready.message?.slice(0, 1000) ?? null }
    : null;
  const base = {
    secondsAfterCommit: secondsBetween(rel.commitTime, new Date().toISOString()) ?? null,
    ready: readyView,
  };
  const applied = shaOf(app.source.revisionObserved) === rel.sha;
  if (app.controller === 'flux') {
    // held for a dependency (dependsOn): noted while it lasts, said with the reconcile (when it waited, on what)
    if (noteDependencyWait(app, rel)) return;
    if (applied && ready?.status === 'True') {
      rel.reconciledAt = Date.now();
      const w = rel.dependencyWait;
      ctx.emit(app, rel, 'reconcile', controllerActor(app), {
        ...base,
        appliedRevision: app.source.revisionObserved,
        ...(w
          ? {
              waited: {
                on: w.on,
                since: w.since,
                seconds: secondsBetween(w.since, new Date().toISOString()) ?? null,
                line: w.line,
              },
            }
          : {}),
      });
      return;
    }
    const attempted = shaOf(app.source.revisionAttempted) === rel.sha;
    if ((attempted || applied) && ready?.status === 'False') {
      // the console's prune policy holds it until a preview is approved: held, its own status (not a failure)
      const hold = pruneHold(app);
      const reason = hold
        ? pruneHoldLine(hold)
        : `${ready.reason ?? 'Ready=False'}: ${ready.message ?? ''}`.slice(0, 1000);
      if (prev?.reason === reason) return;
      ctx.emit(app, rel, 'reconcile', controllerActor(app), {
        ...base,
        ...(applied ? { appliedRevision: app.source.revisionObserved } : {}),
        attemptedRevision: app.source.revisionAttempted ?? null,
        status: hold ? 'held' : 'failed',
        reason,
        ...(hold ? { held: { objects: hold.objects, count: hold.count } } : {}),
      });
    }
    return;
  }
  // Argo CD: synced at this revision; a sync operation of this revision that failed (a hook, an object), or an
  // error condition, fails it
  const err = app.conditions.find((c) => /Error$/.test(c.type));
  const op = app.syncOperation;
  // (failing: ended Failed/Error, or retrying after an attempt that failed: Argo CD 3.x keeps the phase Running)
  const opFailed = op?.failing === true && shaOf(op.revision) === rel.sha;
  if (applied && app.sync === 'Synced' && !opFailed) {
    rel.reconciledAt = Date.now();
    ctx.emit(app, rel, 'reconcile', controllerActor(app), {
      ...base,
      appliedRevision: app.source.revisionObserved,
    });
  } else if (opFailed) {
    const hold = pruneHold(app);
    const reason = hold ? pruneHoldLine(hold) : `sync ${op.phase}: ${op.why ?? 'no message'}`.slice(0, 1000);
    if (prev?.reason === reason) return;
    ctx.emit(app, rel, 'reconcile', controllerActor(app), {
      ...base,
      attemptedRevision: op.revision ?? null,
      status: hold ? 'held' : 'failed',
      reason,
      ...(hold ? { held: { objects: hold.objects, count: hold.count } } : {}),
    });
  } else if (err) {
    const reason = `${err.type}: ${err.message ?? ''}`.slice(0, 1000);
    if (prev?.reason === reason) return;
    ctx.emit(app, rel, 'reconcile', controllerActor(app), { ...base, status: 'failed', reason });
  }
}

export function recordHealth(
  ctx: StateContext,
  app: App,
  rel: Tracked,
  expired: boolean,
  canary: 'running' | 'aborted' | 'none' = 'none',
): void {
  if (rel.recorded.has('health') || rel.recorded.get('reconcile')?.status !== 'ok') return;
  // a canary that is still running (paused on a step, analysing) is not the release's health yet
  if (canary === 'running' && !expired) return;
  const since = rel.reconciledAt ?? Date.now();
  if (Date.now() - since < HEALTH_SETTLE_MS) return;
  const unhealthy = app.health === 'Degraded' || app.health === 'Missing';
  if (!unhealthy) rel.unhealthySince = undefined;
  const settled = unhealthy || app.health === 'Healthy' || app.health === 'Suspended';
  if (!settled && !expired) return;
  // (an aborted canary is its controller's verdict: Degraded needs no watching to be confirmed)
  if (unhealthy && !expired && canary !== 'aborted') {
    rel.unhealthySince ??= Date.now();
    if (Date.now() - rel.unhealthySince < UNHEALTHY_CONFIRM_MS) return;
  }
  rel.healthAt = Date.now();
  ctx.emit(app, rel, 'health', 'console', {
    health: app.health,
    message: app.healthMessage.slice(0, 1000),
    secondsAfterReconcile: Math.round((Date.now() - since) / 100) / 10,
    secondsAfterCommit: secondsBetween(rel.commitTime, new Date().toISOString()) ?? null,
    ...(app.health === 'Healthy'
      ? {}
      : {
          status: app.health === 'Degraded' || app.health === 'Missing' ? 'failed' : 'unknown',
          reason: settled
            ? `${app.health}: ${app.healthMessage}`.slice(0, 1000)
            : `still ${app.health} ${Math.round(FOLLOW_MS / 60_000)} min after the revision appeared: ${app.healthMessage}`.slice(
                0,
                1000,
              ),
        }),
  });
}

/** The dependencies kustomize-controller names ("dependency 'flux-system/infra-dev' is not ready"), else dependsOn. */
export function dependenciesNamed(message: string | undefined, app: App): string[] {
  const named = [...(message ?? '').matchAll(/dependency '([^']+)'/g)].map((m) => m[1] as string);
  return named.length ? named : (app.dependsOn ?? []).map((d) => `${d.namespace}/${d.name}`);
}
