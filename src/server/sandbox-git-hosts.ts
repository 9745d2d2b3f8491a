// What the Git URL policy lets through when the console or the CLI runs against the local sandbox.

/**
 * The sandbox's loopback Git endpoints, as host:port: its forge (clone URL and API) and the Flux artifact servers
 * (CONSOLE_GIT_ALLOW_HOSTS entries for a console or CLI run against the sandbox).
 */
export function sandboxGitHosts(st: {
  git?: { url?: string };
  forge?: { url?: string };
  clusters: Array<{ ports: Record<string, number> }>;
}): string[] {
  const hosts = new Set<string>();
  for (const u of [st.git?.url, st.forge?.url]) if (u) hosts.add(new URL(u).host);
  for (const c of st.clusters) if (c.ports.srcStorage) hosts.add(`127.0.0.1:${c.ports.srcStorage}`);
  return [...hosts];
}
