// The sandbox's shared basics: where it lives, its state file (and an empty one), its binaries, kubectl as admin
// and the start-up's log line.
// Both the sandbox's start-up (sandbox.ts) and the scenario helpers (scenario.ts) import this; they do
// not import each other's internals.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fastKubectl } from './kubectl-fast.ts';
import type { ProcRecord } from './procs.ts';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const SANDBOX_DIR = process.env.GITOPS_SANDBOX_DIR ?? join(REPO_ROOT, '.sandbox');
export const RUN_DIR = join(SANDBOX_DIR, 'run');
export const BIN_DIR = join(SANDBOX_DIR, 'bin');
export const ASSETS_DIR = join(SANDBOX_DIR, 'assets');
export const KUBECONFIG_PATH = join(SANDBOX_DIR, 'kubeconfig');
/** The console's own least-privilege identity (user gitops-console, deploy/rbac.yaml), one context per cluster. */
export const CONSOLE_KUBECONFIG_PATH = join(SANDBOX_DIR, 'kubeconfig-console');
export const STATE_PATH = join(RUN_DIR, 'state.json');

export interface ClusterState {
  name: string;
  namespaces: string[];
  dir: string;
  ports: Record<string, number>;
  procs: ProcRecord[];
  apiserver: string;
  kubeconfig: string;
}

export interface SandboxState {
  startedAt: string;
  clusters: ClusterState[];
  git: { port: number; root: string; proc: ProcRecord; url: string };
  kubeconfig: string;
}

export function bin(name: string): string {
  return join(BIN_DIR, name);
}

export function readState(): SandboxState | undefined {
  if (!existsSync(STATE_PATH)) return undefined;
  return JSON.parse(readFileSync(STATE_PATH, 'utf8')) as SandboxState;
}

export function writeState(s: SandboxState): void {
  mkdirSync(RUN_DIR, { recursive: true });
  writeFileSync(STATE_PATH, JSON.stringify(s, null, 2));
}

/**
 * Runs kubectl against one sandbox cluster (its admin identity). The commands tests run most are requests made in
 * process (kubectl-fast.ts: the same output and errors, no process start); the others run kubectl.
 */
export function kubectl(cluster: string, args: string[], input?: string): string {
  const c = readState()?.clusters.find((x) => x.name === cluster);
  return runKubectl(c?.kubeconfig ?? KUBECONFIG_PATH, args, input, `kubectl ${args.join(' ')} (${cluster})`);
}

/**
 * kubectl with a kubeconfig, in process where kubectl-fast.ts maps the command, else the binary; the one runner
 * behind kubectl(), kubectlRaw and kubectlAs. A failure throws `<what>: <kubectl's error>`.
 */
export function runKubectl(kubeconfig: string, args: string[], input: string | undefined, what: string): string {
  try {
    const fast = existsSync(kubeconfig) ? fastKubectl(kubeconfig, args, input) : undefined;
    if (fast !== undefined) return fast;
    return execFileSync(bin('kubectl'), ['--kubeconfig', kubeconfig, ...args], {
      input,
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'pipe'],
      maxBuffer: 256 * 1024 * 1024,
      timeout: 60_000,
    });
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(`${what}: ${err.stderr?.trim() || err.message}`);
  }
}

export function mustState(): SandboxState {
  const st = readState();
  if (!st) throw new Error('the sandbox is not running (npm run sandbox -- up)');
  return st;
}

/** A start-up progress line on stderr (none with SANDBOX_QUIET=1). */
export const log = (msg: string) => {
  if (process.env.SANDBOX_QUIET !== '1')
    process.stderr.write(`[sandbox ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
};

/** The state of a sandbox with no cluster and no forge yet (written first at a start, then filled in). */
export function emptyState(): SandboxState {
  return {
    startedAt: new Date().toISOString(),
    clusters: [],
    git: { port: 0, root: '', proc: { name: 'gitea', pid: 0, cmd: [], log: '', startedAt: '' }, url: '' },
    kubeconfig: KUBECONFIG_PATH,
  };
}
