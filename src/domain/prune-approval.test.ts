import { describe, expect, it } from 'vitest';
import {
  controllerIdentities,
  isIdentityKey,
  decodeEntry,
  encodeEntry,
  isGoverned,
  pendingDeletionsMatch,
  staleReason,
  type ApprovalEntry,
} from './prune-approval.ts';

const entry: ApprovalEntry = {
  preview: 'p1',
  snapshot: '0123456789abcdef',
  object: 'nonprod/core/ConfigMap/dev/a',
  ref: { group: '', version: 'v1', kind: 'ConfigMap', namespace: 'dev', name: 'a' },
  app: 'nonprod/flux-system/kustomization/web',
  observed: 'main@sha1:0',
  expires: '2030-01-01T00:00:00.000Z',
  at: '2029-12-31T23:00:00.000Z',
};
const live = (uid: string, extra: Record<string, unknown> = {}) => ({ metadata: { name: 'a', uid, ...extra } });

describe('approval entries', () => {
  it('round-trip; anything else is not an entry', () => {
    expect(decodeEntry(encodeEntry(entry))).toEqual(entry);
    expect(decodeEntry('approved')).toBeUndefined();
    expect(decodeEntry('{}')).toBeUndefined();
    expect(decodeEntry(JSON.stringify({ ...entry, expires: 'soon' }))).toBeUndefined();
    expect(decodeEntry(JSON.stringify({ ...entry, ref: { kind: 'ConfigMap' } }))).toBeUndefined();
  });

  it('stand while the preview is executing or done, the object live with its uid and not lapsed', () => {
    const now = Date.parse('2029-12-31T23:30:00Z');
    const at = (o: Partial<Parameters<typeof staleReason>[1]>) =>
      staleReason(entry, {
        now,
        preview: { status: 'done' },
        live: live('u1'),
        uid: 'u1',
        revisionObserved: 'main@sha1:0',
        ...o,
      });
    expect(at({})).toBeUndefined();
    expect(at({ preview: { status: 'executing' } })).toBeUndefined();
    // another console's preview: it stands (it lapses)
    expect(at({ preview: undefined })).toBeUndefined();
    expect(at({ revisionObserved: undefined })).toBeUndefined();
    expect(at({ now: Date.parse(entry.expires) })).toBe('the approval lapsed at 2030-01-01T00:00:00.000Z');
    expect(at({ preview: { status: 'failed' } })).toBe('its preview is failed');
    expect(at({ live: undefined })).toBe('the object is gone (pruned)');
    expect(at({ live: live('u2') })).toMatch(/another one has its name now/);
    expect(at({ live: live('u1', { deletionTimestamp: '2029-12-31T23:29:00Z' }) })).toMatch(/being deleted/);
    expect(at({ revisionObserved: 'main@sha1:9' })).toMatch(/survived the controller's reconcile of main@sha1:9/);
  });
});

describe('governed namespaces', () => {
  it('only the label value "true" governs', () => {
    expect(isGoverned({ metadata: { labels: { 'gitops-console.dev/governed': 'true' } } })).toBe(true);
    expect(isGoverned({ metadata: { labels: { 'gitops-console.dev/governed': 'yes' } } })).toBe(false);
    expect(isGoverned({ metadata: {} })).toBe(false);
    expect(isGoverned(undefined)).toBe(false);
  });
});

describe('controller identities', () => {
  it('tenant namespaces: governed or labelled, of Flux objects naming an account, of Argo CD impersonation; controllers and kube-system left out', () => {
    const ids = controllerIdentities({
      namespaces: [
        { metadata: { name: 'prod', labels: { 'gitops-console.dev/governed': 'true' } } },
        { metadata: { name: 'team-b', labels: { 'gitops-console.dev/tenant': 'true' } } },
        { metadata: { name: 'default' } },
      ],
      kustomizations: [
        { metadata: { name: 't', namespace: 'dev' }, spec: { serviceAccountName: 'team' } },
        { metadata: { name: 'i', namespace: 'flux-system' }, spec: { serviceAccountName: 'infra' } },
      ],
      helmReleases: [
        { metadata: { name: 'h', namespace: 'dev' }, spec: { serviceAccountName: 'team' } },
        { metadata: { name: 'eso', namespace: 'external-secrets' }, spec: {} },
        { metadata: { name: 'cni', namespace: 'kube-system' }, spec: { serviceAccountName: 'installer' } },
      ],
      // a HelmRelease impersonating no one in an operator's namespace, and kube-system: never listed
      appProjects: [
        {
          metadata: { name: 'p' },
          spec: {
            destinationServiceAccounts: [
              { server: 'https://a.example', namespace: 'web-?', defaultServiceAccount: 'sync' },
              { namespace: '!never', defaultServiceAccount: 'nobody' },
              { namespace: 'payments', defaultServiceAccount: 'deployer' },
              { namespace: '*', defaultServiceAccount: 'ops:deployer' },
              // a brace pattern is a pattern: never a key
              { namespace: '{a,b}', defaultServiceAccount: 'deployer' },
            ],
          },
        },
      ],
      applications: [
        {
          metadata: { name: 'x' },
          spec: { project: 'p', destination: { server: 'https://a.example', namespace: 'web-1' } },
        },
        {
          metadata: { name: 'y' },
          spec: { project: 'p', destination: { server: 'https://b.example', namespace: 'web-2' } },
        },
        {
          metadata: { name: 'z' },
          spec: { project: 'q', destination: { server: 'https://a.example', namespace: 'web-3' } },
        },
      ],
    });
    expect([...ids.keys()].sort()).toEqual(['ns.dev', 'ns.ops', 'ns.payments', 'ns.prod', 'ns.team-b', 'ns.web-1']);
    expect(ids.get('ns.dev')).toBe('Kustomization dev/t spec.serviceAccountName team');
    expect(ids.get('ns.prod')).toBe('a governed namespace');
    expect(isIdentityKey('ns.dev')).toBe(true);
    // written by consoles before issue 40: still an identity key, so the next sync removes it
    expect(isIdentityKey('sa.dev.team')).toBe(true);
    expect(isIdentityKey('5b0c5a0e-1f7e-4d55-9f5e-0d9c7f0e0a11')).toBe(false);
  });
});

describe("Argo CD's pending deletions", () => {
  const app = (...pending: Array<[string, string, string]>) => ({
    status: {
      resources: [
        ...pending.map(([group, kind, name]) => ({ group, kind, namespace: 'dev', name, requiresPruning: true })),
        { group: '', kind: 'Service', namespace: 'dev', name: 'kept' },
      ],
    },
  });
  it('exactly the approved set, else both differences', () => {
    expect(pendingDeletionsMatch(app(['', 'ConfigMap', 'a']), ['/ConfigMap/dev/a']).ok).toBe(true);
    expect(
      pendingDeletionsMatch(app(['', 'ConfigMap', 'a'], ['apps', 'Deployment', 'w']), ['/ConfigMap/dev/a']),
    ).toEqual({
      ok: false,
      pending: ['/ConfigMap/dev/a', 'apps/Deployment/dev/w'],
      notApproved: ['apps/Deployment/dev/w'],
      notPending: [],
    });
    expect(pendingDeletionsMatch(app(), ['/ConfigMap/dev/a'])).toMatchObject({
      ok: false,
      notPending: ['/ConfigMap/dev/a'],
    });
  });
});
