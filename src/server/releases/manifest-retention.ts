// Manifest retention (issue 28; CONSOLE_MANIFEST_RETENTION_DAYS, default: keep all). Where releases are recorded
// (the recorder Lease's holder), once at start and then daily: the manifests whose render was last used (a
// release made of it recorded, or found present) longer ago than the setting expire — except each app's newest
// render (what runs now is never forgotten, however old). The expiry is an action: its intent names the hashes
// (fail closed: not recorded, nothing expires), its outcome (`action.completed`, data.expired) the ones that
// went (a render recorded meanwhile keeps its manifest). The hashes stay in the chain; the rows stay as
// tombstones, and an export's bundle names them so the offline check tells an expired manifest from a lost one.
import type { App } from '../../domain/app.ts';
import type { EvidenceRecorder, EvidenceStore } from '../evidence/index.ts';
import type { ManifestStore } from '../store/manifest-store.ts';

const DAY = 86_400_000;
/** hashes per intent record (a record stays small) */
const PER_RECORD = 200;

export interface RetentionOptions {
  days: number;
  manifests: Pick<ManifestStore, 'expirable' | 'expire'>;
  store: Pick<EvidenceStore, 'list'>;
  recorder: Pick<EvidenceRecorder, 'act'>;
  apps: () => App[];
  now?: () => number;
}

/** One pass: the hashes expired (their intents recorded first). */
export async function applyManifestRetention(o: RetentionOptions): Promise<{ expired: string[]; kept: number }> {
  const now = o.now?.() ?? Date.now();
  const cutoff = new Date(now - o.days * DAY).toISOString();
  const candidates = await o.manifests.expirable(cutoff, 10_000);
  if (!candidates.length) return { expired: [], kept: 0 };
  // each app's newest render stays: it is what runs (or last ran) there
  const newest = new Set<string>();
  for (const a of o.apps()) {
    const [r] = await o.store.list({ app: a.id, type: 'release.render', limit: 1 });
    if (typeof r?.data.renderHash === 'string') newest.add(r.data.renderHash);
  }
  const go = candidates.filter((h) => !newest.has(h));
  const expired: string[] = [];
  for (let i = 0; i < go.length; i += PER_RECORD) {
    const chunk = go.slice(i, i + PER_RECORD);
    const done = await o.recorder.act(
      {
        time: new Date(now).toISOString(),
        type: 'release.manifests-expired',
        actor: 'console',
        data: { renderHashes: chunk, retentionDays: o.days, lastUsedBefore: cutoff },
      },
      async () => o.manifests.expire(chunk, cutoff, new Date(now).toISOString()),
      (r) => (r.ok ? { expired: r.value } : {}),
    );
    expired.push(...done);
  }
  return { expired, kept: candidates.length - go.length };
}

/** The daily pass, on the replica that records releases. */
export class ManifestRetention {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly o: RetentionOptions & {
      log: { info(o: object, m: string): void; warn(o: object, m: string): void };
    },
  ) {}

  start(): void {
    if (this.timer || !(this.o.days > 0)) return;
    const pass = () => {
      this.running = applyManifestRetention(this.o).then(
        (r) => {
          if (r.expired.length)
            this.o.log.info(
              { expired: r.expired.length, keptAsNewest: r.kept, days: this.o.days },
              'manifests expired',
            );
        },
        (e: unknown) =>
          this.o.log.warn({ err: e instanceof Error ? e.message : String(e) }, 'manifest retention: a pass failed'),
      );
    };
    // a minute after start (the catalog lists the apps by then), then daily
    this.timer = setTimeout(() => {
      pass();
      this.timer = setInterval(pass, DAY);
      this.timer.unref();
    }, 60_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
