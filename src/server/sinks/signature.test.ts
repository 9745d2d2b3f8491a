// A receiver's side of the signature: someone who changes a delivery, signs with another secret, or replays an
// old one is refused.
import { describe, expect, it } from 'vitest';
import { signBody, verifySignature } from './signature.ts';

const SECRET = 'a-test-secret-of-32-characters!!';
const body = '{"context":{"id":"c#1"}}';
const now = 1_800_000_000;

describe('delivery signatures', () => {
  it('the signature of the body as sent verifies', () => {
    expect(verifySignature(SECRET, body, signBody(SECRET, body, now), now)).toBe(true);
  });

  it('an edited body, another secret, an old time or an edited time are refused', () => {
    const sig = signBody(SECRET, body, now);
    expect(verifySignature(SECRET, body.replace('c#1', 'c#2'), sig, now)).toBe(false);
    expect(verifySignature(SECRET, body, signBody('another-secret-of-32-characters!', body, now), now)).toBe(false);
    expect(verifySignature(SECRET, body, sig, now + 301)).toBe(false);
    expect(verifySignature(SECRET, body, sig.replace(`t=${now}`, `t=${now + 10}`), now + 10)).toBe(false);
    expect(verifySignature(SECRET, body, 'v1=deadbeef', now)).toBe(false);
  });
});
