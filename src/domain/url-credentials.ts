// Credentials in URLs: one rule for what counts as a URL's user info, so that no log line, error message or
// evidence record carries a token that came in a repository or database URL.

/**
 * `scheme://…@`: everything up to the authority's last `@` (a password may hold `@`, as URL parsers read it), no
 * `/`, `?`, `#` or white space in between.
 */
const USER_INFO = /([a-z][a-z0-9+.-]*:\/\/)[^\s/?#]*@/gi;

/**
 * Every URL's user info in free text (git's stderr, a forge's message, a config error) replaced by `mark`
 * (`scheme://<mark>@host`), or dropped when `mark` is empty (`scheme://host`).
 */
export function redactUrlCredentials(text: string, mark = ''): string {
  return text.replace(USER_INFO, (_m, scheme: string) => (mark ? `${scheme}${mark}@` : scheme));
}

/**
 * An app (anything with a source) as it is shown and recorded: its repository URL without user info. The console
 * keeps the URL as the controller has it for its own Git runs; readers, the evidence and the app API never see it.
 */
export function withoutSourceCredentials<T extends { source: { url?: string | undefined } }>(a: T): T {
  const url = withoutUserInfo(a.source.url);
  return url === a.source.url ? a : { ...a, source: { ...a.source, url } };
}

/** One URL without its user info (credentials never reach evidence); unparseable text by the same rule. */
export function withoutUserInfo(raw: string | undefined): string | undefined {
  if (!raw) return raw;
  try {
    const u = new URL(raw);
    if (!u.username && !u.password) return raw;
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return redactUrlCredentials(raw);
  }
}
