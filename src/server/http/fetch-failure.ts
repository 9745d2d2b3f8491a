// What a failed fetch() says about why: undici throws TypeError("fetch failed") and puts the socket's error (its
// code: ECONNRESET, ECONNREFUSED, UND_ERR_SOCKET, …) in `cause`.

/** the socket error's code under fetch's "fetch failed", if any */
export function fetchCauseCode(e: unknown): string | undefined {
  const code = (e as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return typeof code === 'string' ? code : undefined;
}

const SOCKET_CLOSED = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);
/** the connection was closed under the request (a kept-alive socket the server dropped): an idempotent one may retry */
export function socketClosed(e: unknown): boolean {
  return SOCKET_CLOSED.has(fetchCauseCode(e) ?? '');
}

/** the error's message with its cause's code (or message) when the message does not already say it */
export function fetchErrorText(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  const cause = (e as { cause?: { message?: unknown } } | undefined)?.cause;
  const why = fetchCauseCode(e) ?? (cause?.message === undefined ? '' : String(cause.message));
  return why && !msg.includes(why) ? `${msg}: ${why}` : msg;
}
