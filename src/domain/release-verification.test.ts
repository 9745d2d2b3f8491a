// The verification state: its configuration per app or environment, how an answer is judged, body excerpts.
import { describe, expect, it } from 'vitest';
import { excerpt, expectedVersions, judgeVerification, verificationFor } from './release-verification.ts';

const D1 = `sha256:${'1'.repeat(64)}`;
const D2 = `sha256:${'2'.repeat(64)}`;

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
      judgeVerification(spec, { status: 200, body: '{"status":"ok"}', headers: { 'x-image-digest': D1 } }, [D1]).ok,
    ).toBe(true);
  });
  describe('the version header is compared with the release image', () => {
    const spec = { url: 'u', expectStatus: 200, versionHeader: 'X-Image-Digest', timeoutMs: 1000 };
    const answer = (v?: string) => ({
      status: 200,
      body: '',
      headers: (v === undefined ? {} : { 'x-image-digest': v }) as Record<string, string>,
    });
    const images = [{ tag: '1.4.2', resolved: D1 }, { digest: D2 }];
    it('expects the digest Git pins, the digest a tag resolved to, or the tag', () => {
      expect(expectedVersions(images)).toEqual([D1, '1.4.2', D2]);
      // `latest` names no version
      expect(expectedVersions([{ tag: 'latest' }])).toEqual([]);
    });
    it('a matching value passes, and says which', () => {
      expect(judgeVerification(spec, answer(D1), expectedVersions(images))).toEqual({
        ok: true,
        reason: `HTTP 200, X-Image-Digest ${D1}`,
      });
      expect(judgeVerification(spec, answer(` ${D2} `), expectedVersions(images)).ok).toBe(true);
      expect(judgeVerification(spec, answer('1.4.2'), expectedVersions(images)).ok).toBe(true);
      // an image reference is compared by its digest
      expect(judgeVerification(spec, answer(`registry.example.com/app@${D2}`), expectedVersions(images)).ok).toBe(true);
    });
    it('a missing header fails, naming what was expected', () => {
      for (const v of [undefined, '', '  '])
        expect(judgeVerification(spec, answer(v), [D1])).toEqual({
          ok: false,
          reason: `no X-Image-Digest header in the answer, expected ${D1}`,
        });
    });
    it('a wrong value fails, naming both values', () => {
      const old = `sha256:${'9'.repeat(64)}`;
      expect(judgeVerification(spec, answer(old), [D1])).toEqual({
        ok: false,
        reason: `X-Image-Digest is ${old}, expected ${D1} (the release's image)`,
      });
      expect(judgeVerification(spec, answer('1.4.1'), expectedVersions(images)).reason).toBe(
        `X-Image-Digest is 1.4.1, expected ${D1} or 1.4.2 or ${D2} (the release's image)`,
      );
      // a reference to another digest of the same image, or a tag Git does not name
      expect(judgeVerification(spec, answer(`registry.example.com/app@${old}`), [D1]).ok).toBe(false);
      expect(judgeVerification(spec, answer('latest'), expectedVersions([{ tag: 'latest' }])).ok).toBe(false);
    });
    it('with no image to compare with, a present header is unknown, never a pass', () => {
      expect(judgeVerification(spec, answer(D1), [])).toEqual({
        ok: false,
        unknown: true,
        reason: `X-Image-Digest is ${D1}, but the release names no image digest or tag to compare it with`,
      });
      expect(judgeVerification(spec, answer(undefined), []).unknown).toBeUndefined();
    });
  });
  it('keeps body excerpts short and printable', () => {
    expect(excerpt('a\u0000b'.padEnd(500, 'x'))).toHaveLength(201);
    expect(excerpt('a\u0000b')).toBe('ab');
  });
});
