// "A freeze ends in 15 minutes" (issue 28): where notifications are sent, the delivering replica looks at the
// active freezes every half minute and records `freeze.ending-soon` once per freeze and expiry (an extension
// makes a new expiry, and a new reminder). The record is evidence like any other, so the sinks deliver it at
// least once and in order, and an auditor sees that on-call was told. Recorded as an observation (retried, never
// dropped); already recorded ones are found in the chain after a restart or a Lease handover.
import { FREEZE_ENDING_SOON_MS } from '../../domain/notifications.ts';
import type { EvidenceRecorder, EvidenceStore } from '../evidence/index.ts';
import type { FreezeStore } from '../freeze/index.ts';

export interface FreezeReminderOptions {
  freezes: Pick<FreezeStore, 'list'>;
  store: Pick<EvidenceStore, 'list'>;
  recorder: Pick<EvidenceRecorder, 'record'>;
  log: { warn(o: object, m: string): void };
  everyMs?: number;
  now?: () => number;
}

export class FreezeReminder {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private busy = false;
  /** `<freeze id> <expiry>` already recorded (here, or found in the chain) */
  private readonly sent = new Set<string>();

  constructor(private readonly o: FreezeReminderOptions) {}

  start(): void {
    if (this.timer) return;
    const every = this.o.everyMs ?? 30_000;
    const tick = () => {
      if (this.busy) return; // the last look is still going: no second one beside it
      this.busy = true;
      this.running = this.tick()
        .then(
          () => undefined,
          (e: unknown) =>
            this.o.log.warn({ err: e instanceof Error ? e.message : String(e) }, 'freeze reminder: a check failed'),
        )
        .finally(() => {
          this.busy = false;
        });
    };
    tick();
    this.timer = setInterval(tick, every);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** one look at the active freezes (exported for tests) */
  async tick(): Promise<number> {
    const now = this.o.now?.() ?? Date.now();
    let recorded = 0;
    for (const f of await this.o.freezes.list({ active: true, limit: 500 })) {
      if (f.status !== 'active') continue;
      const left = Date.parse(f.expiresAt) - now;
      if (!(left > 0 && left <= FREEZE_ENDING_SOON_MS)) continue;
      const key = `${f.id} ${f.expiresAt}`;
      if (this.sent.has(key)) continue;
      const earlier = await this.o.store.list({ type: 'freeze.ending-soon', text: f.id, limit: 50 });
      if (!earlier.some((e) => e.data.freezeId === f.id && e.data.expiresAt === f.expiresAt)) {
        await this.o.recorder.record({
          time: new Date(now).toISOString(),
          type: 'freeze.ending-soon',
          actor: 'console',
          app: f.app,
          cluster: f.cluster,
          env: f.env ?? f.doc.targets[0]?.env ?? null,
          data: { freezeId: f.id, expiresAt: f.expiresAt, minutesLeft: Math.ceil(left / 60_000) },
        });
        recorded++;
      }
      this.sent.add(key);
    }
    return recorded;
  }
}
