// Flux image automation as the app page and the release chain show it (issue 26 part 5; pure). An
// ImageUpdateAutomation belongs to a Flux app when it writes to the app's repository (its GitRepository's URL)
// under a path that overlaps the app's path; the ImagePolicies it applies are those of its namespace its
// `policySelector` selects, each with the ImageRepository it chooses from.
//
// Who made a commit: the author line is whatever the pusher typed, so "image automation" is claimed by the
// author and confirmed only by the controller itself: its `status.lastPushCommit` names the commit. A commit
// whose author is an automation's but which no automation reported pushing is a claim, never a confirmation.
import { withoutUserInfo } from './url-credentials.ts';

export const IMAGE_GROUP = 'image.toolkit.fluxcd.io';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

export interface ReadyView {
  status: 'True' | 'False' | 'Unknown';
  reason?: string | undefined;
  message?: string | undefined;
}

export interface ImageRepositoryView {
  namespace: string;
  name: string;
  image: string;
  ready: ReadyView;
  tagCount?: number | undefined;
  /** the newest tags the last scan found (the controller keeps ten) */
  latestTags: string[];
  scanTime?: string | undefined;
}

export interface ImagePolicyView {
  namespace: string;
  name: string;
  ready: ReadyView;
  /** `semver ^2.1`, `alphabetical asc`, `numerical desc` */
  rule: string;
  /** the tag filter (`filterTags.pattern`), when there is one */
  filter?: string | undefined;
  repository: { namespace: string; name: string; image?: string | undefined };
  chosen?: { image: string; tag: string; digest?: string | undefined } | undefined;
  previous?: { tag: string; digest?: string | undefined } | undefined;
}

export interface ImageAutomationObjectView {
  namespace: string;
  name: string;
  ready: ReadyView;
  suspended: boolean;
  source: { kind: string; namespace: string; name: string; url?: string | undefined };
  checkoutBranch?: string | undefined;
  /** where it pushes: a branch (a pull request from there is the review), or the checkout branch itself */
  pushBranch?: string | undefined;
  updatePath: string;
  author: { name: string; email: string };
  lastPushCommit?: string | undefined;
  lastPushTime?: string | undefined;
  lastRunTime?: string | undefined;
  /** the policies it applied at its last run: policy name → image, tag (and digest) */
  observed: Array<{ policy: string; image: string; tag: string; digest?: string | undefined }>;
  /** the ImagePolicies it applies (names, in its namespace) */
  policies: string[];
}

export interface ImageAutomationView {
  /** unknown: an image kind could not be read (not synced, forbidden, or the cluster is unreachable) */
  status: 'ok' | 'unknown';
  why?: string | undefined;
  automations: ImageAutomationObjectView[];
  policies: ImagePolicyView[];
  repositories: ImageRepositoryView[];
}

export interface ImageObjects {
  automations: Obj[];
  policies: Obj[];
  repositories: Obj[];
  /** the GitRepositories the automations name (their URLs) */
  gitRepository: (namespace: string, name: string) => Obj | undefined;
}

/** `./overlays/dev/` → `overlays/dev`; `./` and `.` → `` (the repository's root). */
export function normPath(p: string | undefined): string {
  return (p ?? '')
    .trim()
    .replace(/^\.\/+/, '')
    .replace(/^\.$/, '')
    .replace(/\/+$/, '')
    .replace(/^\/+/, '');
}

/** One path is the other or lies under it (segment-wise: `apps/a` does not overlap `apps/ab`). */
export function pathsOverlap(a: string | undefined, b: string | undefined): boolean {
  const x = normPath(a);
  const y = normPath(b);
  return x === '' || y === '' || x === y || x.startsWith(`${y}/`) || y.startsWith(`${x}/`);
}

/** A repository URL compared as a location: no credentials, case-insensitive host, no `.git`, no trailing `/`. */
export function repoKey(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const u = new URL(url);
    const path = u.pathname.replace(/\/+$/, '').replace(/\.git$/, '');
    return `${u.protocol}//${u.host.toLowerCase()}${path}`;
  } catch {
    return url.replace(/\/+$/, '').replace(/\.git$/, '');
  }
}

/** Kubernetes label selector (matchLabels and matchExpressions); an absent selector selects everything. */
export function selects(selector: unknown, labels: Record<string, string> | undefined): boolean {
  if (selector === undefined || selector === null) return true;
  const s = obj(selector);
  const l = labels ?? {};
  for (const [k, v] of Object.entries(obj(s.matchLabels))) if (l[k] !== v) return false;
  for (const e of Array.isArray(s.matchExpressions) ? (s.matchExpressions as unknown[]) : []) {
    const x = obj(e);
    const key = str(x.key) ?? '';
    const values = Array.isArray(x.values) ? (x.values as unknown[]).map(String) : [];
    const has = Object.prototype.hasOwnProperty.call(l, key);
    switch (x.operator) {
      case 'In':
        if (!has || !values.includes(l[key] as string)) return false;
        break;
      case 'NotIn':
        if (has && values.includes(l[key] as string)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false; // an operator we do not know selects nothing (as the apiserver would refuse it)
    }
  }
  return true;
}

function readyOf(o: Obj): ReadyView {
  const conds = Array.isArray(obj(o.status).conditions) ? (obj(o.status).conditions as unknown[]) : [];
  const c = conds.map(obj).find((x) => x.type === 'Ready');
  if (!c) return { status: 'Unknown', reason: 'NoReadyCondition' };
  const status = c.status === 'True' ? 'True' : c.status === 'False' ? 'False' : 'Unknown';
  return { status, reason: str(c.reason), message: str(c.message)?.slice(0, 500) };
}

const meta = (o: Obj) => obj(o.metadata);
const nsOf = (o: Obj) => str(meta(o).namespace) ?? '';
const nameOf = (o: Obj) => str(meta(o).name) ?? '';
const labelsOf = (o: Obj) => obj(meta(o).labels) as Record<string, string>;

/** The rule a policy chooses by. */
export function policyRule(policy: unknown): string {
  const p = obj(policy);
  const semver = obj(p.semver);
  if (str(semver.range)) return `semver ${String(semver.range)}`;
  if (p.alphabetical !== undefined) return `alphabetical ${str(obj(p.alphabetical).order) ?? 'asc'}`;
  if (p.numerical !== undefined) return `numerical ${str(obj(p.numerical).order) ?? 'asc'}`;
  return 'no rule';
}

export function repositoryView(o: Obj): ImageRepositoryView {
  const scan = obj(obj(o.status).lastScanResult);
  return {
    namespace: nsOf(o),
    name: nameOf(o),
    image: str(obj(o.spec).image) ?? '',
    ready: readyOf(o),
    tagCount: typeof scan.tagCount === 'number' ? scan.tagCount : undefined,
    latestTags: Array.isArray(scan.latestTags) ? (scan.latestTags as unknown[]).map(String).slice(0, 10) : [],
    scanTime: str(scan.scanTime),
  };
}

export function policyView(o: Obj, repository: (namespace: string, name: string) => Obj | undefined): ImagePolicyView {
  const spec = obj(o.spec);
  const ref = obj(spec.imageRepositoryRef);
  const repoNs = str(ref.namespace) ?? nsOf(o);
  const repoName = str(ref.name) ?? '';
  const repo = repository(repoNs, repoName);
  const latest = obj(obj(o.status).latestRef);
  const prev = obj(obj(o.status).observedPreviousRef);
  return {
    namespace: nsOf(o),
    name: nameOf(o),
    ready: readyOf(o),
    rule: policyRule(spec.policy),
    filter: str(obj(spec.filterTags).pattern),
    repository: { namespace: repoNs, name: repoName, image: repo ? str(obj(repo.spec).image) : undefined },
    chosen: str(latest.tag)
      ? { image: str(latest.name) ?? '', tag: String(latest.tag), digest: str(latest.digest) }
      : undefined,
    previous: str(prev.tag) ? { tag: String(prev.tag), digest: str(prev.digest) } : undefined,
  };
}

export function automationView(
  o: Obj,
  objects: Pick<ImageObjects, 'policies' | 'gitRepository'>,
): ImageAutomationObjectView {
  const spec = obj(o.spec);
  const status = obj(o.status);
  const ns = nsOf(o);
  const src = obj(spec.sourceRef);
  const srcNs = str(src.namespace) ?? ns;
  const srcName = str(src.name) ?? '';
  const git = obj(spec.git);
  const author = obj(obj(git.commit).author);
  const observed = Object.entries(obj(status.observedPolicies)).map(([policy, v]) => {
    const x = obj(v);
    return { policy, image: str(x.name) ?? '', tag: str(x.tag) ?? '', digest: str(x.digest) };
  });
  const gitRepo = objects.gitRepository(srcNs, srcName);
  return {
    namespace: ns,
    name: nameOf(o),
    ready: readyOf(o),
    suspended: spec.suspend === true,
    source: {
      kind: str(src.kind) ?? 'GitRepository',
      namespace: srcNs,
      name: srcName,
      url: gitRepo ? withoutUserInfo(str(obj(gitRepo.spec).url)) : undefined,
    },
    checkoutBranch:
      str(obj(obj(git.checkout).ref).branch) ?? (gitRepo ? str(obj(obj(gitRepo.spec).ref).branch) : undefined),
    pushBranch: str(obj(git.push).branch),
    updatePath: normPath(str(obj(spec.update).path) ?? './'),
    author: { name: str(author.name) ?? '', email: str(author.email) ?? '' },
    lastPushCommit: str(status.lastPushCommit),
    lastPushTime: str(status.lastPushTime),
    lastRunTime: str(status.lastAutomationRunTime),
    observed,
    policies: objects.policies
      .filter((p) => nsOf(p) === ns && selects(spec.policySelector, labelsOf(p)))
      .map(nameOf)
      .sort(),
  };
}

const byNamespaceName = (a: { namespace: string; name: string }, b: { namespace: string; name: string }) =>
  a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;

/**
 * The image automation of a Flux app: the automations writing to its repository under its path, the policies
 * they apply and the repositories those choose from. `app`: its source URL and path.
 */
export function imageAutomationOf(
  app: { sourceUrl?: string | undefined; path?: string | undefined },
  objects: ImageObjects,
): Omit<ImageAutomationView, 'status' | 'why'> {
  const key = repoKey(app.sourceUrl);
  if (!key) return { automations: [], policies: [], repositories: [] };
  const automations = objects.automations
    .map((a) => automationView(a, objects))
    .filter((a) => repoKey(a.source.url) === key && pathsOverlap(a.updatePath, app.path))
    .sort(byNamespaceName);
  const wanted = new Set(automations.flatMap((a) => a.policies.map((p) => `${a.namespace}/${p}`)));
  const repoObj = (ns: string, name: string) => objects.repositories.find((r) => nsOf(r) === ns && nameOf(r) === name);
  const policies = objects.policies
    .filter((p) => wanted.has(`${nsOf(p)}/${nameOf(p)}`))
    .map((p) => policyView(p, repoObj))
    .sort(byNamespaceName);
  const repoKeys = new Set(policies.map((p) => `${p.repository.namespace}/${p.repository.name}`));
  const repositories = objects.repositories
    .filter((r) => repoKeys.has(`${nsOf(r)}/${nameOf(r)}`))
    .map(repositoryView)
    .sort(byNamespaceName);
  return { automations, policies, repositories };
}

// ---- who made a commit -----------------------------------------------------------------------------------------

export interface AutomationChange {
  policy: string;
  rule: string;
  image: string;
  tag: string;
  digest?: string | undefined;
  previous?: string | undefined;
}

export type CommitAutomation =
  | {
      /** the controller reported pushing this very commit (`status.lastPushCommit`) */
      by: 'image-automation';
      confirmed: true;
      automation: string;
      pushedAt?: string | undefined;
      pushBranch?: string | undefined;
      changes: AutomationChange[];
      line: string;
    }
  | {
      /** the author line is an automation's, but no automation reported pushing it */
      by: 'image-automation';
      confirmed: false;
      automation: string;
      line: string;
    };

const sameAuthor = (a: { name: string; email: string }, b: { name: string; email: string }) =>
  (a.email !== '' && a.email.toLowerCase() === b.email.toLowerCase()) ||
  (a.email === '' && a.name !== '' && a.name === b.name);

/** The changes an automation's push carries: the policies whose choice moved (all it applied, when none says so). */
export function changesOf(a: ImageAutomationObjectView, policies: ImagePolicyView[]): AutomationChange[] {
  const all = a.observed.map((o) => {
    const p = policies.find((x) => x.namespace === a.namespace && x.name === o.policy);
    return {
      policy: o.policy,
      rule: p?.rule ?? 'unknown rule',
      image: o.image,
      tag: o.tag,
      digest: o.digest ?? (p?.chosen?.tag === o.tag ? p.chosen.digest : undefined),
      previous: p?.previous?.tag && p.previous.tag !== o.tag ? p.previous.tag : undefined,
    };
  });
  const moved = all.filter((c) => c.previous);
  return moved.length ? moved : all;
}

export function changeLine(automation: string, changes: AutomationChange[]): string {
  const parts = changes.map(
    (c) =>
      `policy ${c.policy} (${c.rule}) chose ${c.tag}${c.previous ? ` (was ${c.previous})` : ''}${c.digest ? `, digest ${c.digest}` : ''}, from ${c.image}`,
  );
  return `image automation ${automation}${parts.length ? `: ${parts.join('; ')}` : ''}`;
}

/**
 * Whether a commit was made by an image automation of the app: confirmed when one reported pushing it; claimed
 * when only its author line says so; undefined when it is nobody's automation.
 */
export function automationOfCommit(
  commit: { sha: string; author: { name: string; email: string } },
  view: Pick<ImageAutomationView, 'automations' | 'policies'>,
): CommitAutomation | undefined {
  const pushed = view.automations.find((a) => a.lastPushCommit === commit.sha);
  if (pushed) {
    const id = `${pushed.namespace}/${pushed.name}`;
    const changes = changesOf(pushed, view.policies);
    return {
      by: 'image-automation',
      confirmed: true,
      automation: id,
      pushedAt: pushed.lastPushTime,
      pushBranch: pushed.pushBranch ?? pushed.checkoutBranch,
      changes,
      line: changeLine(id, changes),
    };
  }
  const claimed = view.automations.find((a) => sameAuthor(a.author, commit.author));
  if (!claimed) return undefined;
  const id = `${claimed.namespace}/${claimed.name}`;
  return {
    by: 'image-automation',
    confirmed: false,
    automation: id,
    line: `the author claims image automation ${id}, which has not reported pushing ${commit.sha.slice(0, 8)} (its last push: ${claimed.lastPushCommit?.slice(0, 8) ?? 'none'})`,
  };
}

/**
 * Whether the automation's report of this push may still come: an automation-authored commit not confirmed yet,
 * made after the automation's last reported push, within `graceMs` of the commit (the change state is recorded
 * as a claim at once and again, confirmed, if the report comes).
 */
export function awaitingPushReport(
  commit: { author: { name: string; email: string }; committerTime: string },
  view: Pick<ImageAutomationView, 'automations'>,
  now: number,
  graceMs: number,
): boolean {
  const a = view.automations.find((x) => sameAuthor(x.author, commit.author));
  if (!a) return false;
  const made = Date.parse(commit.committerTime);
  if (!Number.isFinite(made) || now - made > graceMs) return false;
  const last = a.lastPushTime ? Date.parse(a.lastPushTime) : NaN;
  return !(Number.isFinite(last) && last >= made);
}
