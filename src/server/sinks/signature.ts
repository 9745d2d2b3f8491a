// A delivery's signature: HMAC-SHA256 over "<unix seconds>.<body>" with the sink's secret, sent as
// `X-Console-Signature: t=<unix seconds>,v1=<hex>` (the time inside the MAC: a captured delivery replayed later
// carries an old time). Receivers recompute it; `verifySignature` is what a receiver does.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-console-signature';

export function signBody(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

/** true when `header` is a valid signature of `body` made within `toleranceS` of `nowS` */
export function verifySignature(secret: string, body: string, header: string, nowS: number, toleranceS = 300): boolean {
  const t = /(?:^|,)t=(\d+)/.exec(header)?.[1];
  const v1 = /(?:^|,)v1=([0-9a-f]{64})/.exec(header)?.[1];
  if (!t || !v1) return false;
  if (Math.abs(nowS - Number(t)) > toleranceS) return false;
  const want = Buffer.from(signBody(secret, body, Number(t)).split('v1=')[1] ?? '', 'hex');
  const got = Buffer.from(v1, 'hex');
  return want.length === got.length && timingSafeEqual(want, got);
}
