// Sandbox mode (`npm start` with no kubeconfig): the console runs exactly as it ships — as its own
// least-privilege identity (deploy/rbac.yaml, the sandbox's kubeconfig-console), never as the sandbox's
// admin — and with what the sandbox provides configured, so a release's chain is complete from the first
// start: the verification checks of its business endpoints, its registry as the mirror of
// registry.example.com (tags resolve to digests), the forge's console token (write-back pull requests).
// Settings given explicitly (env / flags) win. Outside sandbox mode none of this applies.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** the parts of the sandbox's state these defaults read (sandbox/sandbox.ts + sandbox/extras.ts) */
export interface SandboxFacts {
  clusters: Array<{ name: string; namespaces: string[] }>;
  registry?: { url: string };
  business?: { endpoints: Record<string, { url: string }> };
  forge?: { consoleTokensFile?: string };
}

/** `<cluster>/<namespace>` → the HTTP check of that environment's business endpoint */
export function sandboxVerifications(
  st: SandboxFacts,
): Record<string, { url: string; expectStatus: number; timeoutMs: number }> {
  return Object.fromEntries(
    st.clusters.flatMap((c) =>
      c.namespaces.flatMap((env) => {
        const e = st.business?.endpoints[env];
        return e ? [[`${c.name}/${env}`, { url: e.url, expectStatus: 200, timeoutMs: 3000 }] as const] : [];
      }),
    ),
  );
}

export interface SandboxDefaults {
  verificationsFile?: string;
  registryMirrors?: string;
  forgeTokensFile?: string;
  /** CONSOLE_FLAGGER_GATE_HOSTS entries: the sandbox's Flagger load tester stand-ins */
  flaggerGateHosts: string[];
}

/**
 * The sandbox's Flagger load tester gates, as host:port: its business endpoints serve the load tester's gate API
 * (sandbox/flagger-gate.ts), and the seed's Canaries name them as their confirm-promotion and rollback webhooks.
 */
export function sandboxGateHosts(st: SandboxFacts): string[] {
  return [...new Set(Object.values(st.business?.endpoints ?? {}).map((e) => new URL(e.url).host))];
}

/** The settings sandbox mode fills in (the verifications file is written under `dir`). */
export function sandboxDefaults(st: SandboxFacts, dir: string): SandboxDefaults {
  const out: SandboxDefaults = { flaggerGateHosts: sandboxGateHosts(st) };
  const checks = sandboxVerifications(st);
  if (Object.keys(checks).length) {
    mkdirSync(dir, { recursive: true });
    out.verificationsFile = join(dir, 'sandbox-verifications.json');
    writeFileSync(out.verificationsFile, `${JSON.stringify(checks, null, 2)}\n`);
  }
  if (st.registry?.url) out.registryMirrors = `registry.example.com=${st.registry.url}`;
  const tokens = st.forge?.consoleTokensFile;
  if (tokens && existsSync(tokens)) out.forgeTokensFile = tokens;
  return out;
}
