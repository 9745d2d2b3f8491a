// Progress of the sandbox's first build (sandbox/build.sh compiles a real control plane from Go modules, once,
// then caches it): which components are cached, building or built, how long it has taken, and an estimate of
// what is left until the sandbox is up — from this machine's previous builds when there were any (kept beside
// the binary cache), else from typical cold build times on 2 cores. Read by `npm start`'s start-up page and
// printed in the terminal.
//
// Before build.sh has said anything about a component, the estimate looks in the binary cache: a component with
// a cached build (<cache>/bin/<component>-<key>/) costs seconds, not its cold build time. The key is build.sh's
// (a hash of the wrapper module, the Go version and the flags); an entry under an older key still counts as
// cached here, and build.sh's "building <component>" line corrects the estimate when it turns out to be stale.
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
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
  sops: 150, // 133 s of CPU, 128 s wall with a cold module cache (sops and age-keygen)
  helm: 100,
  'jq-del': 10,
  gitea: 320,
  registry: 130,
  imagepush: 20,
  'metrics-server': 450, // 448 s measured, while four sandboxes built it at once (load 24): an upper bound
  argocd: 700, // ~11 min of CPU; 285 s wall with a warm module cache, alone on 2 cores
  rollouts: 480, // ~8 min of CPU cold (niced beside a test run); beside Argo CD's build
  flagger: 240,
  helmctl: 300, // an estimate (helm v4 SDK, controller-runtime: close to flux-kustomize's); its first build here took 4615 s wall, niced beside six other cold builds
  eso: 420, // 389 s of CPU, 403 s wall cold (niced beside an e2e run); every provider's SDK // 110 s of CPU with a warm module cache (78 s wall); its dependencies download on a fresh machine
  imagectl: 500, // an estimate: Flux's image-reflector-controller and image-automation-controller, one after the other
};

/** A cached component: build.sh hashes its wrapper module and links the binaries (measured: 7.8 s for all 18, warm). */
export const CACHED_SECONDS = 1;
/** build.sh's last step, the CRDs and kwok stages copied from the module cache. */
export const ASSETS_SECONDS = 5;
/** From the end of the build to a ready sandbox (clusters, Flux, forge, registry; ~45 s measured on 2 cores). */
export const TYPICAL_START_SECONDS = 50;
/** The key build-times.json keeps the start-up's seconds under (no component is called that). */
const START_KEY = '(start)';

/** The components with a build in the binary cache (<cacheBin>/<name>-<16 hex key>/ with files in it). */
export function cachedComponents(cacheBin: string, components: readonly string[]): Set<string> {
  const out = new Set<string>();
  let entries: string[];
  try {
    entries = readdirSync(cacheBin);
  } catch {
    return out;
  }
  for (const name of components) {
    const keyed = (e: string) => e.startsWith(`${name}-`) && /^[0-9a-f]{16}$/.test(e.slice(name.length + 1));
    for (const e of entries.filter(keyed)) {
      try {
        if (readdirSync(join(cacheBin, e)).length > 0) out.add(name);
      } catch {
        /* not a directory */
      }
    }
  }
  return out;
}

export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env.GITOPS_SANDBOX_CACHE ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'gitops-console', 'sandbox');
}

/**
 * The components build.sh builds, in its order: every `build <name> "…"` call, and every call of a component's
 * own build function (`build_<name>`, e.g. Argo CD's, built from its module rather than a wrapper), called with no
 * arguments (`build_nested helmctl …`, a helper the component functions share, is none).
 */
export function componentsOf(buildScript: string): string[] {
  const names: string[] = [];
  for (const m of buildScript.matchAll(
    /(?:^|[\s;&|])build(?: ([a-z][a-z0-9-]*) "|_([a-z][a-z0-9]*)(?=[ \t]*(?:[;&|\n]|$)))/gm,
  )) {
    const name = m[1] ?? m[2];
    if (name && !names.includes(name)) names.push(name);
  }
  return names;
}

export class BuildProgress {
  private readonly state = new Map<string, { state: ComponentState; seconds?: number; startedAt?: number }>();
  private readonly started: number;
  private phase: BuildSnapshot['phase'] = 'building';
  private error: string | undefined;
  private readonly previous: Record<string, number>;
  /** components found in the binary cache before build.sh said anything about them */
  private readonly likelyCached: Set<string>;
  private buildFinishedAt: number | undefined;

  /**
   * @param timesFile this machine's build times (and the binary cache beside it: `<dir>/bin`, looked in for
   *   cached components unless `cacheBin` says otherwise); undefined: neither
   */
  constructor(
    readonly components: string[],
    private readonly timesFile: string | undefined = join(cacheRoot(), 'build-times.json'),
    private readonly now: () => number = Date.now,
    cacheBin: string | undefined = timesFile ? join(dirname(timesFile), 'bin') : undefined,
  ) {
    this.started = now();
    for (const c of components) this.state.set(c, { state: 'pending' });
    this.previous = this.readTimes();
    this.likelyCached = cacheBin ? cachedComponents(cacheBin, components) : new Set();
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
    if (this.phase === 'building') this.buildFinishedAt = this.now();
    this.phase = 'starting';
  }
  ready(): void {
    // this machine's start-up time, for the next estimate (only when this run built or checked the binaries)
    if (this.phase === 'starting' && this.buildFinishedAt !== undefined)
      this.remember(START_KEY, Math.round((this.now() - this.buildFinishedAt) / 1000));
    this.phase = 'ready';
  }
  failed(message: string): void {
    this.phase = 'failed';
    this.error = message;
  }

  private expected(name: string): number {
    return this.previous[name] ?? TYPICAL_SECONDS[name] ?? 60;
  }

  private startSeconds(): number {
    return this.previous[START_KEY] ?? TYPICAL_START_SECONDS;
  }

  snapshot(): BuildSnapshot {
    const now = this.now();
    const components = this.components.map((name) => {
      const s = this.state.get(name) ?? { state: 'pending' as const };
      return { name, state: s.state, ...(s.seconds !== undefined ? { seconds: s.seconds } : {}) };
    });
    const done = components.filter((c) => c.state === 'built' || c.state === 'cached').length;
    const current = components.find((c) => c.state === 'building')?.name ?? null;
    // the build's rest, then the start-up: the estimate is of the time until the sandbox is up
    let left = 0;
    if (this.phase === 'building') {
      for (const c of components) {
        if (c.state === 'pending') left += this.likelyCached.has(c.name) ? CACHED_SECONDS : this.expected(c.name);
        if (c.state === 'building') {
          const since = (now - (this.state.get(c.name)?.startedAt ?? now)) / 1000;
          left += Math.max(10, this.expected(c.name) - since);
        }
      }
      left += ASSETS_SECONDS + this.startSeconds();
    } else if (this.phase === 'starting') {
      const since = (now - (this.buildFinishedAt ?? now)) / 1000;
      left = Math.max(5, this.startSeconds() - since);
    }
    return {
      phase: this.phase,
      components,
      done,
      total: components.length,
      elapsedS: Math.round((now - this.started) / 1000),
      estimateLeftS: Math.round(left),
      current,
      ...(this.error ? { error: this.error } : {}),
    };
  }

  /** One terminal line: "[3/13] building kube · 4 min 10 s elapsed · about 12 min left". */
  summary(): string {
    const s = this.snapshot();
    const mins = (x: number) => (x >= 60 ? `${Math.floor(x / 60)} min ${x % 60} s` : `${x} s`);
    // an estimate is no more precise than its minutes
    const approx = (x: number) => (x >= 60 ? `${Math.round(x / 60)} min` : `${x} s`);
    const what =
      s.phase === 'building'
        ? s.current
          ? `building ${s.current}`
          : 'checking the cache'
        : s.phase === 'starting'
          ? 'starting the clusters'
          : s.phase;
    return `[sandbox ${s.done}/${s.total}] ${what} · ${mins(s.elapsedS)} elapsed${
      s.estimateLeftS ? ` · about ${approx(s.estimateLeftS)} left` : ''
    }`;
  }
}
