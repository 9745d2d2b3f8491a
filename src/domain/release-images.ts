// The images of a release: each container image a render names (mutable tags flagged), the running Pods'
// digests checked against them, and the digests that tell a release promoted to the next environment.
import { isMutableImage, parseImage } from './image.ts';
import type { Obj } from './object-meta.ts';

export interface ImageRef {
  /** the reference as the render names it */
  image: string;
  /** `Kind/name` of the object and the container */
  object: string;
  container: string;
  /** name without tag or digest: host/repo */
  name: string;
  tag?: string;
  digest?: string;
  /** `:latest` or no digest: what runs can change without a commit */
  mutable: boolean;
}

const asObj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});

/** The Pod template's spec of a workload object (Pod, Deployment & co., Job, CronJob); undefined otherwise. */
function podSpecOf(o: Obj): Obj | undefined {
  const kind = String(o.kind ?? '');
  const spec = asObj(o.spec);
  if (kind === 'Pod') return spec;
  if (kind === 'CronJob') return asObj(asObj(asObj(asObj(spec.jobTemplate).spec).template).spec);
  // (an Argo Rollout has a Deployment's Pod template)
  if (
    ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job', 'ReplicationController', 'Rollout'].includes(kind)
  )
    return asObj(asObj(spec.template).spec);
  return undefined;
}

/** Every container image a render names (init containers included), in render order, deduplicated per container. */
export function imagesOf(objects: Obj[]): ImageRef[] {
  const out: ImageRef[] = [];
  for (const o of objects) {
    const ps = podSpecOf(o);
    if (!ps) continue;
    const object = `${String(o.kind)}/${String(asObj(o.metadata).name ?? '?')}`;
    for (const list of [ps.initContainers, ps.containers]) {
      if (!Array.isArray(list)) continue;
      for (const c of list) {
        const image = String(asObj(c).image ?? '');
        if (!image) continue;
        const p = parseImage(image);
        out.push({ image, object, container: String(asObj(c).name ?? '?'), ...p, mutable: isMutableImage(image) });
      }
    }
  }
  return out;
}

// ---- live digests ----------------------------------------------------------------------------------------

export interface PodImage {
  pod: string;
  container: string;
  /** status.containerStatuses[].image */
  image: string;
  /** status.containerStatuses[].imageID (`host/repo@sha256:…`, `docker-pullable://…`) */
  imageID: string;
}

export interface LiveDigestCheck {
  pods: number;
  /** digest → pods running it */
  digests: Record<string, number>;
  /** pods running a digest Git did not name (by digest, or by the digest its tag resolved to when recorded) */
  unexpected: Array<{ pod: string; container: string; digest: string; image: string }>;
  /** containers with no imageID yet (not pulled) */
  unresolved: number;
}

export const digestOfImageID = (id: string): string | undefined => /(sha256:[0-9a-f]{64})$/.exec(id)?.[1];

/**
 * The running Pods' digests against Git's images: a container whose image name Git names is expected to run
 * the digest Git pins, or the digest the tag resolved to when the artifact was recorded. A tag Git names whose
 * digest was never resolved cannot be checked by digest: that container is not flagged, the tag is (mutable).
 */
export function checkLiveDigests(
  git: Array<Pick<ImageRef, 'name' | 'digest'> & { resolved?: string }>,
  pods: PodImage[],
): LiveDigestCheck {
  const expected = new Map<string, Set<string>>();
  const checkable = new Set<string>();
  for (const g of git) {
    const d = g.digest ?? g.resolved;
    let set = expected.get(g.name);
    if (!set) expected.set(g.name, (set = new Set()));
    if (d) {
      set.add(d);
      checkable.add(g.name);
    }
  }
  const res: LiveDigestCheck = {
    pods: new Set(pods.map((p) => p.pod)).size,
    digests: {},
    unexpected: [],
    unresolved: 0,
  };
  for (const p of pods) {
    const d = digestOfImageID(p.imageID);
    if (!d) {
      res.unresolved++;
      continue;
    }
    res.digests[d] = (res.digests[d] ?? 0) + 1;
    const name = parseImage(p.image).name;
    // a pod image Git does not name at all (a sidecar injected by a webhook) is flagged too
    if (!expected.has(name) || (checkable.has(name) && !expected.get(name)?.has(d)))
      res.unexpected.push({ pod: p.pod, container: p.container, digest: d, image: p.image });
  }
  return res;
}

// ---- 9 promotion -----------------------------------------------------------------------------------------------

/** `name@digest` of each image a release's artifact names (pinned digest, or the digest its tag resolved to). */
export function releaseDigests(images: Array<{ name?: unknown; digest?: unknown; resolved?: unknown }>): string[] {
  const out = new Set<string>();
  for (const i of images) {
    const d = typeof i.digest === 'string' ? i.digest : typeof i.resolved === 'string' ? i.resolved : undefined;
    if (typeof i.name === 'string' && d) out.add(`${i.name}@${d}`);
  }
  return [...out].sort();
}

/**
 * Has a release with `from` digests reached an environment running `to`? Every image of `from` runs by the
 * same digest there (`to` may name more). A release with no resolvable digest cannot be followed: undefined.
 */
export function promoted(from: string[], to: string[]): boolean | undefined {
  if (!from.length) return undefined;
  const there = new Set(to);
  return from.every((d) => there.has(d));
}
