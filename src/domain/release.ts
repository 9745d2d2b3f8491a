// A release of one app in one environment: the states it goes through from a commit to a verified, running
// workload (issue 16), and the pure rules the release recorder (server/evidence/release-recorder.ts) and the
// releases route use: revisions → commit shas, images in a render, a live-digest check, `git show` parsing,
// the timeline built from release evidence and the "merged, but not live — why?" answer.

export const RELEASE_STATES = [
  'change',
  'review',
  'artifact',
  'render',
  'validation',
  'reconcile',
  'health',
  'verification',
  'promotion',
] as const;
export type ReleaseStateName = (typeof RELEASE_STATES)[number];

/** The evidence type that records each state. */
export const RELEASE_EVIDENCE: Partial<Record<ReleaseStateName, string>> = {
  change: 'release.change',
  review: 'release.review',
  artifact: 'release.artifact',
  render: 'release.render',
  validation: 'release.validation',
  reconcile: 'release.reconcile',
  health: 'release.health',
  verification: 'release.verification',
  promotion: 'release.promotion',
};
/** a window in which the recorder did not record (not a state of one release) */
export const RELEASE_GAP = 'release.gap';
export const RELEASE_EVIDENCE_TYPES = Object.values(RELEASE_EVIDENCE) as string[];

export const stateOfType = (type: string): ReleaseStateName | undefined =>
  (Object.entries(RELEASE_EVIDENCE).find(([, t]) => t === type)?.[0] as ReleaseStateName | undefined) ?? undefined;

export type StateStatus = 'ok' | 'failed' | 'unknown' | 'pending';

/** A commit sha from a controller's revision: Flux `main@sha1:<sha>` / `sha1:<sha>`, Argo CD a plain sha. */
export function shaOf(revision: string | undefined | null): string | undefined {
  if (!revision) return undefined;
  const m = /(?:^|[@:])([0-9a-f]{40}|[0-9a-f]{64})$/.exec(revision);
  return m?.[1];
}

/** A URL without user info (credentials never reach evidence). */
export function redactUrl(raw: string | undefined): string | undefined {
  if (!raw) return raw;
  try {
    const u = new URL(raw);
    if (!u.username && !u.password) return raw;
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return raw.replace(/\/\/[^/@]*@/, '//');
  }
}

// ---- images ---------------------------------------------------------------------------------------------

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

export function parseImage(image: string): { name: string; tag?: string; digest?: string } {
  const [nameTag = '', digest] = image.split('@');
  const slash = nameTag.lastIndexOf('/');
  const colon = nameTag.lastIndexOf(':');
  const hasTag = colon > slash;
  const name = hasTag ? nameTag.slice(0, colon) : nameTag;
  const tag = hasTag ? nameTag.slice(colon + 1) : undefined;
  return { name, ...(tag ? { tag } : {}), ...(digest ? { digest } : {}) };
}

/** `:latest`, or no digest at all (a tag can be moved to other bytes). */
export function isMutableImage(image: string): boolean {
  const p = parseImage(image);
  return !p.digest || p.tag === 'latest';
}

type Obj = Record<string, unknown>;
const asObj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});

/** The Pod template's spec of a workload object (Pod, Deployment & co., Job, CronJob); undefined otherwise. */
function podSpecOf(o: Obj): Obj | undefined {
  const kind = String(o.kind ?? '');
  const spec = asObj(o.spec);
  if (kind === 'Pod') return spec;
  if (kind === 'CronJob') return asObj(asObj(asObj(asObj(spec.jobTemplate).spec).template).spec);
  if (['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job', 'ReplicationController'].includes(kind))
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

// ---- git ---------------------------------------------------------------------------------------------------

/** `git show -s --format=` of GIT_SHOW_FORMAT: fields separated by NUL. */
export const GIT_SHOW_FORMAT = '%H%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%G?%x00%GS%x00%P%x00%B';

export interface CommitInfo {
  sha: string;
  author: { name: string; email: string; time: string };
  committer: { name: string; email: string; time: string };
  /** %G?: G good, B bad, U good/unknown validity, X/Y expired, R revoked, E cannot check, N none */
  signature: { status: 'verified' | 'unverified' | 'bad' | 'none'; code: string; signer?: string };
  parents: string[];
  subject: string;
  /** the message, at most 2,000 characters */
  message: string;
}

export function parseGitShow(out: string): CommitInfo {
  const f = out.split('\0');
  if (f.length < 11 || !/^[0-9a-f]{40,64}$/.test(f[0] ?? '')) throw new Error('unreadable git show output');
  const code = (f[7] ?? 'N').trim() || 'N';
  const status = code === 'G' ? 'verified' : code === 'B' ? 'bad' : code === 'N' ? 'none' : 'unverified';
  const message = f.slice(10).join('\0').trim();
  return {
    sha: f[0] as string,
    author: { name: f[1] ?? '', email: f[2] ?? '', time: f[3] ?? '' },
    committer: { name: f[4] ?? '', email: f[5] ?? '', time: f[6] ?? '' },
    signature: { status, code, ...(f[8] ? { signer: f[8] } : {}) },
    parents: (f[9] ?? '').split(' ').filter(Boolean),
    subject: message.split('\n')[0]?.slice(0, 200) ?? '',
    message: message.length > 2000 ? `${message.slice(0, 2000)}…` : message,
  };
}

// ---- verification --------------------------------------------------------------------------------------------

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

// ---- the timeline ------------------------------------------------------------------------------------------

export interface ReleaseEvent {
  seq: number;
  time: string;
  type: string;
  actor: string;
  data: Record<string, unknown>;
}

export interface ReleaseStateView {
  name: ReleaseStateName;
  /** 1–9 */
  step: number;
  status: StateStatus;
  /** one line: the value of the state (short sha, digest, render hash…) */
  value?: string;
  /** why it failed, is unknown or is still pending */
  why?: string;
  time?: string;
  actor?: string;
  /** the evidence record (the newest one of this state) */
  seq?: number;
  data?: Record<string, unknown>;
}

export interface ReleaseView {
  sha: string;
  revision: string;
  firstSeen: string;
  states: ReleaseStateView[];
  /** the first state that did not complete, and why (set on the newest release only) */
  blocked?: { state: ReleaseStateName; why: string };
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

function recordedState(name: ReleaseStateName, e: ReleaseEvent): ReleaseStateView {
  const d = e.data;
  const status: StateStatus = d.status === 'failed' ? 'failed' : d.status === 'unknown' ? 'unknown' : 'ok';
  const base = {
    name,
    step: RELEASE_STATES.indexOf(name) + 1,
    status,
    time: e.time,
    actor: e.actor,
    seq: e.seq,
    data: d,
  };
  const why = str(d.reason);
  let value: string | undefined;
  let actor = e.actor;
  switch (name) {
    case 'change': {
      const a = asObj(d.author);
      actor = str(a.name) ?? actor;
      value = str(d.subject) ?? str(d.sha)?.slice(0, 7);
      break;
    }
    case 'artifact': {
      const imgs = Array.isArray(d.images) ? (d.images as Obj[]) : [];
      const mutable = imgs.filter((i) => i.mutable).length;
      value = [
        str(d.artifactDigest),
        imgs.length ? `${imgs.length} image(s)${mutable ? `, ${mutable} mutable tag(s)` : ''}` : undefined,
      ]
        .filter(Boolean)
        .join(' · ');
      break;
    }
    case 'render':
      value = str(d.renderHash)
        ? `${String(d.renderHash)
            .replace(/^sha256:/, '')
            .slice(0, 12)} · ${String(d.objects ?? '?')} objects`
        : undefined;
      break;
    case 'reconcile':
      value = str(d.appliedRevision) ?? str(d.attemptedRevision);
      if (typeof d.secondsAfterCommit === 'number')
        value = `${value ?? ''} · ${Math.round(d.secondsAfterCommit)} s after the commit`;
      break;
    case 'health':
      value = str(d.health);
      break;
    case 'review': {
      const pr = asObj(d.pullRequest);
      const approvers = Array.isArray(d.approvers) ? (d.approvers as unknown[]).map(String) : [];
      value =
        typeof pr.number === 'number'
          ? `PR #${pr.number}${approvers.length ? ` approved by ${approvers.join(', ')}` : ' (no approval)'}`
          : d.directPush
            ? 'direct push (no pull request, no merge commit)'
            : d.merge
              ? `merge commit${approvers.length ? `, reviewed by ${approvers.join(', ')}` : ''}`
              : undefined;
      if (typeof pr.mergedBy === 'string') actor = pr.mergedBy;
      break;
    }
    case 'validation':
      value =
        typeof d.accepted === 'number'
          ? `${d.accepted} accepted · ${typeof d.rejected === 'number' ? d.rejected : 0} rejected`
          : undefined;
      break;
    case 'promotion':
      value = str(d.toEnv)
        ? `reached ${String(d.toEnv)}${typeof d.secondsAfter === 'number' ? ` ${Math.round(d.secondsAfter)} s later` : ''}`
        : undefined;
      break;
    case 'verification': {
      const http = asObj(d.http);
      const live = asObj(d.live);
      value = [
        typeof http.status === 'number' ? `HTTP ${http.status} in ${String(http.latencyMs)} ms` : undefined,
        typeof live.pods === 'number' ? `${live.pods} pod(s)` : undefined,
      ]
        .filter(Boolean)
        .join(' · ');
      break;
    }
    default:
      break;
  }
  return { ...base, actor, ...(value ? { value } : {}), ...(status !== 'ok' && why ? { why } : {}) };
}

/**
 * Release rows, newest first, from the app's release evidence (any order). The newest record of each state of
 * a release wins. States not recorded are pending (with why), or unknown when a newer release superseded them.
 */
export function buildReleases(events: ReleaseEvent[], now = new Date().toISOString()): ReleaseView[] {
  const bySha = new Map<
    string,
    { revision: string; firstSeen: string; firstSeq: number; got: Map<ReleaseStateName, ReleaseEvent> }
  >();
  for (const e of [...events].sort((a, b) => a.seq - b.seq)) {
    const name = stateOfType(e.type);
    const sha = str(e.data.sha);
    if (!name || !sha) continue;
    let r = bySha.get(sha);
    if (!r)
      bySha.set(
        sha,
        (r = { revision: str(e.data.revision) ?? sha, firstSeen: e.time, firstSeq: e.seq, got: new Map() }),
      );
    r.got.set(name, e);
  }
  const ordered = [...bySha.entries()].sort((a, b) => b[1].firstSeq - a[1].firstSeq);
  return ordered.map(([sha, r], i) => {
    const newest = i === 0;
    const states = RELEASE_STATES.map((name): ReleaseStateView => {
      const step = RELEASE_STATES.indexOf(name) + 1;
      const e = r.got.get(name);
      if (e) return recordedState(name, e);
      // promotion happens after a newer release of this environment may have started: pending on every row
      if (name === 'promotion')
        return { name, step, status: 'pending', why: 'the next environment does not run these digests (yet)' };
      if (!newest) return { name, step, status: 'unknown', why: 'never reached: a newer revision superseded this one' };
      return { name, step, status: 'pending', why: pendingWhy(name, r.got) };
    });
    const view: ReleaseView = { sha, revision: r.revision, firstSeen: r.firstSeen, states };
    if (newest) {
      const b = firstIncomplete(states);
      if (b) view.blocked = b;
    }
    void now;
    return view;
  });
}

function pendingWhy(name: ReleaseStateName, got: Map<ReleaseStateName, ReleaseEvent>): string {
  switch (name) {
    case 'change':
      return 'reading the commit from Git';
    case 'review':
      return got.has('change') ? 'reading how the commit reached the branch' : 'waits for the commit';
    case 'validation':
      return got.has('render') ? 'server-side dry-run of the render' : 'waits for the render';
    case 'artifact':
    case 'render':
      return 'waiting for the source artifact of this revision';
    case 'reconcile':
      return 'waiting for the controller to apply this revision (its queue or interval)';
    case 'health': {
      const r = got.get('reconcile');
      if (!r) return 'waits for the reconcile';
      return r.data.status === 'failed' || r.data.status === 'unknown'
        ? 'not reached: the reconcile did not apply this revision'
        : 'waiting for the objects to become Healthy or Degraded';
    }
    case 'verification':
      return got.has('health') ? 'waiting for the rollout, then the check runs' : 'runs after the health state';
    default:
      return 'pending';
  }
}

/** The recorded states that decide whether a release is live (review and promotion are governance, not liveness). */
const REQUIRED: ReleaseStateName[] = RELEASE_STATES.filter((s) => s !== 'review' && s !== 'promotion');

function firstIncomplete(states: ReleaseStateView[]): { state: ReleaseStateName; why: string } | undefined {
  const s = states.find((x) => REQUIRED.includes(x.name) && x.status !== 'ok');
  return s
    ? { state: s.name, why: `${s.status === 'failed' ? 'failed' : s.status}: ${s.why ?? 'no reason recorded'}` }
    : undefined;
}

export interface AppConditionsView {
  sync: string;
  health: string;
  healthMessage: string;
  conditions: Array<{ type: string; status: string; reason?: string; message?: string }>;
  source: { revisionWanted?: string; revisionObserved?: string; revisionAttempted?: string; sourceReady?: string };
  automation: { suspended: boolean };
  clusterReachable: boolean;
}

/**
 * "Merged, but not live — why?": the newest release's first incomplete state, refined with the app's live
 * conditions (the controller's own words win over the recorder's pending guess). Undefined when it is live.
 */
export function whyNotLive(
  release: ReleaseView | undefined,
  app: AppConditionsView,
): { state: ReleaseStateName; why: string } | undefined {
  if (!release?.blocked) return undefined;
  const { state } = release.blocked;
  if (!app.clusterReachable)
    return { state, why: 'the cluster is unreachable: the console cannot see what the controller did' };
  if (app.automation.suspended)
    return { state: 'reconcile', why: 'the app is suspended: its controller applies nothing' };
  const ready = app.conditions.find((c) => c.type === 'Ready');
  const sourceNotReady = app.source.sourceReady && !app.source.sourceReady.startsWith('True');
  const renderPending = release.states.find((x) => x.name === 'render')?.status === 'pending';
  if (sourceNotReady && (['change', 'artifact'].includes(state) || (state === 'render' && renderPending)))
    return { state: 'artifact', why: `source not fetched: ${app.source.sourceReady}` };
  if (
    ready?.status === 'False' &&
    shaOf(app.source.revisionAttempted) === release.sha &&
    ['artifact', 'render', 'reconcile'].includes(state)
  ) {
    const what = /Build|kustomize/i.test(ready.reason ?? '')
      ? 'render failed'
      : /Health/i.test(ready.reason ?? '')
        ? 'health check failed'
        : 'the controller failed';
    return {
      state: state === 'artifact' ? 'render' : state,
      why: `${what} (${ready.reason ?? 'Ready=False'}): ${ready.message ?? ''}`.trim(),
    };
  }
  return release.blocked;
}

/**
 * The promotion state names where a release goes next: the next environment in the order, or, in the last one,
 * that there is nowhere to promote to (grey, not pending forever).
 */
export function withPromotionTarget(releases: ReleaseView[], env: string, order: string[]): ReleaseView[] {
  const at = order.indexOf(env);
  const next = at >= 0 ? order[at + 1] : undefined;
  const why = next
    ? `${next} does not run these digests (yet)`
    : at >= 0
      ? `${env} is the last environment (${order.join(' → ')}): nothing to promote to`
      : `${env} is not in the environment order (${order.join(' → ')}): no next environment`;
  return releases.map((r) => ({
    ...r,
    states: r.states.map((s) =>
      s.name === 'promotion' && s.status === 'pending' ? { ...s, status: next ? 'pending' : 'unknown', why } : s,
    ),
  }));
}

// ---- small helpers for the recorder ---------------------------------------------------------------------------

/** Seconds between two ISO times (b − a), or undefined when either is not a time. */
export function secondsBetween(a: string | undefined, b: string | undefined): number | undefined {
  const ta = a ? Date.parse(a) : NaN;
  const tb = b ? Date.parse(b) : NaN;
  return Number.isNaN(ta) || Number.isNaN(tb) ? undefined : Math.round((tb - ta) / 100) / 10;
}

/** A body excerpt for evidence: at most 200 characters, control characters dropped. */
export function excerpt(body: string, max = 200): string {
  // eslint-disable-next-line no-control-regex
  const clean = body.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '');
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}

// ---- 2 review, 9 promotion -----------------------------------------------------------------------------------

/** Review trailers of a commit message (`Reviewed-by: Name <mail>`, `Approved-by:`), in order, deduplicated. */
export function reviewTrailers(message: string): string[] {
  const out: string[] = [];
  for (const line of message.split('\n')) {
    const m = /^(?:Reviewed-by|Approved-by|Reviewed-on-behalf-of):\s*(.+?)\s*$/i.exec(line);
    const who = m?.[1]?.replace(/\s*<[^>]*>$/, '');
    if (who && !out.includes(who)) out.push(who);
  }
  return out;
}

/**
 * The review state without a forge: a merge commit (and its review trailers), or a direct push. A direct push
 * (no merge commit, no review trailer) to an environment that requires review fails; elsewhere it is flagged.
 */
export function reviewFromCommit(
  c: Pick<CommitInfo, 'parents' | 'message'>,
  reviewRequired: boolean,
): { status: 'ok' | 'failed'; merge: boolean; directPush: boolean; approvers: string[]; reason?: string } {
  const merge = c.parents.length > 1;
  const approvers = reviewTrailers(c.message);
  const directPush = !merge && approvers.length === 0;
  if (directPush && reviewRequired)
    return {
      status: 'failed',
      merge,
      directPush,
      approvers,
      reason: 'direct push to a branch of an environment that requires review: no merge commit, no review trailer',
    };
  return { status: 'ok', merge, directPush, approvers };
}

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
