// Password hashes: scrypt with a per-user salt, compared in constant time. Each hash carries its cost
// (`scrypt$N$r$p$salt$hash`), so a hash made at an older, lower cost still verifies; a sign-in that proves the
// password re-hashes it at the current cost (checkPassword; accounts.ts saves it).
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** scrypt's cost: N (CPU and memory, a power of 2), r (block size), p (parallelism) */
export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}

/**
 * The cost of every new hash: N = 2^17, r = 8, p = 1 (OWASP's scrypt minimum; RFC 7914's interactive 2^14 is 8
 * times cheaper to guess). 128 MiB and about 0.4–1 s of one core per hash. Hashes of 2^14 (before issue 40) still
 * verify and are re-hashed at the next sign-in.
 */
export const PASSWORD_COST: ScryptCost = { N: 2 ** 17, r: 8, p: 1 };
const KEYLEN = 32;
/** scrypt's working memory: 128·N·r bytes (its V array; B is 128·r·p more) */
const memoryOf = (c: ScryptCost) => 128 * c.N * c.r;
/** the most a stored hash may make one computation use (twice today's cost): a hash asking more is refused */
const MAX_MEMORY = 2 * memoryOf(PASSWORD_COST);

function scrypt(password: string, salt: Buffer, c: ScryptCost): Promise<Buffer> {
  // twice the working memory: room for B and OpenSSL's own accounting, never the 32 MiB default (too small)
  const opts: ScryptOptions = { N: c.N, r: c.r, p: c.p, maxmem: 2 * memoryOf(c) };
  return new Promise((resolve, reject) =>
    scryptCb(password, salt, KEYLEN, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

const format = (c: ScryptCost, salt: string, hash: string) => `scrypt$${c.N}$${c.r}$${c.p}$${salt}$${hash}`;

/** `scrypt$N$r$p$salt$hash` (salt and hash base64url), at `cost` (default PASSWORD_COST; tests: a cheaper one). */
export async function hashPassword(password: string, cost: ScryptCost = PASSWORD_COST): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, cost);
  return format(cost, salt.toString('base64url'), key.toString('base64url'));
}

interface Parsed {
  cost: ScryptCost;
  salt: Buffer;
  hash: Buffer;
}

/** A stored hash, or undefined when it is not one this console computes (another algorithm, a cost out of bounds). */
function parse(stored: string): Parsed | undefined {
  const [alg, n, r, p, salt, hash, ...rest] = stored.split('$');
  if (alg !== 'scrypt' || !n || !r || !p || !salt || !hash || rest.length) return undefined;
  const cost = { N: Number(n), r: Number(r), p: Number(p) };
  const int = (x: number, max: number) => Number.isSafeInteger(x) && x >= 1 && x <= max;
  if (!int(cost.N, 2 ** 30) || (cost.N & (cost.N - 1)) !== 0 || cost.N < 2 || !int(cost.r, 64) || !int(cost.p, 16))
    return undefined;
  if (memoryOf(cost) > MAX_MEMORY) return undefined;
  return { cost, salt: Buffer.from(salt, 'base64url'), hash: Buffer.from(hash, 'base64url') };
}

/** A hash made at less than `cost` in any of N, r and p: the next sign-in re-hashes it. */
export function needsRehash(stored: string, cost: ScryptCost = PASSWORD_COST): boolean {
  const h = parse(stored);
  return !!h && (h.cost.N < cost.N || h.cost.r < cost.r || h.cost.p < cost.p);
}

/**
 * At most 2 scrypt computations at once (128 MiB and ~0.4–1 s each at PASSWORD_COST); a short queue, then `Busy`.
 */
export class Busy extends Error {}
let running = 0;
const queue: Array<() => void> = [];
async function slot<T>(f: () => Promise<T>): Promise<T> {
  if (running >= 2) {
    if (queue.length >= 32) throw new Busy('too many sign-ins at once; try again in a moment');
    await new Promise<void>((r) => queue.push(r)); // the slot is handed over, still counted
  } else running++;
  try {
    return await f();
  } finally {
    const next = queue.shift();
    if (next) next();
    else running--;
  }
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  return slot(() => verify(password, stored));
}

/**
 * The password against a stored hash and, when it matches a hash of lower cost than `rehashAt`, its new hash at
 * that cost (in the same slot: a sign-in never queues twice). Without `rehashAt`, a check only.
 */
export async function checkPassword(
  password: string,
  stored: string,
  rehashAt?: ScryptCost,
): Promise<{ ok: boolean; rehashed?: string }> {
  return slot(async () => {
    if (!(await verify(password, stored))) return { ok: false };
    if (!rehashAt || !needsRehash(stored, rehashAt)) return { ok: true };
    return { ok: true, rehashed: await hashPassword(password, rehashAt) };
  });
}

async function verify(password: string, stored: string): Promise<boolean> {
  const h = parse(stored);
  if (!h) return false;
  const key = await scrypt(password, h.salt, h.cost);
  return key.length === h.hash.length && timingSafeEqual(key, h.hash);
}

/** A password for people to type once: 20 characters from an unambiguous alphabet (~100 bits). */
export function generatePassword(): string {
  const alphabet = 'abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  const bytes = randomBytes(20);
  return [...bytes].map((b) => alphabet[b % alphabet.length]).join('');
}

/** A hash that takes as long to check as a real one at `cost`, for unknown user names (no timing oracle). */
export const dummyHash = (cost: ScryptCost = PASSWORD_COST): string =>
  format(cost, 'AAAAAAAAAAAAAAAAAAAAAA', 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');

/** The cost the configuration asks for (CONSOLE_PASSWORD_SCRYPT_LOG2N: 14–17, default 17 = PASSWORD_COST). */
export const passwordCostOf = (cfg: { passwordScryptLog2N: number }): ScryptCost => ({
  N: 2 ** cfg.passwordScryptLog2N,
  r: PASSWORD_COST.r,
  p: PASSWORD_COST.p,
});
