// The verification state: its configuration per app or environment, how an answer is judged, body excerpts.
import { describe, expect, it } from 'vitest';
import { excerpt, judgeVerification, verificationFor } from './release-verification.ts';

const D1 = `sha256:${'1'.repeat(64)}`;

describe('verification', () => {
  const cfg = {
    'nonprod/dev': { url: 'http://127.0.0.1:1/', expectStatus: 200 },
    'nonprod/flux-system/kustomization/special': { url: 'http://x/', bodyMatch: 'ok', timeoutMs: 10 },
  };
  it('is configured per app id first, else per cluster/env', () => {
    expect(
      verificationFor(cfg, { id: 'nonprod/flux-system/kustomization/special', cluster: 'nonprod', env: 'dev' }),
    ).toEqual({
      url: 'http://x/',
      expectStatus: 200,
      bodyMatch: 'ok',
      timeoutMs: 100,
    });
    expect(verificationFor(cfg, { id: 'other', cluster: 'nonprod', env: 'dev' })?.url).toBe('http://127.0.0.1:1/');
    expect(verificationFor(cfg, { id: 'other', cluster: 'prod', env: 'prod' })).toBeUndefined();
  });
  it('no answer is a failure; status, body and version header are checked', () => {
    const spec = {
      url: 'u',
      expectStatus: 200,
      bodyMatch: '"status":"ok"',
      versionHeader: 'X-Image-Digest',
      timeoutMs: 1000,
    };
    expect(judgeVerification(spec, { error: 'ECONNREFUSED' })).toEqual({
      ok: false,
      reason: 'no answer: ECONNREFUSED',
    });
    expect(judgeVerification(spec, { status: 503 }).ok).toBe(false);
    expect(judgeVerification(spec, { status: 200, body: '{"status":"down"}' }).reason).toMatch(/body does not match/);
    expect(judgeVerification(spec, { status: 200, body: '{"status":"ok"}', headers: {} }).reason).toMatch(
      /X-Image-Digest/,
    );
    expect(
      judgeVerification(spec, { status: 200, body: '{"status":"ok"}', headers: { 'x-image-digest': D1 } }).ok,
    ).toBe(true);
  });
  it('keeps body excerpts short and printable', () => {
    expect(excerpt('a\u0000b'.padEnd(500, 'x'))).toHaveLength(201);
    expect(excerpt('a\u0000b')).toBe('ab');
  });
});
