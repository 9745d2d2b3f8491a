// The API's plain helpers, without zod: the SPA's shell imports these (its schemas load later, web/lib/parsers.ts).

/** An app id (cluster/namespace/kind/name) as a URL path, each part encoded. */
export function appPath(id: string): string {
  return id.split('/').map(encodeURIComponent).join('/');
}

/** The error code of an action refused because the evidence store cannot record it (503). */
export const EVIDENCE_UNAVAILABLE = 'EvidenceUnavailable';
