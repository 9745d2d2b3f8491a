// Starting a freeze (one app, or every app of an environment on a cluster): validate, record the intent,
// claim the apps in the store, patch each app object; a refusal half-way undoes it all. And extending one.
// Intent only for what may happen: the checks that need no write (the role; an app another freeze holds, by its
// claim in the store; an app object that cannot be frozen; a freeze that is not active) run before the intent, and
// what they refuse is one `action.refused` record (refusal.ts), never a `freeze.started` / `freeze.extended`; the
// store's claim inside the action still catches a race lost to another freeze (then `action.failed`).
import { randomUUID } from 'node:crypto';
import type { App } from '../../domain/app.ts';
import {
  appSetFreezeOps,
  appSetOwnerOf,
  appSetPriorOf,
  appSetRestoreOps,
  cannotFreeze,
  freezePatch,
  freezeRequestErrors,
  frozenState,
  pauseHandled,
  priorOf,
  restorePatch,
  FREEZE_DEFAULT_MINUTES,
  FREEZE_MAX_MINUTES,
  type AppSetPrior,
  type FieldError,
  type PriorAutomation,
  type RolloutPrior,
} from '../../domain/freeze.ts';
import { metaOf, type Obj } from '../../domain/object-meta.ts';
import { HttpError } from '../http/errors.ts';
import {
  CONCURRENCY,
  mapLimit,
  patchAppSet,
  patchObject,
  patchUnchanged,
  readAppSet,
  readObject,
  readRolloutPriors,
  setRolloutPaused,
} from './app-objects.ts';
import { confirmPause } from './out-of-band.ts';
import { mustMay, viewFreeze } from './read.ts';
import { refuseFreeze } from './refusal.ts';
import { outcomeUnknown, settleUncertainPatch } from './uncertain.ts';
import type { FreezeDoc, FreezeTarget } from './store.ts';
import type { FreezeActor, FreezeContext, FreezeStart, FreezeView } from './types.ts';

/**
 * How long a freeze lasts, in ms: its `minutes` (default FREEZE_DEFAULT_MINUTES), or its `seconds` where the console
 * allows them (`minSeconds`: CONSOLE_FREEZE_MIN_SECONDS, tests only); the errors name the field. The `minutes` are
 * checked by the domain (freezeRequestErrors), as always.
 */
export function freezeLength(
  input: Pick<FreezeStart, 'minutes' | 'seconds'>,
  minSeconds: number | undefined,
): { ms: number; errors: FieldError[] } {
  const { minutes, seconds } = input;
  if (seconds === undefined) return { ms: (minutes ?? FREEZE_DEFAULT_MINUTES) * 60_000, errors: [] };
  const error = (message: string) => ({ ms: 0, errors: [{ field: 'seconds', message }] });
  if (minSeconds === undefined) return error('not accepted: give the length in minutes');
  if (minutes !== undefined) return error('give the length in minutes or in seconds, not both');
  if (!Number.isInteger(seconds) || seconds < minSeconds)
    return error(`the length must be a whole number of seconds, at least ${minSeconds}`);
  if (seconds > FREEZE_MAX_MINUTES * 60) return error(`a freeze lasts at most ${FREEZE_MAX_MINUTES} minutes (24 h)`);
  return { ms: seconds * 1000, errors: [] };
}

/** A planned window's occurrence (window-scheduler.ts): the freeze lasts until its end, and names it. */
export interface PlannedBy {
  window: string;
  until: number;
}

export async function createFreeze(
  ctx: FreezeContext,
  user: FreezeActor,
  input: FreezeStart,
  planned?: PlannedBy,
): Promise<FreezeView> {
  const { deps } = ctx;
  // a window's occurrence ends when the window says (up to WINDOW_MAX_DAYS, checked when the window was made)
  const length = planned
    ? planned.until > ctx.now()
      ? { ms: planned.until - ctx.now(), errors: [] }
      : { ms: 0, errors: [{ field: 'until', message: `window ${planned.window}'s occurrence has ended` }] }
    : freezeLength(input, deps.minSeconds);
  const errors = [...freezeRequestErrors(input), ...length.errors];
  if (!input.app && !input.env) errors.push({ field: 'app', message: 'name an app or an environment' });
  if (errors.length) throw new HttpError(400, 'BadRequest', errors.map((e) => `${e.field}: ${e.message}`).join('; '));
  const apps = targetsOf(ctx, input);
  for (const a of apps)
    if (!user.may(a.cluster, a.env)) {
      const why = `You need the oncall role on ${a.cluster}/${a.env} to freeze deployments`;
      user.denied?.(a.cluster, a.env, a.id, why);
      throw new HttpError(403, 'Forbidden', why);
    }
  const scopeEnv = input.env ?? apps[0]?.env ?? null;
  // an app another freeze holds (its claim in the store) is not frozen again: extend that freeze instead
  const claims = await deps.store.claims();
  const refused: string[] = [];
  const free: App[] = [];
  for (const a of apps) {
    const holder = claims.get(a.id);
    if (holder) refused.push(`${a.name}: already frozen (freeze ${holder}): extend it instead`);
    else free.push(a);
  }
  // read each app object now: its prior automation is what the end restores
  const conn = deps.conn(input.cluster, user);
  const read: Array<{ a: App; obj: Obj }> = [];
  // one app (on-call's freeze in an incident): the object as the apiserver has it, so the prior the intent
  // records is never a cache copy that lags a change made a moment ago. A whole environment: the informers'
  // copy (every patch carries its resourceVersion, and a 409 reads the object again), a GET only for what the
  // cache does not hold
  const objects = await mapLimit(
    free,
    CONCURRENCY,
    async (a) => (input.app ? undefined : deps.apps.raw(a.id)) ?? readObject(conn, a),
  );
  // an Application an ApplicationSet generates: the ApplicationSet as it was (the end takes back what the freeze
  // adds there: domain/freeze.ts AppSetPrior)
  const appSets = new Map<string, AppSetPrior>();
  const rolloutPriors = new Map<string, RolloutPrior[]>();
  for (const [i, a] of free.entries()) {
    let obj = objects[i] as Obj;
    let why = cannotFreeze(a.controller, obj);
    // a refusal is confirmed on the object itself, not on a copy that may lag behind
    if (why) why = cannotFreeze(a.controller, (obj = await readObject(conn, a)));
    const owner = a.controller === 'argocd' ? appSetOwnerOf(obj) : undefined;
    if (!why && owner)
      try {
        appSets.set(a.id, appSetPriorOf(await readAppSet(conn, a.namespace, owner)));
      } catch (e) {
        why = `generated by ApplicationSet ${owner}, which cannot be read (${e instanceof Error ? e.message : String(e)}): its controller would undo the freeze`;
      }
    // its Rollouts' spec.paused as they are (the freeze pauses them; the end puts each back)
    if (!why)
      try {
        const rollouts = await readRolloutPriors(conn, a.inventory);
        if (rollouts.length) rolloutPriors.set(a.id, rollouts);
      } catch (e) {
        why = `its Rollouts cannot be read (${e instanceof Error ? e.message : String(e)})`;
      }
    if (why) refused.push(`${a.name}: ${why}`);
    else read.push({ a, obj });
  }
  if (!read.length || (input.app && refused.length))
    return refuseFreeze(ctx, user, {
      action: 'freeze.started',
      cluster: input.cluster,
      env: scopeEnv,
      app: input.app ?? null,
      reason: `cannot freeze ${refused.join('; ')}`,
      data: { apps: apps.map((a) => a.id) },
    });
  const id = `frz-${randomUUID().slice(0, 8)}`;
  const now = ctx.now();
  const createdAt = new Date(now).toISOString();
  const expiresAt = new Date(planned ? planned.until : now + length.ms).toISOString();
  const reason = input.reason.trim();
  const targets: FreezeTarget[] = read.map(({ a, obj }) => ({
    appId: a.id,
    kind: a.kind,
    namespace: a.namespace,
    name: a.name,
    controller: a.controller,
    env: a.env,
    prior: withRollouts(withAppSet(priorOf(a.controller, obj), appSets.get(a.id)), rolloutPriors.get(a.id)),
    applied: false,
  }));
  const row = {
    id,
    cluster: input.cluster,
    env: input.env ?? null,
    app: input.app ?? null,
    status: 'active' as const,
    reason,
    incident: input.incident || null,
    createdBy: user.name,
    createdAt,
    expiresAt,
    doc: { targets, extensions: [], startedAt: createdAt } satisfies FreezeDoc,
  };
  /** the apps whose patch the cluster never answered, and whose result stayed unknown (uncertain.ts) */
  const unconfirmed: string[] = [];
  await deps.recorder.act(
    {
      time: createdAt,
      type: 'freeze.started',
      actor: user.name,
      app: input.app ?? null,
      cluster: input.cluster,
      env: scopeEnv,
      data: {
        freezeId: id,
        reason,
        incident: input.incident || null,
        ...(planned
          ? { window: planned.window }
          : input.seconds !== undefined
            ? { seconds: input.seconds }
            : { minutes: input.minutes ?? FREEZE_DEFAULT_MINUTES }),
        until: expiresAt,
        apps: targets.map((t) => t.appId),
        prior: Object.fromEntries(targets.map((t) => [t.appId, t.prior])),
        ...(refused.length ? { notFrozen: refused } : {}),
      },
    },
    async () => {
      const claimed = await deps.store.create(row);
      ctx.dropClaims();
      // a race lost to another freeze since the claims were read above (after the intent: action.failed)
      if (!claimed.ok)
        throw new HttpError(
          409,
          'Conflict',
          `already frozen: ${claimed.taken.map((t) => `${t.app} by ${t.freezeId}`).join(', ')} — extend that freeze instead`,
        );
      const meta = { id, by: user.name, reason, until: expiresAt, incident: input.incident || undefined };
      unconfirmed.length = 0;
      try {
        await mapLimit(targets, CONCURRENCY, async (t, i) => {
          // first the ApplicationSet: its controller leaves this Application's sync policy and the freeze
          // annotations alone from now on
          const set = t.prior.controller === 'argocd' ? t.prior.appSet : undefined;
          if (set) {
            const paused = await patchAppSet(
              conn,
              set.namespace,
              set.name,
              (live) => appSetFreezeOps(live, t.name),
              `cannot pause ApplicationSet ${set.name} for ${t.name}`,
              { fence: id, opts: deps.settle },
            );
            // unanswered and unknown at the deadline: it may yet apply, so the undo below takes back whatever it
            // finds; the Application is not frozen while its ApplicationSet may still undo it
            t.appSetPaused = true;
            if (paused === 'unknown')
              throw new HttpError(
                502,
                'ClusterUnreachable',
                `cannot pause ApplicationSet ${set.name} for ${t.name}: the cluster did not answer whether it took effect`,
              );
          }
          // the version the last attempt named: a patch the cluster never answered is settled against it
          let sentRv = '';
          // Flux: a reconcile request rides with the suspend; its echo says no earlier reconcile still applies.
          // Argo CD: the pause is confirmed once no sync operation is pending or running (domain/freeze.ts)
          const requested = new Date(ctx.now()).toISOString();
          const settled = await patchUnchanged(conn, t, read[i]?.obj as Obj, (rv) =>
            freezePatch(t.prior, meta, (sentRv = rv), requested),
          ).then(
            (live) => ({ outcome: 'applied' as const, live }),
            async (e: unknown) => {
              if (!outcomeUnknown(e)) throw e;
              const r = await settleUncertainPatch(conn, t, id, sentRv, deps.settle);
              deps.log?.warn({ app: t.appId, freeze: id, outcome: r.outcome }, 'freeze: a patch without an answer');
              if (r.outcome === 'not-applied') throw e;
              return r;
            },
          );
          if (settled.outcome === 'unknown') {
            // kept as applied: the freeze stays listed (on-call can end it; the end restores whatever it finds)
            t.applied = true;
            t.interference = {
              state: 'unconfirmed',
              at: new Date(ctx.now()).toISOString(),
              message: `the cluster did not answer whether the freeze took effect (${settled.why}); check the app, or end the freeze`,
            };
            unconfirmed.push(t.appId);
            return;
          }
          const after = settled.live;
          t.controllerPause = pauseHandled(after, requested, t.prior.controller)
            ? { requested, confirmed: new Date(ctx.now()).toISOString() }
            : { requested };
          if (t.prior.controller === 'argocd' && frozenState('argocd', after, id) === 'resumed-directly') {
            // an Argo CD CRD without `automated.enabled` pruned the flag: pause by removing `automated`
            t.prior = { ...t.prior, shape: 'removed' };
            const rv2 = String(metaOf(after).resourceVersion ?? '');
            await patchObject(conn, t, freezePatch(t.prior, meta, rv2), `cannot freeze ${t.name}`);
          }
          t.applied = true;
          // then its Rollouts: a canary does not step on while the app is frozen
          for (const r of t.prior.rollouts ?? []) {
            if (r.paused === true) continue;
            const what = `cannot pause ${r.kind ?? 'Rollout'} ${r.name} of ${t.name}`;
            const paused = await setRolloutPaused(conn, r, true, what, { fence: id, opts: deps.settle });
            t.rolloutsPaused = true;
            if (paused === 'unknown') {
              // kept as the app's patch is when unknown: the freeze stands, named unconfirmed; its end puts every
              // Rollout back as it was, whatever the late write did
              t.interference = {
                state: 'unconfirmed',
                at: new Date(ctx.now()).toISOString(),
                message: `the cluster did not answer whether ${r.kind ?? 'Rollout'} ${r.name} was paused; check it, or end the freeze`,
              };
              if (!unconfirmed.includes(t.appId)) unconfirmed.push(t.appId);
            }
          }
        });
      } catch (e) {
        // changes nothing: put back what was frozen, release the claims
        for (const t of targets.filter((x) => x.applied)) {
          const live = await readObject(conn, t).catch(() => undefined);
          if (!live) continue;
          const undone = await patchObject(conn, t, restorePatch(t.prior, live), `cannot undo the freeze of ${t.name}`)
            .then(() => true)
            .catch((err: unknown) => {
              deps.log?.error({ err: String(err), app: t.appId }, 'freeze: undo failed');
              return false;
            });
          // undone: a late copy of an unanswered patch names an older version and can no longer apply
          if (undone) {
            t.applied = false;
            if (t.interference?.state === 'unconfirmed') delete t.interference;
          }
        }
        // a Rollout or an ApplicationSet whose undo fails may stay paused: the freeze is then kept for it (as for an
        // unknown patch), so on-call can end it and the end puts them back as they were
        const keep = (t: FreezeTarget, what: string, err: unknown) => {
          deps.log?.error({ err: String(err), app: t.appId }, `freeze: ${what} undo failed`);
          t.applied = true;
          t.interference = {
            state: 'unconfirmed',
            at: new Date(ctx.now()).toISOString(),
            message: `the freeze could not be undone on its ${what} (${err instanceof Error ? err.message : String(err)}); end the freeze to restore it`,
          };
        };
        for (const t of targets.filter((x) => x.rolloutsPaused))
          for (const r of t.prior.rollouts ?? [])
            await setRolloutPaused(conn, r, r.paused, 'undo', { fence: id, opts: deps.settle }).then(
              (res) => res === 'unknown' && keep(t, `${r.kind ?? 'Rollout'} ${r.name}`, 'no answer'),
              (err: unknown) => keep(t, `${r.kind ?? 'Rollout'} ${r.name}`, err),
            );
        for (const t of targets.filter((x) => x.appSetPaused)) {
          const set = t.prior.controller === 'argocd' ? t.prior.appSet : undefined;
          if (set)
            await patchAppSet(conn, set.namespace, set.name, (live) => appSetRestoreOps(set, live, t.name), 'undo', {
              fence: id,
              opts: deps.settle,
            }).then(
              (res) => res === 'unknown' && keep(t, `ApplicationSet ${set.name}`, 'no answer'),
              (err: unknown) => keep(t, `ApplicationSet ${set.name}`, err),
            );
        }
        await deps.store.modify(id, 'active', (r) => ({
          doc: { ...r.doc, targets: withPatched(r.doc.targets, targets) },
        }));
        // a patch whose result is still unknown may yet apply: that freeze stays, so it can be ended, and it
        // expires like every freeze; the answer names it
        const still = targets.filter((t) => t.interference?.state === 'unconfirmed').map((t) => t.name);
        if (still.length) {
          ctx.arm({ id, expiresAt });
          const kept = `; freeze ${id} is kept: the cluster did not answer whether it froze ${still.join(', ')} (end it to restore them)`;
          throw e instanceof HttpError
            ? new HttpError(e.status, e.code, `${e.message}${kept}`, e.cluster)
            : new HttpError(502, 'ClusterUnreachable', `${String(e)}${kept}`);
        }
        await deps.store.transition(id, 'active', 'failed', { by: user.name, reason: String(e) });
        throw e;
      }
      const startedAt = new Date(ctx.now()).toISOString();
      // on the row as stored now: an extension made while the patches went out stays
      await deps.store.modify(id, 'active', (r) => ({
        doc: { ...r.doc, targets: withPatched(r.doc.targets, targets), startedAt },
      }));
      // an echo the informers delivered before the row named the request: seen on their copy now (later ones
      // come through observe(), out-of-band.ts)
      for (const t of targets) {
        const raw = t.controllerPause && !t.controllerPause.confirmed ? deps.apps.raw(t.appId) : undefined;
        if (raw) await confirmPause(ctx, id, t, raw);
      }
    },
    (o) => (o.ok ? { apps: targets.length, ...(unconfirmed.length ? { unconfirmed } : {}) } : {}),
  );
  ctx.arm({ id, expiresAt });
  return viewFreeze(ctx, id);
}

/** The stored targets with what the patches did (applied, and the prior shape an Argo CD CRD forced). */
function withPatched(stored: FreezeTarget[], patched: FreezeTarget[]): FreezeTarget[] {
  return stored.map((s) => {
    const p = patched.find((x) => x.appId === s.appId);
    return p
      ? {
          ...s,
          prior: p.prior,
          applied: p.applied,
          ...(p.interference ? { interference: p.interference } : {}),
          ...(p.controllerPause && p.applied ? { controllerPause: p.controllerPause } : {}),
        }
      : s;
  });
}

function withRollouts(prior: PriorAutomation, rollouts: RolloutPrior[] | undefined): PriorAutomation {
  return rollouts?.length ? { ...prior, rollouts } : prior;
}

function withAppSet(prior: PriorAutomation, appSet: AppSetPrior | undefined): PriorAutomation {
  return appSet && prior.controller === 'argocd' ? { ...prior, appSet } : prior;
}

function targetsOf(
  ctx: FreezeContext,
  input: { cluster: string; env?: string | undefined; app?: string | undefined },
): App[] {
  if (input.app) {
    const a = ctx.deps.apps.get(input.app);
    if (!a || a.cluster !== input.cluster) throw new HttpError(404, 'NotFound', `no app ${input.app}`);
    return [a];
  }
  const apps = ctx.deps.apps.list().filter((a) => a.cluster === input.cluster && a.env === input.env);
  if (!apps.length) throw new HttpError(404, 'NotFound', `no apps in ${input.cluster}/${String(input.env)}`);
  return apps;
}

export async function extendFreeze(
  ctx: FreezeContext,
  id: string,
  user: FreezeActor,
  body: { minutes: number; reason: string },
  planned?: PlannedBy,
): Promise<FreezeView> {
  const errors = freezeRequestErrors({ reason: body.reason, minutes: planned ? undefined : body.minutes });
  if (errors.length) throw new HttpError(400, 'BadRequest', errors.map((e) => `${e.field}: ${e.message}`).join('; '));
  const f = await viewFreeze(ctx, id);
  mustMay(user, f);
  if (f.status !== 'active')
    return refuseFreeze(ctx, user, {
      action: 'freeze.extended',
      cluster: f.cluster,
      env: f.env ?? f.doc.targets[0]?.env ?? null,
      app: f.app,
      reason: `freeze ${id} is ${f.status}: it cannot be extended`,
      data: { freezeId: id },
    });
  const from = f.expiresAt;
  // a window's occurrence: to its end (the week's cap is on-call's; the window's length was checked when it was made)
  const to = new Date(planned ? planned.until : ctx.now() + body.minutes * 60_000).toISOString();
  if (!planned && Date.parse(to) - Date.parse(f.createdAt) > FREEZE_MAX_MINUTES * 60_000 * 7)
    throw new HttpError(400, 'BadRequest', 'minutes: a freeze cannot be extended past a week in total');
  const at = new Date(ctx.now()).toISOString();
  await ctx.deps.recorder.act(
    {
      time: at,
      type: 'freeze.extended',
      actor: user.name,
      app: f.app,
      cluster: f.cluster,
      env: f.env ?? f.doc.targets[0]?.env ?? null,
      data: {
        freezeId: id,
        reason: body.reason.trim(),
        from,
        until: to,
        ...(planned ? { window: planned.window } : {}),
      },
    },
    async () => {
      // on the row as stored now: what was recorded since the read above (an out-of-band change, another
      // extension) stays; `from` is the expiry this extension replaces
      const done = await ctx.deps.store.modify(id, 'active', (r) => ({
        doc: {
          ...r.doc,
          extensions: [...r.doc.extensions, { at, by: user.name, reason: body.reason.trim(), from: r.expiresAt, to }],
        },
        expiresAt: to,
      }));
      if (!done) throw new HttpError(409, 'Conflict', `freeze ${id} ended meanwhile`);
      // the annotation says the new time too (best effort: the store is the authority)
      const conn = ctx.deps.conn(f.cluster, user);
      for (const t of done.row.doc.targets.filter((x) => x.applied))
        await patchObject(
          conn,
          t,
          {
            contentType: 'application/merge-patch+json',
            body: { metadata: { annotations: { 'gitops-console.dev/frozen-until': to } } },
          },
          `cannot annotate ${t.name}`,
        ).catch(() => undefined);
    },
  );
  ctx.arm({ id, expiresAt: to });
  return viewFreeze(ctx, id);
}
