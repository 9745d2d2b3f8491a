// Password hashes: scrypt with a per-user salt, compared in constant time.
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const N = 16384;
const R = 8;
const P = 1;
const KEYLEN = 32;

function scrypt(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  const opts: ScryptOptions = { N: n, r, p, maxmem: 64 * 1024 * 1024 };
  return new Promise((resolve, reject) =>
    scryptCb(password, salt, KEYLEN, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** `scrypt$N$r$p$salt$hash` (salt and hash base64url). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** At most 2 scrypt computations at once (16 MiB and ~50 ms each); a short queue, then `Busy`. */
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

async function verify(password: string, stored: string): Promise<boolean> {
  const [alg, n, r, p, salt, hash] = stored.split('$');
  if (alg !== 'scrypt' || !n || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await scrypt(password, Buffer.from(salt, 'base64url'), Number(n), Number(r), Number(p));
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** A password for people to type once: 20 characters from an unambiguous alphabet (~100 bits). */
export function generatePassword(): string {
  const alphabet = 'abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  const bytes = randomBytes(20);
  return [...bytes].map((b) => alphabet[b % alphabet.length]).join('');
}

/** A hash that takes as long to check as a real one, for unknown user names (no timing oracle). */
export const DUMMY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
