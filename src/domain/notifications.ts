// Notifications (issue 28): the few evidence records a person must hear about, addressed to the people whose job
// they are, and rendered for a chat webhook (Slack-compatible: `text` plus `blocks`) or as generic JSON.
//   - a prune preview waiting for approval → the reviewers who may approve it (never its requester)
//   - a freeze ends in 15 minutes, or its app was changed around it → on-call where the freeze holds
//   - a release failed its real request check → the app's team (developer and on-call where it runs)
//   - a planned freeze window starts within the hour → the teams where it freezes apps (developer and on-call)
//   - a break-glass waits for a second person → on-call where the app runs (never the person who asked)
// Who: the accounts and groups whose grants give them the kind's roles on the record's cluster and environment;
// when no grant names those roles there, the admins (someone must hear it). A person who opted out of a kind is
// left out; a notification left with nobody is not sent. Only ids, names, states and links leave: never a diff,
// a Secret value, a token or a free-text body longer than a line.
import type { Grant, Role } from './access.ts';
import type { EvidenceEvent } from './evidence.ts';

export const NOTIFICATION_KINDS = [
  'prune.review-needed',
  'freeze.ending-soon',
  'freeze.interfered',
  'release.verification-failed',
  'window.starting-soon',
  'breakglass.approval-needed',
] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

/** How each kind is described to a person choosing what to hear, and whose it is. */
export const NOTIFICATION_KIND_INFO: Record<NotificationKind, { label: string; roles: readonly Role[] }> = {
  'prune.review-needed': { label: 'A prune preview waits for my approval', roles: ['reviewer'] },
  'freeze.ending-soon': { label: 'A freeze where I am on call ends in 15 minutes', roles: ['oncall'] },
  'freeze.interfered': { label: 'A frozen app was changed around its freeze', roles: ['oncall'] },
  'release.verification-failed': {
    label: "A release of my team's app failed its verification",
    roles: ['developer', 'oncall'],
  },
  'window.starting-soon': {
    label: 'A planned freeze window starts within the hour where I work',
    roles: ['developer', 'oncall'],
  },
  'breakglass.approval-needed': { label: 'A break-glass through a window waits for my approval', roles: ['oncall'] },
};

/** how long before a planned window's occurrence the teams hear about it */
export const WINDOW_STARTING_SOON_MS = 60 * 60_000;

/** how long before a freeze's end on-call hears about it */
export const FREEZE_ENDING_SOON_MS = 15 * 60_000;

export interface Notification {
  kind: NotificationKind;
  /** the evidence record it comes from: `<source>#<seq>` (a receiver de-duplicates by it) */
  id: string;
  seq: number;
  time: string;
  app: string | null;
  cluster: string | null;
  env: string | null;
  title: string;
  /** one line; names and states only */
  summary: string;
  link: string | null;
  /** a person who is never a recipient (the requester of a prune: they may not approve their own) */
  exceptPerson: string | null;
}

export interface Recipients {
  /** the console's names of the accounts addressed */
  users: string[];
  /** groups whose grants make their members recipients (SSO users are reached through their groups) */
  groups: string[];
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');

function linkOf(base: string | undefined, e: EvidenceEvent, path: string | null): string | null {
  const b = base?.replace(/\/+$/, '');
  if (!b) return null;
  if (path) return `${b}${path}`;
  return `${b}/evidence?${new URLSearchParams({ ...(e.app ? { app: e.app } : {}), type: e.type })}`;
}

const where = (e: EvidenceEvent) => [e.cluster, e.env].filter(Boolean).join('/') || 'every environment';
const appName = (e: EvidenceEvent) => e.app ?? 'an app';
/** the app's page (its id is cluster/namespace/kind/name: each part a path segment) */
const appPage = (e: EvidenceEvent) => (e.app ? `/apps/${e.app.split('/').map(encodeURIComponent).join('/')}` : null);
const idPage = (prefix: string, id: unknown) =>
  typeof id === 'string' && id ? `${prefix}/${encodeURIComponent(id)}` : null;

/** The notification an evidence record makes, or null when it makes none. */
export function notificationOf(
  e: EvidenceEvent,
  opts: { source: string; publicUrl?: string | undefined },
): Notification | null {
  const d = e.data ?? {};
  const base = {
    id: `${opts.source}#${e.seq}`,
    seq: e.seq,
    time: e.time,
    app: e.app ?? null,
    cluster: e.cluster ?? null,
    env: e.env ?? null,
    exceptPerson: null as string | null,
  };
  switch (e.type) {
    case 'prune.requested': {
      const plan = str(d.plan);
      if (plan !== 'ready' && plan !== 'needs-override') return null;
      const n = Array.isArray(d.candidates) ? d.candidates.length : 0;
      const requester = (d.requester ?? {}) as { name?: unknown; person?: unknown };
      return {
        ...base,
        kind: 'prune.review-needed',
        title: `Prune preview for ${appName(e)} waits for approval`,
        summary:
          `${str(requester.name) || e.actor} asks to delete ${n} object${n === 1 ? '' : 's'} of ${appName(e)} in ${where(e)}` +
          (plan === 'needs-override' ? ' (it needs an override: two approvals)' : ''),
        link: linkOf(opts.publicUrl, e, idPage('/prune-previews', d.previewId) ?? appPage(e)),
        exceptPerson: str(requester.person) || null,
      };
    }
    case 'freeze.ending-soon': {
      const at = str(d.expiresAt);
      return {
        ...base,
        kind: 'freeze.ending-soon',
        title: `Freeze of ${e.app ?? where(e)} ends soon`,
        summary: `The freeze of ${e.app ?? where(e)} ends at ${at || 'its expiry'}: extend it, or Git wins for every live change`,
        link: linkOf(opts.publicUrl, e, idPage('/freezes', d.freezeId) ?? '/freezes'),
      };
    }
    case 'freeze.interfered':
      return {
        ...base,
        kind: 'freeze.interfered',
        title: `Frozen ${appName(e)} was changed around its freeze`,
        summary: `${appName(e)} in ${where(e)}: ${str(d.message).slice(0, 200) || 'its freeze no longer holds'} (by ${e.actor})`,
        link: linkOf(opts.publicUrl, e, idPage('/freezes', d.freezeId) ?? '/freezes'),
      };
    case 'release.verification': {
      if (str(d.status) !== 'failed') return null;
      const sha = str(d.sha).slice(0, 12);
      return {
        ...base,
        kind: 'release.verification-failed',
        title: `Release of ${appName(e)} failed its verification`,
        summary: `${appName(e)}${sha ? ` at ${sha}` : ''} in ${where(e)} is live but failed its real request check`,
        link: linkOf(opts.publicUrl, e, appPage(e)),
      };
    }
    case 'window.starting-soon': {
      const n = typeof d.apps === 'number' ? d.apps : 0;
      return {
        ...base,
        kind: 'window.starting-soon',
        title: `Freeze window ${str(d.window)} starts soon`,
        summary: `From ${str(d.from)} to ${str(d.until)}, ${n} app${n === 1 ? '' : 's'} in ${where(e)} are frozen: ${str(d.reason).slice(0, 200)}`,
        link: linkOf(opts.publicUrl, e, '/freezes'),
      };
    }
    case 'breakglass.requested': {
      const requester = (d.requester ?? {}) as { person?: unknown };
      return {
        ...base,
        kind: 'breakglass.approval-needed',
        title: `Break-glass for ${appName(e)} waits for a second person`,
        summary: `${e.actor} asks to deploy ${appName(e)} in ${where(e)} through window ${str(d.window)} for ${String(d.minutes ?? '?')} min: ${str(d.reason).slice(0, 200)}`,
        link: linkOf(opts.publicUrl, e, '/freezes'),
        exceptPerson: str(requester.person) || null,
      };
    }
    default:
      return null;
  }
}

export interface Directory {
  users: Array<{ name: string; person: string; grants: readonly Grant[] }>;
  groups: Array<{ group: string; grants: readonly Grant[] }>;
}

const covers = (g: Grant, n: Notification) =>
  (g.clusters.includes('*') || (n.cluster !== null && g.clusters.includes(n.cluster))) &&
  (g.envs.includes('*') || (n.env !== null && g.envs.includes(n.env)));

/**
 * Who hears a notification: accounts and groups with the kind's roles where it happened (admins when nobody has
 * them there), without the excepted person and the people who opted out of the kind.
 */
export function recipientsOf(n: Notification, dir: Directory, optedOut: ReadonlySet<string>): Recipients {
  const pick = (roles: readonly Role[]) => ({
    users: dir.users.filter((u) => u.grants.some((g) => roles.includes(g.role) && covers(g, n))),
    groups: dir.groups.filter((x) => x.grants.some((g) => roles.includes(g.role) && covers(g, n))),
  });
  let found = pick(NOTIFICATION_KIND_INFO[n.kind].roles);
  const anyone = (f: typeof found) => f.users.some((u) => u.person !== n.exceptPerson) || f.groups.length > 0;
  if (!anyone(found)) found = pick(['admin']);
  return {
    users: found.users
      .filter((u) => u.person !== n.exceptPerson && !optedOut.has(u.person))
      .map((u) => u.name)
      .sort(),
    groups: found.groups.map((g) => g.group).sort(),
  };
}

const whoLine = (r: Recipients) =>
  [...r.users.map((u) => `@${u}`), ...r.groups.map((g) => `group ${g}`)].join(', ') || 'nobody';

/** A Slack-compatible incoming-webhook body (`text` is the fallback; `blocks` the message). */
export function slackPayload(n: Notification, r: Recipients): Record<string, unknown> {
  const context = [`For ${whoLine(r)}`, n.cluster ? `${n.cluster}${n.env ? `/${n.env}` : ''}` : null, n.time].filter(
    Boolean,
  );
  return {
    text: `${n.title}: ${n.summary}`,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `*${escapeMrkdwn(n.title)}*\n${escapeMrkdwn(n.summary)}` } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: escapeMrkdwn(context.join(' · ')) }] },
      ...(n.link
        ? [{ type: 'actions', elements: [{ type: 'button', text: { type: 'plain_text', text: 'Open' }, url: n.link }] }]
        : []),
    ],
  };
}

/** The generic JSON body: the notification and its recipients, nothing else. */
export function jsonPayload(n: Notification, r: Recipients): Record<string, unknown> {
  const { exceptPerson: _, ...rest } = n;
  return { ...rest, recipients: r };
}

/** Slack's three control characters, so a name cannot become a link or a mention */
function escapeMrkdwn(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
