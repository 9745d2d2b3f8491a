// Progress of the sandbox's first build (sandbox/build.sh compiles a real control plane from Go modules, once,
// then caches it): which components are cached, building or built, how long it has taken, and an estimate of
// what is left — from this machine's previous builds when there were any (kept beside the binary cache), else
// from typical cold build times on 2 cores. Read by `npm start`'s start-up page and printed in the terminal.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

export type ComponentState = 'pending' | 'building' | 'built' | 'cached';

export interface BuildSnapshot {
  phase: 'building' | 'starting' | 'ready' | 'failed';
  components: Array<{ name: string; state: ComponentState; seconds?: number }>;
  done: number;
  total: number;
  elapsedS: number;
  /** seconds still expected (null when nothing is known yet) */
  estimateLeftS: number | null;
  /** the component compiling now */
  current: string | null;
  error?: string;
}

/** Typical cold build times here (2 cores, seconds): the estimate before this machine built anything. */
export const TYPICAL_SECONDS: Record<string, number> = {
  etcd: 150,
  kube: 660,
  kwok: 100,
  kustomize: 70,
  'flux-source': 170,
  'flux-kustomize': 170,
  'flux-render': 60,
  helm: 100,
  'jq-del': 10,
  gitea: 320,
  registry: 130,
  imagepush: 20,
};

export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env.GITOPS_SANDBOX_CACHE ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'gitops-console', 'sandbox');
}

/** The components build.sh builds, in its order: every `build <name> "…"` call. */
export function componentsOf(buildScript: string): string[] {
  const names: string[] = [];
  for (const m of buildScript.matchAll(/(?:^|[\s;&])build ([a-z][a-z0-9-]*) "/gm))
    if (m[1] && !names.includes(m[1])) names.push(m[1]);
  return names;
}

export class BuildProgress {
  private readonly state = new Map<string, { state: ComponentState; seconds?: number; startedAt?: number }>();
  private readonly started: number;
  private phase: BuildSnapshot['phase'] = 'building';
  private error: string | undefined;
  private readonly previous: Record<string, number>;

  constructor(
    readonly components: string[],
    private readonly timesFile: string | undefined = join(cacheRoot(), 'build-times.json'),
    private readonly now: () => number = Date.now,
  ) {
    this.started = now();
    for (const c of components) this.state.set(c, { state: 'pending' });
    this.previous = this.readTimes();
  }

  private readTimes(): Record<string, number> {
    if (!this.timesFile) return {};
    try {
      return JSON.parse(readFileSync(this.timesFile, 'utf8')) as Record<string, number>;
    } catch {
      return {};
    }
  }

  /** Feeds one line of build.sh's output; returns true when it changed the progress. */
  line(text: string): boolean {
    let m = /\] building ([a-z0-9-]+) \(/.exec(text);
    if (m?.[1]) return this.set(m[1], { state: 'building', startedAt: this.now() });
    m = /\] built ([a-z0-9-]+) in (\d+)s/.exec(text);
    if (m?.[1]) {
      const seconds = Number(m[2]);
      this.remember(m[1], seconds);
      return this.set(m[1], { state: 'built', seconds });
    }
    m = /\] ([a-z0-9-]+) cached \(/.exec(text);
    if (m?.[1]) return this.set(m[1], { state: 'cached' });
    return false;
  }

  private set(name: string, v: { state: ComponentState; seconds?: number; startedAt?: number }): boolean {
    if (!this.state.has(name)) this.components.push(name);
    this.state.set(name, v);
    return true;
  }

  private remember(name: string, seconds: number): void {
    if (!this.timesFile) return;
    try {
      const times = { ...this.readTimes(), [name]: seconds };
      mkdirSync(dirname(this.timesFile), { recursive: true });
      writeFileSync(this.timesFile, JSON.stringify(times, null, 1));
    } catch {
      /* an estimate is a nicety */
    }
  }

  finishBuild(): void {
    this.phase = 'starting';
  }
  ready(): void {
    this.phase = 'ready';
  }
  failed(message: string): void {
    this.phase = 'failed';
    this.error = message;
  }

  private expected(name: string): number {
    return this.previous[name] ?? TYPICAL_SECONDS[name] ?? 60;
  }

  snapshot(): BuildSnapshot {
    const now = this.now();
    const components = this.components.map((name) => {
      const s = this.state.get(name) ?? { state: 'pending' as const };
      return { name, state: s.state, ...(s.seconds !== undefined ? { seconds: s.seconds } : {}) };
    });
    const done = components.filter((c) => c.state === 'built' || c.state === 'cached').length;
    const current = components.find((c) => c.state === 'building')?.name ?? null;
    let left = 0;
    for (const c of components) {
      if (c.state === 'pending') left += this.expected(c.name);
      if (c.state === 'building') {
        const since = (now - (this.state.get(c.name)?.startedAt ?? now)) / 1000;
        left += Math.max(10, this.expected(c.name) - since);
      }
    }
    return {
      phase: this.phase,
      components,
      done,
      total: components.length,
      elapsedS: Math.round((now - this.started) / 1000),
      estimateLeftS: this.phase === 'building' ? Math.round(left) : this.phase === 'starting' ? 120 : 0,
      current,
      ...(this.error ? { error: this.error } : {}),
    };
  }

  /** One terminal line: "[3/13] building kube · 4 min 10 s elapsed · about 12 min left". */
  summary(): string {
    const s = this.snapshot();
    const mins = (x: number) => (x >= 60 ? `${Math.floor(x / 60)} min ${x % 60} s` : `${x} s`);
    const what =
      s.phase === 'building'
        ? s.current
          ? `building ${s.current}`
          : 'checking the cache'
        : s.phase === 'starting'
          ? 'starting the clusters'
          : s.phase;
    return `[sandbox ${s.done}/${s.total}] ${what} · ${mins(s.elapsedS)} elapsed${
      s.estimateLeftS ? ` · about ${mins(s.estimateLeftS)} left` : ''
    }`;
  }
}
