// Container image references: one parser for `host/repo:tag@digest`, shared by the release chain (which image
// runs) and the freeze write-back (kustomize `images:` entries).

export interface ParsedImage {
  /** without tag or digest: host/repo */
  name: string;
  tag?: string;
  digest?: string;
}

/** `host:5000/repo:tag@sha256:…` → name `host:5000/repo`, tag, digest; an empty tag or digest is left out. */
export function parseImage(image: string): ParsedImage {
  let rest = image;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  const colon = rest.lastIndexOf(':');
  const hasTag = colon > rest.lastIndexOf('/');
  const name = hasTag ? rest.slice(0, colon) : rest;
  const tag = hasTag ? rest.slice(colon + 1) : undefined;
  return { name, ...(tag ? { tag } : {}), ...(digest ? { digest } : {}) };
}

/** `:latest`, or no digest at all (a tag can be moved to other bytes). */
export function isMutableImage(image: string): boolean {
  const p = parseImage(image);
  return !p.digest || p.tag === 'latest';
}
