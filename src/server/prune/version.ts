// The version of a candidate that a preview pins. An object's resourceVersion, except for an Argo CD Application:
// its controller rewrites its status at every resync (every few seconds), so its resourceVersion would void every
// approval of an ApplicationSet shrink before a reviewer could read it. For an Application the preview pins a
// digest of what decides what its deletion does instead: its spec and its finalizers (`spec:<sha256 prefix>`).
// A pinned digest is no precondition the apiserver knows: the console compares it itself, right before it
// lists the uid (stamps.ts), and its merge patch then carries the uid only.
import { createHash } from 'node:crypto';
import { metaOf, type Obj } from '../../domain/object-meta.ts';

const stable = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(stable)
    : v && typeof v === 'object'
      ? Object.fromEntries(
          Object.keys(v as Obj)
            .sort()
            .map((k) => [k, stable((v as Obj)[k])]),
        )
      : v;

/** An Argo CD Application: by its ref (list items carry no kind) or by the object's own apiVersion and kind. */
export function isArgoApplication(o: Obj, ref?: { group: string; kind: string }): boolean {
  if (ref) return ref.group === 'argoproj.io' && ref.kind === 'Application';
  return typeof o.apiVersion === 'string' && o.apiVersion.startsWith('argoproj.io/') && o.kind === 'Application';
}

/** What a preview pins of a live object: its resourceVersion, or an Application's spec digest. */
export function pinnedVersion(o: Obj, ref?: { group: string; kind: string }): string | undefined {
  const m = metaOf(o);
  if (!isArgoApplication(o, ref)) return m.resourceVersion;
  const digest = createHash('sha256')
    .update(JSON.stringify(stable({ spec: o.spec ?? null, finalizers: m.finalizers ?? [] })))
    .digest('hex')
    .slice(0, 16);
  return `spec:${digest}`;
}

/** Whether a pinned version is the apiserver's resourceVersion (a precondition it checks itself). */
export const isResourceVersion = (v: string): boolean => !v.startsWith('spec:');
