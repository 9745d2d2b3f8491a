// Whether a new source revision changed anything an app runs (issue 39): in a monorepo every commit to the branch is
// a new revision of every app on it, and most leave a given app's render exactly as it was. Such a commit is not a
// release of that app: it is recorded ("no change here", with the release it is the same as) and kept out of the
// deployment counts, lead times and promotions. Pure, no I/O.
//
// The rule: the new render has the same render hash as the app's running release (the newest other revision whose
// render was recorded ok and whose reconcile was recorded ok), and no image both of them resolved from a tag
// resolved to another digest. The same render hash means the controller is asked to apply the same objects (image
// references included), so nothing that runs changes. Anything not known — the render failed, no running release
// is on record, the records could not be read — is a change: a release is never hidden on a guess.
import { releaseDigests } from './release-images.ts';

export interface EffectEvent {
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

/** The render evidence a classification needs: the release records of one app (any order). */
export const EFFECT_EVENT_TYPES = ['release.artifact', 'release.render', 'release.reconcile'] as const;

export interface RunningRelease {
  sha: string;
  renderHash: string;
  /** image@digest of its images (pinned or resolved from a tag) */
  digests: string[];
}

export type ReleaseEffect =
  { effect: 'unchanged'; sameAs: string } | { effect: 'changed'; since: string | null; why: string };

const ok = (e: EffectEvent) => e.data.status === undefined || e.data.status === 'ok';
const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);

/** The app's running release as its records say: the newest revision other than `sha` rendered ok and reconciled ok. */
export function runningRelease(events: EffectEvent[], sha: string): RunningRelease | undefined {
  const bySha = new Map<
    string,
    { seq: number; renderHash?: string; reconciled: boolean; images?: unknown[]; sameAs?: string }
  >();
  for (const e of events) {
    const s = str(e.data.sha);
    if (!s || s === sha) continue;
    let r = bySha.get(s);
    if (!r) bySha.set(s, (r = { seq: e.seq, reconciled: false }));
    r.seq = Math.max(r.seq, e.seq);
    if (e.type === 'release.render' && ok(e) && str(e.data.renderHash)) {
      r.renderHash ??= str(e.data.renderHash);
      if (e.data.effect === 'unchanged') r.sameAs ??= str(e.data.sameAs);
    } else if (e.type === 'release.reconcile' && ok(e)) r.reconciled = true;
    else if (e.type === 'release.artifact' && Array.isArray(e.data.images)) r.images ??= e.data.images;
  }
  let best: [string, { seq: number; renderHash?: string; images?: unknown[]; sameAs?: string }] | undefined;
  for (const [s, r] of bySha) if (r.renderHash && r.reconciled && (!best || r.seq > best[1].seq)) best = [s, r];
  if (!best?.[1].renderHash) return undefined;
  // a revision that changed nothing runs its release: the running release is that one (a busy repository's
  // unrelated commits never become "the release" a later commit is the same as)
  return {
    sha: best[1].sameAs ?? best[0],
    renderHash: best[1].renderHash,
    digests: releaseDigests((best[1].images ?? []) as Array<Record<string, unknown>>),
  };
}

/** The effect of a release rendered to `renderHash` with `images`, against the app's running release. */
export function releaseEffect(
  current: { renderHash: string; images: Array<{ name?: unknown; digest?: unknown; resolved?: unknown }> },
  running: RunningRelease | undefined,
): ReleaseEffect {
  if (!running) return { effect: 'changed', since: null, why: 'no running release of this app is on record' };
  if (running.renderHash !== current.renderHash)
    return { effect: 'changed', since: running.sha, why: `the render differs from ${running.sha.slice(0, 7)}'s` };
  // the same references; a tag both sides resolved may still point elsewhere now
  const before = new Map(running.digests.map((d) => [d.slice(0, d.lastIndexOf('@')), d]));
  for (const d of releaseDigests(current.images)) {
    const was = before.get(d.slice(0, d.lastIndexOf('@')));
    if (was && was !== d)
      return { effect: 'changed', since: running.sha, why: `${was.split('@')[0]} resolves to another digest now` };
  }
  return { effect: 'unchanged', sameAs: running.sha };
}
