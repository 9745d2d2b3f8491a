import { describe, expect, it } from 'vitest';
import { parseGrant } from './access.ts';
import type { EvidenceEvent } from './evidence.ts';
import {
  jsonPayload,
  notificationOf,
  recipientsOf,
  slackPayload,
  type Directory,
  type Notification,
} from './notifications.ts';

const OPTS = { source: 'https://console.example.com', publicUrl: 'https://console.example.com/' };
const APP = 'nonprod/flux-system/kustomization/digital-human-dev';

function ev(type: string, data: Record<string, unknown>, over: Partial<EvidenceEvent> = {}): EvidenceEvent {
  return {
    seq: 42,
    prevHash: 'p',
    hash: 'h',
    time: '2026-12-02T10:00:00.000Z',
    type: type as EvidenceEvent['type'],
    actor: 'developer',
    app: APP,
    cluster: 'nonprod',
    env: 'dev',
    data,
    ...over,
  };
}

const requested = (plan: string) =>
  ev('prune.requested', {
    previewId: 'p-1',
    plan,
    requester: { name: 'developer', person: 'console:local#dev-id' },
    candidates: [{ object: 'v1/ConfigMap/dev/a', uid: 'u' }, { object: 'v1/ConfigMap/dev/b' }],
    reasons: ['over the limit: a secret-looking reason'],
  });

const user = (name: string, person: string, ...grants: string[]) => ({ name, person, grants: grants.map(parseGrant) });
const DIR: Directory = {
  users: [
    user('developer', 'console:local#dev-id', 'developer', 'reviewer'),
    user('dev-reviewer', 'console:local#dr', 'reviewer@nonprod/dev'),
    user('prod-reviewer', 'console:local#pr', 'reviewer@prod/prod'),
    user('reviewer', 'email:rev@example.com', 'reviewer'),
    user('viewer', 'console:local#v', 'viewer'),
    user('oncall', 'console:local#oc', 'oncall@nonprod'),
    user('admin', 'console:local#a', 'admin'),
  ],
  groups: [
    { group: 'sre', grants: [parseGrant('oncall@prod')] },
    { group: 'dev-approvers', grants: [parseGrant('reviewer@nonprod/dev')] },
  ],
};

describe('notificationOf', () => {
  it('a preview waiting for approval: its link, its count, its requester excepted; no candidate or reason leaves', () => {
    const n = notificationOf(requested('needs-override'), OPTS) as Notification;
    expect(n).toMatchObject({
      kind: 'prune.review-needed',
      id: 'https://console.example.com#42',
      link: 'https://console.example.com/prune-previews/p-1',
      exceptPerson: 'console:local#dev-id',
    });
    expect(n.summary).toBe(
      'developer asks to delete 2 objects of nonprod/flux-system/kustomization/digital-human-dev in nonprod/dev (it needs an override: two approvals)',
    );
    const out = JSON.stringify([
      slackPayload(n, { users: ['x'], groups: [] }),
      jsonPayload(n, { users: [], groups: [] }),
    ]);
    expect(out).not.toContain('ConfigMap/dev/a');
    expect(out).not.toContain('secret-looking');
    expect(out).not.toContain('dev-id');
  });

  it('no notification for a preview with nothing to approve, a passing verification, or other records', () => {
    expect(notificationOf(requested('nothing'), OPTS)).toBeNull();
    expect(notificationOf(requested('unknown'), OPTS)).toBeNull();
    expect(notificationOf(ev('release.verification', { status: 'ok', sha: 'abc' }), OPTS)).toBeNull();
    expect(notificationOf(ev('freeze.started', { freezeId: 'f' }), OPTS)).toBeNull();
  });

  it('a failed verification, a freeze ending soon, an interfered freeze', () => {
    expect(
      notificationOf(ev('release.verification', { status: 'failed', sha: 'abcdef0123456789' }), OPTS),
    ).toMatchObject({
      kind: 'release.verification-failed',
      link: 'https://console.example.com/apps/nonprod/flux-system/kustomization/digital-human-dev',
      summary: `${APP} at abcdef012345 in nonprod/dev is live but failed its real request check`,
    });
    expect(
      notificationOf(ev('freeze.ending-soon', { freezeId: 'f 1', expiresAt: '2026-12-02T10:15:00Z' }), OPTS),
    ).toMatchObject({ kind: 'freeze.ending-soon', link: 'https://console.example.com/freezes/f%201' });
    expect(notificationOf(ev('freeze.interfered', { freezeId: 'f', message: 'resumed directly' }), OPTS)).toMatchObject(
      {
        kind: 'freeze.interfered',
      },
    );
    // without a public URL there is no link
    expect(notificationOf(requested('ready'), { source: 'console' })?.link).toBeNull();
  });
});

describe('recipientsOf', () => {
  const review = notificationOf(requested('ready'), OPTS) as Notification;

  it('reviewers who may approve there, never the requester, a viewer or a reviewer elsewhere', () => {
    expect(recipientsOf(review, DIR, new Set())).toEqual({
      users: ['dev-reviewer', 'reviewer'],
      groups: ['dev-approvers'],
    });
    const prod = notificationOf(requested('ready'), OPTS) as Notification;
    expect(recipientsOf({ ...prod, cluster: 'prod', env: 'prod' }, DIR, new Set()).users).toEqual([
      'prod-reviewer',
      'reviewer',
    ]);
  });

  it('a person who opted out is left out (by person: a renamed account stays out)', () => {
    expect(recipientsOf(review, DIR, new Set(['console:local#dr', 'email:rev@example.com']))).toEqual({
      users: [],
      groups: ['dev-approvers'],
    });
  });

  it('admins hear it when nobody has the role there; the requester is still excepted', () => {
    const dir: Directory = {
      users: [user('developer', 'console:local#dev-id', 'reviewer@nonprod/dev'), user('admin', 'a', 'admin')],
      groups: [],
    };
    expect(recipientsOf(review, dir, new Set())).toEqual({ users: ['admin'], groups: [] });
  });

  it('on-call for freezes, developers and on-call for a failed verification', () => {
    const soon = notificationOf(ev('freeze.ending-soon', { freezeId: 'f' }, { cluster: 'prod', env: 'prod' }), OPTS);
    expect(recipientsOf(soon as Notification, DIR, new Set())).toEqual({ users: [], groups: ['sre'] });
    const failed = notificationOf(ev('release.verification', { status: 'failed' }), OPTS) as Notification;
    expect(recipientsOf(failed, DIR, new Set()).users).toEqual(['developer', 'oncall']);
  });
});

describe('payloads', () => {
  const n = notificationOf(requested('ready'), OPTS) as Notification;
  it('Slack: fallback text, a section, who it is for, an Open button; names cannot become mentions or links', () => {
    const p = slackPayload({ ...n, title: 'Prune of <!channel> & co' }, { users: ['dev-reviewer'], groups: ['g'] });
    expect(p.text).toContain('Prune of <!channel>');
    const blocks = p.blocks as Array<Record<string, unknown>>;
    expect(JSON.stringify(blocks[0])).toContain('Prune of &lt;!channel&gt; &amp; co');
    expect(JSON.stringify(blocks[1])).toContain('For @dev-reviewer, group g');
    expect(blocks[2]).toEqual({
      type: 'actions',
      elements: [{ type: 'button', text: { type: 'plain_text', text: 'Open' }, url: n.link }],
    });
  });
  it('JSON: the notification and its recipients, without the excepted person', () => {
    const p = jsonPayload(n, { users: ['reviewer'], groups: [] });
    expect(p).toMatchObject({ kind: 'prune.review-needed', seq: 42, recipients: { users: ['reviewer'], groups: [] } });
    expect(p).not.toHaveProperty('exceptPerson');
  });
});

describe('planned windows and break-glass (issue 43)', () => {
  it('a window starting within the hour goes to the teams where it freezes apps', () => {
    const n = notificationOf(
      ev(
        'window.starting-soon',
        {
          window: 'release-stop',
          reason: 'year end',
          from: '2026-12-02T11:00:00Z',
          until: '2026-12-02T18:00:00Z',
          apps: 3,
        },
        { app: null, actor: 'console (window release-stop)' },
      ),
      OPTS,
    ) as Notification;
    expect(n).toMatchObject({
      kind: 'window.starting-soon',
      title: 'Freeze window release-stop starts soon',
      summary: 'From 2026-12-02T11:00:00Z to 2026-12-02T18:00:00Z, 3 apps in nonprod/dev are frozen: year end',
      link: 'https://console.example.com/freezes',
    });
    // developers and on-call of nonprod/dev: not the reviewers, not prod's on-call group
    expect(recipientsOf(n, DIR, new Set())).toEqual({ users: ['developer', 'oncall'], groups: [] });
  });

  it('a break-glass waits for on-call there, never for the person who asked', () => {
    const n = notificationOf(
      ev(
        'breakglass.requested',
        {
          breakGlass: 'b-1',
          window: 'release-stop',
          reason: 'CVE hotfix',
          minutes: 15,
          requester: { issuer: 'console:local', subject: 'oc', person: 'console:local#oc' },
        },
        { actor: 'oncall' },
      ),
      OPTS,
    ) as Notification;
    expect(n).toMatchObject({
      kind: 'breakglass.approval-needed',
      summary: `oncall asks to deploy ${APP} in nonprod/dev through window release-stop for 15 min: CVE hotfix`,
      exceptPerson: 'console:local#oc',
    });
    // the only on-call of nonprod asked: the admins hear it
    expect(recipientsOf(n, DIR, new Set())).toEqual({ users: ['admin'], groups: [] });
  });
});
