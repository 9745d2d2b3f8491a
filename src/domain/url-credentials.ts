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
