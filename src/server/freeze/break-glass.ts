// Break-glass through a planned freeze window (issue 43, decision 0026): a developer asks to deploy one app through
// the window in force (a reason, at most 60 minutes); a second person — on-call on the app's environment, and not
// the requester (linked identities are one person) — approves. Both are actions, their intent recorded first
// (`breakglass.requested`, `breakglass.approved`). The approval ends the window's freeze of that app as any end
// does (Git wins, the automation restored exactly: the controller deploys); when the minutes are up the scheduler
// (window-scheduler.ts, on the Lease holder) freezes it again until the occurrence's end (`breakglass.ended`,
// refrozen), or only records the end when the occurrence is over. An app frozen by a person's freeze is not the
// window's to lift: refused, that freeze's end is on-call's.
import { randomUUID } from 'node:crypto';
import { breakGlassErrors, breakGlassUntil, type BreakGlassInput } from '../../domain/break-glass.ts';
import { occurrences, windowCovers, WINDOW_MAX_DAYS } from '../../domain/freeze-windows.ts';
import { windowActorName } from '../../domain/window-actor.ts';
import type { App } from '../../domain/app.ts';
import { identityOf, samePerson, type Principal } from '../auth/index.ts';
import type { EvidenceRecorder } from '../evidence/index.ts';
import { HttpError } from '../http/errors.ts';
import type { BreakGlass, BreakGlassStore } from './break-glass-store.ts';
import type { FreezeActor, FreezeService } from './service.ts';
import type { WindowStore } from './window-store.ts';

export interface BreakGlassDeps {
  store: BreakGlassStore;
  windows: WindowStore;
  freezes: Pick<FreezeService, 'end' | 'view' | 'holders'>;
  recorder: Pick<EvidenceRecorder, 'act' | 'refuse' | 'observe'>;
  apps: () => App[];
  labels: (appId: string) => Record<string, string> | undefined;
  now?: () => number;
}

/** What the route checked of the person: whether they may ask (deploy) or approve (on-call) on an app's place. */
export interface BreakGlassUser {
  principal: Principal;
  may: (cluster: string, env: string) => boolean;
  /** records the refusal as `access.denied` (the guard's words) */
  denied: (cluster: string, env: string, app: string, reason: string) => void;
}

const iso = (t: number) => new Date(t).toISOString();

export class BreakGlassService {
  constructor(private readonly d: BreakGlassDeps) {}

  private now(): number {
    return this.d.now?.() ?? Date.now();
  }

  /** A developer asks to deploy `input.app` through window `name`, in force now. */
  async request(name: string, user: BreakGlassUser, input: BreakGlassInput): Promise<BreakGlass> {
    const errors = breakGlassErrors(input);
    if (errors.length) throw new HttpError(400, 'BadRequest', errors.map((e) => `${e.field}: ${e.message}`).join('; '));
    const app = this.d.apps().find((a) => a.id === input.app);
    if (!app || !user.may(app.cluster, app.env)) {
      const why = app
        ? `You need the developer or oncall role on ${app.cluster}/${app.env} to ask for a break-glass`
        : `no app ${input.app}`;
      if (app) user.denied(app.cluster, app.env, app.id, why);
      throw new HttpError(app ? 403 : 404, app ? 'Forbidden' : 'NotFound', why);
    }
    const w = await this.d.windows.get(name);
    if (!w || w.deleted) throw new HttpError(404, 'NotFound', `no window ${name}`);
    const t = this.now();
    // the occurrence in force, as the scheduler keys it (its own start, not a stretch of touching ones)
    const occurrence = occurrences(w.spec, t - WINDOW_MAX_DAYS * 86_400_000, t + 1).find(
      (o) => o.from <= t && t < o.until,
    );
    if (!occurrence) throw new HttpError(409, 'Conflict', `window ${name} is not in force now: nothing to break`);
    if (!windowCovers(w.spec, { ...app, labels: this.d.labels(app.id) }))
      throw new HttpError(409, 'Conflict', `window ${name} does not cover ${app.id}`);
    // one open request per app and occurrence (the store's unique index decides a race between two)
    const open = (await this.d.store.list({ open: true, limit: 1000 })).find(
      (x) => x.app === app.id && x.window === name && x.startsAt === occurrence.from,
    );
    if (open)
      throw new HttpError(409, 'Conflict', `${app.id} has an open break-glass through ${name} already (${open.state})`);
    const b = {
      id: randomUUID(),
      window: name,
      startsAt: occurrence.from,
      endsAt: occurrence.until,
      app: app.id,
      cluster: app.cluster,
      env: app.env,
      reason: input.reason.trim(),
      minutes: input.minutes,
      requestedBy: user.principal.name,
      requester: identityOf(user.principal),
      requestedAt: iso(t),
    };
    await this.d.recorder.act(
      {
        time: iso(t),
        type: 'breakglass.requested',
        actor: b.requestedBy,
        app: app.id,
        cluster: app.cluster,
        env: app.env,
        data: {
          breakGlass: b.id,
          window: name,
          reason: b.reason,
          minutes: b.minutes,
          occurrenceUntil: iso(b.endsAt),
          // who asked (issuer, subject, person): never the one who approves, nor notified to approve it
          requester: b.requester,
        },
      },
      async () => {
        if (!(await this.d.store.create(b)))
          throw new HttpError(409, 'Conflict', `${app.id} has an open break-glass through ${name} already`);
      },
    );
    return this.get(b.id);
  }

  async get(id: string): Promise<BreakGlass> {
    const b = await this.d.store.get(id);
    if (!b) throw new HttpError(404, 'NotFound', `no break-glass ${id}`);
    return b;
  }

  /**
   * A second person approves: the window's freeze of the app ends (Git wins, the automation restored) and the
   * window holds the app again after the request's minutes (the scheduler).
   */
  async approve(id: string, user: BreakGlassUser): Promise<BreakGlass> {
    const b = await this.get(id);
    if (!user.may(b.cluster, b.env)) {
      const why = `You need the oncall role on ${b.cluster}/${b.env} to approve a break-glass`;
      user.denied(b.cluster, b.env, b.app, why);
      throw new HttpError(403, 'Forbidden', why);
    }
    const t = this.now();
    const refuse = async (status: 403 | 409, why: string): Promise<never> => {
      await this.d.recorder.refuse({
        time: iso(t),
        actor: user.principal.name,
        app: b.app,
        cluster: b.cluster,
        env: b.env,
        action: 'breakglass.approved',
        reason: why,
        data: { breakGlass: b.id, window: b.window, requester: b.requester, approver: identityOf(user.principal) },
      });
      throw new HttpError(status, status === 403 ? 'Forbidden' : 'Conflict', why);
    };
    if (samePerson(identityOf(user.principal), b.requester))
      return refuse(
        403,
        'a break-glass needs a second person: you asked for it, someone else with on-call must approve',
      );
    if (b.state !== 'requested') return refuse(409, `break-glass ${b.id} is ${b.state}, not waiting for approval`);
    if (t >= b.endsAt) return refuse(409, `window ${b.window}'s occurrence is over: nothing to break`);
    const holder = (await this.d.freezes.holders()).get(b.app);
    const freeze = holder ? await this.d.freezes.view(holder) : undefined;
    if (freeze && freeze.createdBy !== windowActorName(b.window))
      return refuse(
        409,
        `${b.app} is held by ${freeze.createdBy}'s freeze, not by window ${b.window}: only that freeze's end lifts it`,
      );
    const until = breakGlassUntil(t, b.minutes, b.endsAt);
    const approver: FreezeActor = { name: user.principal.name, may: () => true };
    await this.d.recorder.act(
      {
        time: iso(t),
        type: 'breakglass.approved',
        actor: user.principal.name,
        app: b.app,
        cluster: b.cluster,
        env: b.env,
        data: {
          breakGlass: b.id,
          window: b.window,
          requestedBy: b.requestedBy,
          reason: b.reason,
          until: iso(until),
          ...(freeze ? { freezeId: freeze.id } : { freezeId: null }),
        },
      },
      async () => {
        if (!(await this.d.store.approve(b.id, user.principal.name, iso(t), until)))
          throw new HttpError(409, 'Conflict', `break-glass ${b.id} was decided meanwhile`);
        // the window's freeze of the app ends as any end does: Git wins for live changes, the automation restored
        if (freeze)
          await this.d.freezes.end(freeze.id, approver, []).catch(async (e: unknown) => {
            await this.d.store.finish(
              b.id,
              'approved',
              'failed',
              `the window's freeze did not end: ${String(e)}`,
              iso(this.now()),
            );
            throw e;
          });
      },
      () => ({ breakGlass: b.id }),
    );
    return this.get(b.id);
  }
}
