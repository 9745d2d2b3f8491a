// Which Flagger gates the console may open (issue 40). A gate's URL comes from Git (the Canary's webhooks), so it
// may name any address; the console posts only to a load tester host an operator allow-listed:
//  - CONSOLE_FLAGGER_GATE_HOSTS: `host` or `host:port` entries, comma-separated (no address ranges); unset, no gate
//    is opened. Sandbox mode adds the sandbox's load tester stand-ins (its business endpoints' host:port).
//  - the name is resolved once, every address judged (a cloud metadata address is refused whatever the list says),
//    and the POST connects to those addresses (http/pinned-post.ts): no second lookup, no redirect followed.
//  - only the answer's status is used, never its body.
import {
  checkUrl,
  hostAllowed,
  makeUrlPolicy,
  parseAllowHosts,
  systemResolver,
  UnfetchableUrlError,
  type CheckedUrl,
  type Resolver,
  type UrlPolicy,
} from '../git/url-policy.ts';

export const GATE_HOSTS_SETTING = 'CONSOLE_FLAGGER_GATE_HOSTS';

/** The gate policy of an allow-list (validated at start-up by config.ts; an entry it cannot read throws). */
export function gatePolicy(hosts: string[], resolve: Resolver = systemResolver): UrlPolicy {
  return { ...makeUrlPolicy({ resolve }), ...parseAllowHosts(hosts, GATE_HOSTS_SETTING, { hostsOnly: true }) };
}

const refuse = (m: string) => new UnfetchableUrlError(`refusing ${m}`);

/**
 * A gate URL checked: http(s), no credentials in it, its host (and port) on the allow-list, its name resolved and
 * every address judged. Throws UnfetchableUrlError (reason `unresolved` when the name has no address now).
 */
export async function checkGateUrl(raw: string, policy: UrlPolicy): Promise<CheckedUrl> {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw refuse('a gate that is not a URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw refuse(`a ${u.protocol} gate (a gate is http or https)`);
  if (u.username || u.password) throw refuse('a gate URL with credentials in it (the console sends none)');
  const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
  if (!hostAllowed(policy, u.hostname, port))
    throw refuse(
      `${u.hostname}:${port}: not a Flagger load tester host the console may call (add it to ${GATE_HOSTS_SETTING})`,
    );
  return checkUrl(u.href, 'http', policy);
}
