import { describe, expect, it } from 'vitest';
import { customType, toCDEvent } from './cdevents.ts';
import type { EvidenceEvent } from './evidence.ts';

const ev = (type: EvidenceEvent['type'], data: Record<string, unknown>, over: Partial<EvidenceEvent> = {}) =>
  ({
    seq: 42,
    time: '2026-12-02T10:00:00.000Z',
    type,
    actor: 'console',
    app: 'nonprod/flux-system/render-worker-dev',
    cluster: 'nonprod',
    env: 'dev',
    data,
    prevHash: 'a'.repeat(64),
    hash: 'b'.repeat(64),
    ...over,
  }) as EvidenceEvent;
const opts = { source: 'https://console.example.com', publicUrl: 'https://console.example.com/' };

describe('evidence as CDEvents', () => {
  it('a merged commit is a change.merged with the repository, its id and chain hash in customData', () => {
    const c = toCDEvent(
      ev('release.change', {
        sha: 'c0ffee',
        status: 'ok',
        sourceUrl: 'http://git.example.com/platform/app.git',
        author: { name: 'Dev', email: 'dev@example.com' },
        message: 'Scale up\n\nReviewed-by: someone',
      }),
      opts,
    );
    expect(c?.context).toMatchObject({
      version: '0.4.1',
      id: 'https://console.example.com#42',
      type: 'dev.cdevents.change.merged.0.2.0',
      timestamp: '2026-12-02T10:00:00.000Z',
    });
    expect(c?.subject).toMatchObject({
      id: 'c0ffee',
      type: 'change',
      content: { repository: { id: 'http://git.example.com/platform/app.git' }, environment: { id: 'dev' } },
    });
    expect(c?.customData.evidence).toEqual({ seq: 42, hash: 'b'.repeat(64), type: 'release.change' });
    expect(c?.customData.links?.evidence).toBe(
      'https://console.example.com/evidence?app=nonprod%2Fflux-system%2Frender-worker-dev&type=release.change',
    );
    // nothing but ids, names and states: no e-mail, no commit message
    expect(JSON.stringify(c)).not.toMatch(/dev@example\.com|Reviewed-by|Scale up/);
  });

  it('a healthy release is service.deployed; a failed verification an incident; other states custom types', () => {
    expect(toCDEvent(ev('release.health', { sha: 'c0ffee', status: 'ok' }), opts)?.context.type).toBe(
      'dev.cdevents.service.deployed.0.2.0',
    );
    const inc = toCDEvent(ev('release.verification', { sha: 'c0ffee', status: 'failed', reason: 'HTTP 503' }), opts);
    expect(inc?.context.type).toBe('dev.cdevents.incident.detected.0.2.0');
    expect(inc?.subject.content).toMatchObject({ reason: 'HTTP 503', service: { id: expect.any(String) } });
    expect(toCDEvent(ev('release.health', { sha: 'c0ffee', status: 'failed' }), opts)?.context.type).toBe(
      'dev.cdeventsx.gitopsconsole-release.health.0.1.0',
    );
    expect(toCDEvent(ev('freeze.started', { freezeId: 'f-1', reason: 'incident 42' }), opts)?.subject).toMatchObject({
      id: 'f-1',
      type: 'gitopsconsole-freeze',
      content: { state: 'started', reason: 'incident 42' },
    });
    expect(customType('release.rollback-requested')).toBe(
      'dev.cdeventsx.gitopsconsole-release.rollback-requested.0.1.0',
    );
  });

  it('records sinks do not hear about give null; long reasons are cut; objects and arrays never leave', () => {
    expect(toCDEvent(ev('auth.signed-in', {}), opts)).toBeNull();
    expect(toCDEvent(ev('access.denied', {}), opts)).toBeNull();
    const c = toCDEvent(
      ev('drift.detected', { reason: 'x'.repeat(500), fields: [{ path: 'spec.replicas', live: 3 }], token: 'tok' }),
      opts,
    );
    expect((c?.subject.content.reason as string).length).toBe(200);
    expect(JSON.stringify(c)).not.toMatch(/spec\.replicas|tok"/);
  });
});
