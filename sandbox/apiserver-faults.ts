// Fault injection on a sandbox cluster's kube-apiserver (used by tests and demos): stopped, and started again
// with the same command line and port.
import { join } from 'node:path';
import { ensurePki } from './pki.ts';
import { alive, startProcess, stopProcess, waitFor } from './procs.ts';
import { httpsGet } from './cluster-access.ts';
import { bin, mustState, writeState } from './state.ts';

export async function stopApiserver(cluster: string): Promise<void> {
  const st = mustState();
  const c = st.clusters.find((x) => x.name === cluster);
  const p = c?.procs.find((x) => x.name === 'kube-apiserver');
  if (!c || !p) throw new Error(`no apiserver for cluster ${cluster}`);
  await stopProcess(p.pid, 3_000);
}

export async function startApiserver(cluster: string): Promise<void> {
  const st = mustState();
  const c = st.clusters.find((x) => x.name === cluster);
  const idx = c?.procs.findIndex((x) => x.name === 'kube-apiserver') ?? -1;
  const old = c?.procs[idx];
  if (!c || !old) throw new Error(`no apiserver for cluster ${cluster}`);
  const pki = ensurePki(join(c.dir, 'pki'));
  if (alive(old.pid)) {
    const ready = await httpsGet(`${c.apiserver}/readyz`, pki).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready) return;
    // still shutting down (or wedged): finish it before starting the next one
    await stopProcess(old.pid, 2_000);
  }
  const next = startProcess('kube-apiserver', old.cmd[0] ?? bin('kube-apiserver'), old.cmd.slice(1), old.log);
  c.procs[idx] = next;
  writeState(st);
  await waitFor(
    `${cluster} kube-apiserver /readyz`,
    async () => (await httpsGet(`${c.apiserver}/readyz`, pki)).status === 200,
    { proc: next, timeoutMs: 90_000 },
  );
}
