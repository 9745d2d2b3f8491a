// Starts planned freeze windows on time (issue 43, decision 0024): on the replica that holds the Lease (or the only
// one), every tick looks for occurrences in force now. For each one it records the start once (the occurrence's
// row: whichever replica inserts it; `window.started`), then freezes each app the window covers until the
// occurrence ends: a new freeze, or the app's freeze extended to that end when it is frozen already and would thaw
// sooner (overlapping windows combine). Each freeze is an ordinary one: the same intent, patches, expiry and exact
// restore. The apps done are written on the occurrence, so a replica that takes the Lease over carries on with the
// rest, and an app on-call unfroze during the window is not frozen again. An app that cannot be frozen (refused:
// 4xx) counts as done and is named in the log; an unreachable cluster or store (5xx) is tried again next tick.
// Break-glass (break-glass.ts): an approved one whose minutes are up has its app frozen again until the
// occurrence's end, then is ended (`breakglass.ended`); a request nobody approved before the occurrence ended
// lapses; an app under an approved break-glass is never frozen by its window meanwhile. Within the hour before an
// occurrence, the teams hear of it (`window.starting-soon`, once: the reminder's row).
import { occurrences, windowCovers, WINDOW_MAX_DAYS, type FreezeWindowSpec } from '../../domain/freeze-windows.ts';
import { WINDOW_STARTING_SOON_MS } from '../../domain/notifications.ts';
import { windowActorName } from '../../domain/window-actor.ts';
import type { App } from '../../domain/app.ts';
import type { EvidenceRecorder } from '../evidence/index.ts';
import type { FreezeActor, FreezeService } from './service.ts';
import { HttpError } from '../http/errors.ts';
import type { BreakGlass, BreakGlassStore } from './break-glass-store.ts';
import type { WindowStore } from './window-store.ts';

export interface WindowSchedulerDeps {
  store: WindowStore;
  /** break-glass requests through the windows (absent: none are ended here) */
  breakGlass?: BreakGlassStore;
  freezes: Pick<FreezeService, 'create' | 'extend' | 'view' | 'holders'>;
  apps: () => App[];
  /** the labels of an app's object (a window's `labels` scope) */
  labels: (appId: string) => Record<string, string> | undefined;
  recorder: Pick<EvidenceRecorder, 'observe'>;
  /** whether this replica acts (holds the Lease, or runs alone) */
  leads: () => boolean;
  /** this replica's name, on the occurrences it starts */
  replica: string;
  now?: () => number;
  tickMs?: number;
  log?: { warn(o: object, m: string): void; info(o: object, m: string): void };
}

const DAY = 86_400_000;

/** The actor of a window's freezes: the console, on behalf of the window (its creator checked then). */
export function windowActor(name: string): FreezeActor {
  return { name: windowActorName(name), may: () => true };
}

export class WindowScheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly d: WindowSchedulerDeps) {}

  private now(): number {
    return this.d.now?.() ?? Date.now();
  }

  start(): void {
    const loop = () => {
      if (this.stopped) return;
      this.running = this.tick()
        .catch((e: unknown) => this.d.log?.warn({ err: String(e) }, 'freeze windows: tick failed'))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(loop, this.d.tickMs ?? 5_000);
        });
    };
    loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One look: every occurrence in force now started, and its apps frozen until its end. */
  async tick(): Promise<void> {
    if (!this.d.leads()) return;
    const now = this.now();
    const open = (await this.d.breakGlass?.list({ open: true, limit: 1000 })) ?? [];
    // apps a second person let through: not the window's to freeze until their minutes are up
    const through = new Set(
      open.filter((b) => b.state === 'approved').map((b) => `${b.window}@${b.startsAt}@${b.app}`),
    );
    for (const w of await this.d.store.list()) {
      // an occurrence in force now began at most WINDOW_MAX_DAYS ago
      for (const o of occurrences(w.spec, now - WINDOW_MAX_DAYS * DAY, now + 1))
        if (o.from <= now && now < o.until) await this.run(w.spec, o.from, o.until, through);
      // the teams hear of an occurrence within the hour before it (notifications.ts), once
      for (const o of occurrences(w.spec, now + 1, now + WINDOW_STARTING_SOON_MS))
        if (o.from > now) await this.announce(w.spec, o.from, o.until, now);
    }
    for (const b of open) await this.endBreakGlass(b, now);
  }

  /** "Starts within the hour": one record per cluster and environment it covers, once per occurrence. */
  private async announce(w: FreezeWindowSpec, from: number, until: number, now: number): Promise<void> {
    const apps = this.d.apps().filter((a) => windowCovers(w, { ...a, labels: this.d.labels(a.id) }));
    if (!apps.length || !(await this.d.store.announce(w.name, from, this.d.replica))) return;
    const places = new Map<string, { cluster: string; env: string; apps: number }>();
    for (const a of apps) {
      const k = `${a.cluster}/${a.env}`;
      const p = places.get(k) ?? { cluster: a.cluster, env: a.env, apps: 0 };
      p.apps++;
      places.set(k, p);
    }
    for (const p of places.values())
      this.d.recorder.observe({
        time: new Date(now).toISOString(),
        type: 'window.starting-soon',
        actor: windowActor(w.name).name,
        app: null,
        cluster: p.cluster,
        env: p.env,
        data: {
          window: w.name,
          reason: w.reason,
          from: new Date(from).toISOString(),
          until: new Date(until).toISOString(),
          apps: p.apps,
        },
      });
  }

  /** An app frozen by window `name` until `until`: a new freeze, or its freeze extended when it would thaw sooner. */
  private async freezeUntil(
    name: string,
    reason: string,
    a: Pick<App, 'id' | 'cluster'>,
    until: number,
    holders?: Map<string, string>,
  ): Promise<void> {
    const holder = (holders ?? (await this.d.freezes.holders())).get(a.id);
    const actor = windowActor(name);
    const planned = { window: name, until };
    if (!holder) await this.d.freezes.create(actor, { cluster: a.cluster, app: a.id, reason }, planned);
    else if (Date.parse((await this.d.freezes.view(holder)).expiresAt) < until)
      await this.d.freezes.extend(holder, actor, { minutes: 1, reason }, planned);
  }

  /** A break-glass whose minutes are up (refrozen until the occurrence's end), or whose occurrence ended. */
  private async endBreakGlass(b: BreakGlass, now: number): Promise<void> {
    const store = this.d.breakGlass;
    if (!store) return;
    const at = new Date(now).toISOString();
    const ended = (from: BreakGlass['state'], to: BreakGlass['state'], note: string, data: object) =>
      store.finish(b.id, from, to, note, at).then((moved) => {
        if (moved)
          this.d.recorder.observe({
            time: at,
            type: 'breakglass.ended',
            actor: windowActor(b.window).name,
            app: b.app,
            cluster: b.cluster,
            env: b.env,
            data: { breakGlass: b.id, window: b.window, state: to, note, ...data },
          });
      });
    if (b.state === 'requested' && now >= b.endsAt)
      return ended('requested', 'lapsed', 'the occurrence ended before a second person approved it', {});
    if (b.state !== 'approved' || b.until === null || now < b.until) return;
    if (now >= b.endsAt)
      return ended('approved', 'ended', 'its time was up after the occurrence ended', { refrozen: false });
    const w = await this.d.store.get(b.window);
    try {
      await this.freezeUntil(
        b.window,
        `${b.window}: ${w?.spec.reason ?? 'planned window'} (after break-glass)`,
        {
          id: b.app,
          cluster: b.cluster,
        },
        b.endsAt,
      );
    } catch (e) {
      const refused = e instanceof HttpError && e.status >= 400 && e.status < 500;
      this.d.log?.warn(
        { breakGlass: b.id, app: b.app, err: String(e), retried: !refused },
        'break-glass: app not frozen again',
      );
      if (!refused) return;
      return ended('approved', 'ended', `its time was up; the app could not be frozen again: ${String(e)}`, {
        refrozen: false,
      });
    }
    return ended('approved', 'ended', 'its time was up: frozen again until the occurrence ends', {
      refrozen: true,
      until: new Date(b.endsAt).toISOString(),
    });
  }

  private async run(w: FreezeWindowSpec, from: number, until: number, through: Set<string>): Promise<void> {
    const { started, occurrence } = await this.d.store.startOccurrence(w.name, from, until, this.d.replica);
    if (started)
      this.d.recorder.observe({
        time: new Date(this.now()).toISOString(),
        type: 'window.started',
        actor: windowActor(w.name).name,
        app: null,
        cluster: null,
        env: null,
        data: {
          window: w.name,
          reason: w.reason,
          from: new Date(from).toISOString(),
          until: new Date(until).toISOString(),
        },
      });
    const done = new Set(occurrence.apps);
    const covered = this.d
      .apps()
      .filter(
        (a) =>
          !done.has(a.id) &&
          !through.has(`${w.name}@${from}@${a.id}`) &&
          windowCovers(w, { ...a, labels: this.d.labels(a.id) }),
      );
    if (!covered.length) return;
    const reason = `${w.name}: ${w.reason}`;
    // the claims read once for the occurrence's apps (each app's claim is its own: no app is frozen twice here)
    const holders = await this.d.freezes.holders();
    const finished: string[] = [];
    for (const a of covered) {
      try {
        await this.freezeUntil(w.name, reason, a, until, holders);
        finished.push(a.id);
      } catch (e) {
        const refused = e instanceof HttpError && e.status >= 400 && e.status < 500;
        this.d.log?.warn(
          { window: w.name, app: a.id, err: String(e), retried: !refused },
          refused ? 'freeze windows: app not frozen (refused)' : 'freeze windows: app not frozen yet (tried again)',
        );
        if (refused) finished.push(a.id);
      }
    }
    await this.d.store.addApps(w.name, from, finished);
  }
}
