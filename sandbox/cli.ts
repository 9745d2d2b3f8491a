// npm run sandbox -- up|down|status|reset|build [--clusters nonprod=dev,staging;prod=prod] [--no-wait]
import {
  DEFAULT_CLUSTERS,
  KUBECONFIG_PATH,
  buildSandbox,
  readState,
  resetSandbox,
  sandboxStatus,
  startSandbox,
  stopSandbox,
  type SandboxState,
} from './sandbox.ts';
import type { ExtrasState } from './extras.ts';
import { stopSupervisor } from './procs.ts';

/** Where the forge, registry and business endpoints listen (no credentials: those stay in their files). */
function extrasLines(st: SandboxState & ExtrasState): string[] {
  const out: string[] = [];
  if (st.forge)
    out.push(
      `forge      ${st.forge.url}  (Gitea ${st.forge.version}; repo ${st.forge.repo.cloneUrl}; users and tokens in ${st.forge.credentialsFile})`,
    );
  if (st.registry)
    out.push(`registry   ${st.registry.url}  (mirror of ${st.registry.mirrorOf}; ${st.registry.images.length} images)`);
  if (st.business)
    out.push(
      `business   ${Object.entries(st.business.endpoints)
        .map(([env, e]) => `${env} ${e.url}`)
        .join(', ')}  (stand-ins, simulated)`,
    );
  return out;
}

function parseClusters(spec: string | undefined): Record<string, string[]> {
  if (!spec) return DEFAULT_CLUSTERS;
  const out: Record<string, string[]> = {};
  for (const part of spec.split(';').filter(Boolean)) {
    const [name, nss] = part.split('=');
    if (!name || !/^[a-z0-9-]+$/.test(name)) throw new Error(`bad --clusters entry "${part}" (want name=ns1,ns2)`);
    out[name] = (nss ?? name).split(',').filter(Boolean);
  }
  return out;
}

async function main(): Promise<number> {
  const [cmd = 'status', ...rest] = process.argv.slice(2);
  const flag = (n: string) => {
    const i = rest.indexOf(n);
    return i >= 0 ? rest[i + 1] : undefined;
  };
  switch (cmd) {
    case 'build':
      buildSandbox();
      return 0;
    case 'up': {
      const t0 = Date.now();
      const st = await startSandbox({
        clusters: parseClusters(flag('--clusters')),
        reuse: !rest.includes('--restart'),
        waitReady: !rest.includes('--no-wait'),
      });
      console.log(`sandbox ready in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
      for (const c of st.clusters)
        console.log(`  ${c.name.padEnd(10)} ${c.apiserver}  namespaces: ${c.namespaces.join(', ')}`);
      console.log(`  git        ${st.git.url}  (the forge's repo: what Flux and Argo CD fetch)`);
      for (const line of extrasLines(st as SandboxState & ExtrasState)) console.log(`  ${line}`);
      console.log(`  kubeconfig ${KUBECONFIG_PATH}  (contexts: ${st.clusters.map((c) => c.name).join(', ')})`);
      return 0;
    }
    case 'down':
      await stopSandbox();
      // the sandbox's supervisor (the parent that reaps its processes) exits too: nothing is left behind
      await stopSupervisor();
      console.log('sandbox stopped');
      return 0;
    case 'reset':
      await resetSandbox();
      await stopSupervisor();
      console.log('sandbox stopped and its data removed');
      return 0;
    case 'status': {
      const st = readState();
      if (!st) {
        console.log('sandbox: not running');
        return 1;
      }
      const s = await sandboxStatus(st);
      let bad = 0;
      for (const c of s) {
        console.log(`${c.ok ? 'ok  ' : 'DEAD'} ${c.cluster.padEnd(9)} ${c.component.padEnd(24)} pid ${c.pid}`);
        if (!c.ok) {
          bad++;
          console.log(
            c.logTail
              ?.split('\n')
              .map((l) => `       | ${l}`)
              .join('\n'),
          );
        }
      }
      for (const line of extrasLines(st as SandboxState & ExtrasState)) console.log(`     ${line}`);
      return bad ? 1 : 0;
    }
    default:
      console.error(`unknown command ${cmd}; use up|down|status|reset|build`);
      return 2;
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  },
);
