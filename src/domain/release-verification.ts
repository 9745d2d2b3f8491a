// The verification state of a release: the HTTP check configured per app or environment, how one answer is
// judged, and the short, printable body excerpt that goes into evidence.

export interface VerificationSpec {
  url: string;
  expectStatus: number;
  bodyMatch?: string;
  versionHeader?: string;
  timeoutMs: number;
}

/** The verification configured for an app: by its id first, else by `<cluster>/<env>`. */
export function verificationFor(
  cfg: Record<string, Partial<VerificationSpec>>,
  app: { id: string; cluster: string; env: string },
): VerificationSpec | undefined {
  const v = cfg[app.id] ?? cfg[`${app.cluster}/${app.env}`];
  if (!v || typeof v.url !== 'string') return undefined;
  return {
    url: v.url,
    expectStatus: typeof v.expectStatus === 'number' ? v.expectStatus : 200,
    ...(typeof v.bodyMatch === 'string' ? { bodyMatch: v.bodyMatch } : {}),
    ...(typeof v.versionHeader === 'string' ? { versionHeader: v.versionHeader } : {}),
    timeoutMs: typeof v.timeoutMs === 'number' ? Math.min(Math.max(v.timeoutMs, 100), 60_000) : 5000,
  };
}

/**
 * What a configured `versionHeader` must say for a release: the release's image, by a digest (the one Git
 * pins, or the one its tag resolved to when the artifact was recorded) or by the tag Git names (not `latest`).
 * Empty when the release names no image (or its images are unknown): then the header cannot be compared.
 */
export function expectedVersions(images: Array<{ tag?: string; digest?: string; resolved?: string }>): string[] {
  const out = new Set<string>();
  // `latest` names no version: a header saying it would pass for any release
  for (const i of images) for (const v of [i.digest, i.resolved, i.tag]) if (v && v !== 'latest') out.add(v);
  return [...out];
}

/** The header's value as compared: trimmed; an image reference (`host/repo@sha256:…`) by its digest. */
function versionOf(value: string): string[] {
  const v = value.trim();
  const at = v.lastIndexOf('@');
  return at > 0 ? [v, v.slice(at + 1)] : [v];
}

const shown = (vs: string[]) =>
  vs.length > 3 ? `${vs.slice(0, 3).join(' or ')} or ${vs.length - 3} more` : vs.join(' or ');

/**
 * Judges one HTTP answer against the spec; no answer at all is a failure (never a success). A `versionHeader`
 * is compared with `expected` (expectedVersions of the release): missing or different is a failure naming both
 * values; with nothing to compare it with, the answer is `unknown` (never a pass on presence alone).
 */
export function judgeVerification(
  spec: VerificationSpec,
  r: { status?: number; body?: string; headers?: Record<string, string>; error?: string },
  expected: string[] = [],
): { ok: boolean; reason: string; unknown?: true } {
  if (r.status === undefined) return { ok: false, reason: `no answer: ${r.error ?? 'no response'}` };
  if (r.status !== spec.expectStatus) return { ok: false, reason: `HTTP ${r.status}, expected ${spec.expectStatus}` };
  if (spec.bodyMatch) {
    let re: RegExp | undefined;
    try {
      re = new RegExp(spec.bodyMatch);
    } catch {
      re = undefined;
    }
    const hit = re ? re.test(r.body ?? '') : (r.body ?? '').includes(spec.bodyMatch);
    if (!hit) return { ok: false, reason: `body does not match ${spec.bodyMatch}` };
  }
  if (spec.versionHeader) {
    const h = spec.versionHeader;
    const value = r.headers?.[h.toLowerCase()];
    const want = expected.length ? `expected ${shown(expected)}` : 'and the release names no image to expect';
    if (!value?.trim()) return { ok: false, reason: `no ${h} header in the answer, ${want}` };
    if (!expected.length)
      return {
        ok: false,
        unknown: true,
        reason: `${h} is ${value.trim()}, but the release names no image digest or tag to compare it with`,
      };
    if (!versionOf(value).some((v) => expected.includes(v)))
      return { ok: false, reason: `${h} is ${value.trim()}, expected ${shown(expected)} (the release's image)` };
    return { ok: true, reason: `HTTP ${r.status}, ${h} ${value.trim()}` };
  }
  return { ok: true, reason: `HTTP ${r.status}` };
}

/** A body excerpt for evidence: at most 200 characters, control characters dropped. */
export function excerpt(body: string, max = 200): string {
  // eslint-disable-next-line no-control-regex
  const clean = body.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '');
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}
