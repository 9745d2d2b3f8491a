// The sandbox's admin access to a cluster it starts, before and after the state file names it: an HTTPS GET with
// the cluster's client certificates, kubeconfig files, kubectl with a given kubeconfig, and the console's RBAC
// as shipped in deploy/. Shared by one cluster's start-up (sandbox/cluster.ts) and the sandbox's (sandbox.ts).
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import type { ClusterPki } from './pki.ts';
import { REPO_ROOT, runKubectl } from './state.ts';

export function httpsGet(url: string, pki: ClusterPki, client = 'admin'): Promise<{ status: number; body: string }> {
  return new Promise((res, rej) => {
    const c = pki.clients[client];
    if (!c) throw new Error(`no client ${client}`);
    const req = request(
      url,
      { ca: readFileSync(pki.caCert), cert: readFileSync(c.cert), key: readFileSync(c.key), timeout: 5000 },
      (r) => {
        let body = '';
        r.on('data', (d: Buffer) => (body += d.toString()));
        r.on('end', () => res({ status: r.statusCode ?? 0, body }));
      },
    );
    req.on('error', rej);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

export function kubeconfigYaml(
  entries: Array<{ name: string; server: string; pki: ClusterPki; client: string }>,
  current: string,
): string {
  const b64 = (f: string) => readFileSync(f).toString('base64');
  const clusters = entries
    .map(
      (e) =>
        `- name: ${e.name}\n  cluster:\n    server: ${e.server}\n    certificate-authority-data: ${b64(e.pki.caCert)}\n`,
    )
    .join('');
  const users = entries
    .map((e) => {
      const c = e.pki.clients[e.client];
      if (!c) throw new Error(`missing client ${e.client}`);
      return `- name: ${e.name}-${e.client}\n  user:\n    client-certificate-data: ${b64(c.cert)}\n    client-key-data: ${b64(c.key)}\n`;
    })
    .join('');
  const contexts = entries
    .map((e) => `- name: ${e.name}\n  context:\n    cluster: ${e.name}\n    user: ${e.name}-${e.client}\n`)
    .join('');
  return `apiVersion: v1\nkind: Config\nclusters:\n${clusters}users:\n${users}contexts:\n${contexts}current-context: ${current}\npreferences: {}\n`;
}

/** The console's RBAC exactly as shipped in deploy/ (re-applied on reuse, so an edited file takes effect). */
export function applyConsoleRbac(kubeconfig: string): void {
  for (const f of ['rbac.yaml', 'rbac-impersonation.yaml'])
    kubectlRaw(kubeconfig, [
      ...['apply', '--server-side', '--field-manager=sandbox', '--force-conflicts'],
      ...['-f', join(REPO_ROOT, 'deploy', f)],
    ]);
}

/** kubectl with a given kubeconfig (in process where kubectl-fast.ts maps the command). */
export function kubectlRaw(kubeconfig: string, args: string[], input?: string): string {
  return runKubectl(kubeconfig, args, input, `kubectl ${args.join(' ')}`);
}
