// SIMULATION — a test file's own business endpoint: the sandbox's stand-in (sandbox/business-endpoint.ts
// businessListener: the same answers, the same Flagger load tester gates of sandbox/flagger-gate.ts) for one
// environment, served on 127.0.0.1 (a free port) by a process of its own (./business-standin-process.ts: the test
// process's synchronous calls never hold up its answers), reading pods in the test's own namespace, its mode in a
// control file the test rewrites. The controllers run as local processes on loopback, so a Canary's webhooks or an
// AnalysisTemplate's web metric reach it; the sandbox's shared endpoints (which every staging analysis reads) are
// never touched.
//
//   const biz = await businessStandin({ env: 'staging', cluster: 'nonprod' });
//   biz.url;                       // http://127.0.0.1:<port>, for the estate's objects
//   biz.readPodsIn(estate.namespace);
//   biz.set({ mode: 'fail' });     // what setBusinessEndpoint does to the shared one
//   await biz.close();
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeBusinessMode, type BusinessMode } from '../../sandbox/business-endpoint.ts';
import { kubeTarget } from '../../sandbox/kube-http.ts';
import { REPO_ROOT } from '../../sandbox/sandbox.ts';
import { kubectl, mustState } from '../../sandbox/state.ts';
import { ownEstate, type Estate, type EstateOptions } from './own-estate.ts';

export interface BusinessStandin {
  /** http://127.0.0.1:<port> */
  url: string;
  /** the namespace whose pods it reports as running (known once the estate that names its URL exists) */
  readPodsIn(namespace: string): void;
  /** its mode from now on (ok, fail, slow), as sandbox/scenario-forge.ts setBusinessEndpoint sets the shared one */
  set(mode: BusinessMode): void;
  close(): Promise<void>;
}

export async function businessStandin(opts: {
  env: string;
  cluster: string;
  namespace?: string;
}): Promise<BusinessStandin> {
  const c = mustState().clusters.find((x) => x.name === opts.cluster);
  if (!c) throw new Error(`no cluster ${opts.cluster} in the sandbox`);
  // the process's control files and the gates' state (which Canary revision a person opened): the test's own
  const controlDir = mkdtempSync(join(tmpdir(), 'business-standin-'));
  chmodSync(controlDir, 0o700);
  // written whole, then renamed, as writeBusinessMode writes the mode: the process never reads half a file
  const put = (name: string, text: string) => {
    const tmp = join(controlDir, `.${name}.tmp`);
    writeFileSync(tmp, text, { mode: 0o600 });
    renameSync(tmp, join(controlDir, name));
  };
  put('target.json', JSON.stringify({ env: opts.env, target: kubeTarget(c) }));
  put('namespace', opts.namespace ?? 'default');
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(REPO_ROOT, 'test/support/business-standin-process.ts'), controlDir],
    {
      cwd: REPO_ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const fail = (why: string) => reject(new Error(`business stand-in: ${why}${err ? `: ${err.trim()}` : ''}`));
    const timer = setTimeout(() => fail('no port within 60 s'), 60_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /\{"port":(\d+)\}/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(`exited with ${code}`);
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    readPodsIn(ns) {
      put('namespace', ns);
    },
    set(m) {
      writeBusinessMode(controlDir, opts.env, m);
    },
    async close() {
      if (child.exitCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.stdin.end();
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(controlDir, { recursive: true, force: true });
    },
  };
}

/** An estate whose objects name its own business stand-in (a Canary's webhooks, an AnalysisTemplate's URL). */
export interface StandinEstate {
  estate: Estate;
  /** the estate's business endpoint, reading the pods of its namespace */
  business: BusinessStandin;
  /** the estate's namespace */
  namespace: string;
  /** kubectl (as the sandbox admin) in the estate's namespace */
  kubectl(args: string[]): string;
  /** the estate, then its stand-in */
  teardown(): Promise<void>;
}

/**
 * A staging stand-in, then the estate `options(its URL)` describes; the stand-in closed when the estate cannot be
 * made, and reading the pods of the estate's namespace once it is.
 */
export async function standinEstate(options: (businessUrl: string) => EstateOptions): Promise<StandinEstate> {
  const business = await businessStandin({ env: 'staging', cluster: 'nonprod' });
  let estate: Estate;
  try {
    estate = await ownEstate(options(business.url));
  } catch (e) {
    await business.close();
    throw e;
  }
  business.readPodsIn(estate.namespace);
  const { cluster, namespace } = estate;
  return {
    estate,
    business,
    namespace,
    kubectl: (args) => kubectl(cluster, ['-n', namespace, ...args]),
    async teardown() {
      try {
        await estate.teardown();
      } finally {
        await business.close();
      }
    },
  };
}
