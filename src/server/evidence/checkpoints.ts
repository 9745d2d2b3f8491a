// Signed checkpoints of the evidence chain head, every CONSOLE_CHECKPOINT_INTERVAL_S (default 300 s) and at
// start and stop. The key stays outside the database (signing.ts): rewriting the whole store consistently —
// events, hashes and head — no longer matches the hashes the console signed earlier, and verify() says so.
import type { EvidenceStore } from './store.ts';
import { signCheckpoint, type Checkpoint, type SigningKey } from './signing.ts';

export const DEFAULT_CHECKPOINT_INTERVAL_S = 300;

export function checkpointIntervalMs(env: NodeJS.ProcessEnv = process.env): number {
  const s = Number(env.CONSOLE_CHECKPOINT_INTERVAL_S ?? DEFAULT_CHECKPOINT_INTERVAL_S);
  return (Number.isFinite(s) && s > 0 ? s : DEFAULT_CHECKPOINT_INTERVAL_S) * 1000;
}

interface Log {
  warn(o: object, m: string): void;
}

export class EvidenceCheckpoints {
  private timer: NodeJS.Timeout | undefined;
  private lastSeq = 0;
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: EvidenceStore,
    private readonly key: SigningKey,
    private readonly opts: { intervalMs?: number; log?: Log; now?: () => Date } = {},
  ) {}

  /** Signs the current head unless it is already signed; the checkpoint written, or undefined. */
  checkpoint(): Promise<Checkpoint | undefined> {
    // one at a time: the interval and stop() never race for the same head
    const next = this.running.then(() => this.write());
    this.running = next.catch(() => undefined);
    return next;
  }

  private async write(): Promise<Checkpoint | undefined> {
    if (!this.store.addCheckpoint) return undefined;
    const [head] = await this.store.list({ limit: 1 });
    if (!head || head.seq <= this.lastSeq) return undefined;
    const c = signCheckpoint(head, (this.opts.now?.() ?? new Date()).toISOString(), this.key.privateKey);
    await this.store.addCheckpoint(c);
    this.lastSeq = head.seq;
    return c;
  }

  private tick = () => {
    this.checkpoint().catch((e: unknown) =>
      this.opts.log?.warn({ err: e instanceof Error ? e.message : String(e) }, 'evidence checkpoint failed'),
    );
  };

  start(): void {
    this.tick();
    this.timer = setInterval(this.tick, this.opts.intervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_S * 1000);
    this.timer.unref();
  }

  /** stops the interval and signs the head one last time */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.checkpoint().catch((e: unknown) =>
      this.opts.log?.warn({ err: e instanceof Error ? e.message : String(e) }, 'evidence checkpoint failed'),
    );
  }
}
