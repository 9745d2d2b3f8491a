// SIMULATION — a test file's own business endpoint: the sandbox's stand-in (sandbox/business-endpoint.ts
// businessListener: the same answers, the same Flagger load tester gates of sandbox/flagger-gate.ts) for one
// environment, served by the test process on 127.0.0.1 (a free port), reading pods in the test's own namespace, its
// mode held in memory. The controllers run as local processes on loopback, so a Canary's webhooks or an
// AnalysisTemplate's web metric reach it; the sandbox's shared endpoints (which every staging analysis reads) are
// never touched.
//
//   const biz = await businessStandin({ env: 'staging', cluster: 'nonprod' });
//   biz.url;                       // http://127.0.0.1:<port>, for the estate's objects
//   biz.readPodsIn(estate.namespace);
//   biz.set({ mode: 'fail' });     // what setBusinessEndpoint does to the shared one
//   await biz.close();
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { businessListener, type BusinessMode } from '../../sandbox/business-endpoint.ts';
import { kubeTarget } from '../../sandbox/kube-http.ts';
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
  // the gates' state (which Canary revision a person opened) lives here, the test's own
  const controlDir = mkdtempSync(join(tmpdir(), 'business-standin-'));
  let mode: BusinessMode = { mode: 'ok' };
  let namespace = opts.namespace ?? 'default';
  const ep = {
    env: opts.env,
    target: kubeTarget(c),
    // read on every request (the listener asks for the pods when it answers)
    get namespace() {
      return namespace;
    },
  };
  const srv = createServer(businessListener(ep, { controlDir, mode: () => mode, say: () => undefined }));
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = srv.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    readPodsIn(ns) {
      namespace = ns;
    },
    set(m) {
      mode = m;
    },
    async close() {
      srv.closeAllConnections();
      await new Promise<void>((resolve) => srv.close(() => resolve()));
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
