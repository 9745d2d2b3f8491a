/** Renders a link only for http(s) URLs; anything else (javascript:, data:, file:) is plain text. */
export function safeHttpUrl(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.toString() : undefined;
  } catch {
    return undefined;
  }
}

export function SafeLink({ href, children }: { href?: string; children: React.ReactNode }) {
  const safe = safeHttpUrl(href);
  if (!safe) return <span className="wrap-anywhere">{children}</span>;
  return (
    <a
      href={safe}
      target="_blank"
      rel="noopener noreferrer"
      className="text-teal-700 underline decoration-dotted wrap-anywhere"
    >
      {children}
    </a>
  );
}
