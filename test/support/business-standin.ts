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
import { mustState } from '../../sandbox/state.ts';

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
