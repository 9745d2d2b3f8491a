// One POST to a URL the policy checked (git/url-policy.ts checkUrl), connected to the addresses that were checked:
// the name is not looked up again, so a name that resolves elsewhere a moment later (DNS rebinding) is not
// followed. No redirect is followed and the answer's body is never read: the caller gets its status only, so no
// text from the other end can reach a message, a record or a log.
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { CheckedUrl } from '../git/url-policy.ts';

/** Why a pinned POST got no answer: a timeout, or the socket's error code (never text from the other end). */
export class NoAnswerError extends Error {
  override name = 'NoAnswerError';
}

/** A lookup that answers only the checked name, with the checked addresses. */
export function pinnedLookup(c: Pick<CheckedUrl, 'host' | 'addresses'>): LookupFunction {
  const all = c.addresses.map((address) => ({ address, family: isIP(address) === 6 ? 6 : 4 }));
  return (hostname, options, callback) => {
    if (hostname.toLowerCase() !== c.host.toLowerCase() || !all.length) {
      const e: NodeJS.ErrnoException = new Error(`no checked address for ${hostname}`);
      e.code = 'ENOTFOUND';
      return callback(e, '', 4);
    }
    if (options.all) return callback(null, all);
    const first = all.find((a) => !options.family || a.family === options.family) ?? all[0]!;
    return callback(null, first.address, first.family);
  };
}

/** POSTs `body` (JSON) to a checked http(s) URL; resolves to the answer's HTTP status. */
export function postPinned(c: CheckedUrl, body: string, opts: { timeoutMs: number }): Promise<number> {
  const u = new URL(c.href);
  const https = u.protocol === 'https:';
  const literal = isIP(c.host) !== 0;
  const options: RequestOptions & { servername?: string } = {
    method: 'POST',
    hostname: c.host,
    port: c.port,
    path: `${u.pathname}${u.search}`,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    // a fresh connection: never a kept-alive socket to an address another request resolved
    agent: false,
    ...(literal ? {} : { lookup: pinnedLookup(c) }),
    // TLS checks the certificate against the name in the URL, not the address connected to
    ...(https && !literal ? { servername: c.host } : {}),
    signal: AbortSignal.timeout(opts.timeoutMs),
  };
  return new Promise<number>((resolve, reject) => {
    let settled = false;
    const req = (https ? httpsRequest : httpRequest)(options, (res) => {
      settled = true;
      resolve(res.statusCode ?? 0);
      // the body is never read
      res.destroy();
    });
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (settled) return;
      settled = true;
      reject(
        new NoAnswerError(
          e.name === 'AbortError' ? `no answer in ${Math.round(opts.timeoutMs / 1000)} s` : (e.code ?? e.name),
        ),
      );
    });
    req.end(body);
  });
}
