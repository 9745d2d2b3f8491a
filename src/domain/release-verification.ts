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

/** Judges one HTTP answer against the spec; no answer at all is a failure (never a success). */
export function judgeVerification(
  spec: VerificationSpec,
  r: { status?: number; body?: string; headers?: Record<string, string>; error?: string },
): { ok: boolean; reason: string } {
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
  if (spec.versionHeader && !r.headers?.[spec.versionHeader.toLowerCase()])
    return { ok: false, reason: `no ${spec.versionHeader} header in the answer` };
  return { ok: true, reason: `HTTP ${r.status}` };
}

/** A body excerpt for evidence: at most 200 characters, control characters dropped. */
export function excerpt(body: string, max = 200): string {
  // eslint-disable-next-line no-control-regex
  const clean = body.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '');
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}
