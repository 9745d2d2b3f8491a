import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { safeNext } from './routes.ts';
import { Accounts } from './accounts.ts';
import { originAllowed, parseCookies } from './guard.ts';
import {
  Busy,
  checkPassword,
  generatePassword,
  hashPassword,
  needsRehash,
  PASSWORD_COST,
  verifyPassword,
} from './passwords.ts';
import { clientKey, RateLimiter } from './rate-limit.ts';
import { SessionStore } from './sessions.ts';
import type { FastifyRequest } from 'fastify';

const user = { name: 'alice', source: 'local' as const, groups: [], grants: [] };

describe('sessions', () => {
  it('expire after the idle time, and after the absolute time even when used', () => {
    const s = new SessionStore(1000, 5000);
    const { id } = s.create(user, 0);
    expect(s.get(id, 900)?.user.name).toBe('alice');
    expect(s.get(id, 1800)?.user.name).toBe('alice'); // touched at 900
    expect(s.get(id, 2801)).toBeUndefined(); // idle > 1000
    const b = s.create(user, 0);
    for (let t = 900; t < 5000; t += 900) expect(s.get(b.id, t)).toBeDefined();
    expect(s.get(b.id, 5001)).toBeUndefined();
  });
  it('keeps only a hash of the id, and revoking tells the streams', () => {
    const s = new SessionStore(60_000, 60_000);
    const { id, session } = s.create(user);
    expect(session.key).not.toBe(id);
    const revoked: string[] = [];
    s.on('revoked', (k) => revoked.push(k));
    s.revokeUser('oidc', 'alice');
    expect(revoked).toEqual([]);
    s.revokeUser('local', 'alice');
    expect(revoked).toEqual([session.key]);
    expect(s.get(id)).toBeUndefined();
    expect(s.get('x'.repeat(200))).toBeUndefined();
  });
});

/** cheap scrypt costs, for everything but the one test of the real cost */
const CHEAP = { N: 1024, r: 8, p: 1 };
const LESS_CHEAP = { N: 2048, r: 8, p: 1 };
const costOf = (hash: string | undefined) => hash?.split('$').slice(0, 4).join('$');
const hashOf = (path: string, name: string) =>
  (JSON.parse(readFileSync(path, 'utf8')) as { users: Array<{ name: string; passwordHash: string }> }).users.find(
    (u) => u.name === name,
  )?.passwordHash;

describe('passwords', () => {
  it('are hashed at scrypt N=2^17, r=8, p=1, the cost stored with the hash; only the right password verifies', async () => {
    expect(PASSWORD_COST).toEqual({ N: 131072, r: 8, p: 1 });
    // the one hash at the real cost (128 MiB: over scrypt's 32 MiB default maxmem, so it is raised with the cost)
    const h = await hashPassword('correct horse battery');
    expect(h).toMatch(/^scrypt\$131072\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(await verifyPassword('correct horse battery', h)).toBe(true);
    const cheap = await hashPassword('correct horse battery', CHEAP);
    expect(cheap).toMatch(/^scrypt\$1024\$8\$1\$/);
    expect(await verifyPassword('correct horse batterY', cheap)).toBe(false);
    expect(await verifyPassword('x', 'md5$abc')).toBe(false);
    expect(generatePassword()).toMatch(/^[a-zA-Z2-9]{20}$/);
    // two hashes at 128 MiB each: 1.8 s on a quiet machine, over 20 s niced beside the integration tier (a fresh
    // clone's CI, 2026-12-07); while it runs it holds the hashing slots the next test needs
  }, 120_000);
  it('a hash of an older cost still verifies and needs a re-hash; a cost no console makes is refused, not computed', async () => {
    const old = await hashPassword('pw', CHEAP);
    expect(await verifyPassword('pw', old)).toBe(true);
    expect(needsRehash(old, LESS_CHEAP)).toBe(true);
    expect(needsRehash(old, CHEAP)).toBe(false);
    expect(needsRehash(await hashPassword('pw', LESS_CHEAP), CHEAP)).toBe(false); // never a downgrade
    // the hashes every console made before (N=2^14) re-hash at the next sign-in
    expect(needsRehash('scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).toBe(
      true,
    );
    expect(await checkPassword('pw', old, LESS_CHEAP)).toEqual({
      ok: true,
      rehashed: expect.stringMatching(/^scrypt\$2048\$8\$1\$/),
    });
    expect(await checkPassword('pw', old)).toEqual({ ok: true }); // no cost given: a check only
    expect(await checkPassword('wrong', old, LESS_CHEAP)).toEqual({ ok: false });
    // 2^30 × 8 × 128 bytes would be 1 TiB of memory: refused at once, as is a cost that is not one
    const started = Date.now();
    for (const bad of ['scrypt$1073741824$8$1$', 'scrypt$1000$8$1$', 'scrypt$16384$0$1$', 'scrypt$16384$8$99$'])
      expect(
        await verifyPassword('pw', `${bad}AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`),
      ).toBe(false);
    expect(Date.now() - started).toBeLessThan(1000);
  });
  it('a sign-in with a hash of an older cost saves its re-hash; a wrong password changes nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'acc-'));
    const path = join(dir, 'auth.json');
    const old = await hashPassword('correct horse battery', CHEAP);
    writeFileSync(path, JSON.stringify({ users: [{ id: 'u-1', name: 'alice', passwordHash: old, grants: [] }] }));
    const a = await Accounts.open(path, () => undefined, { passwordCost: LESS_CHEAP });
    expect(await a.check('alice', 'wrong')).toBeUndefined();
    expect(hashOf(path, 'alice')).toBe(old);
    expect((await a.check('alice', 'correct horse battery'))?.name).toBe('alice');
    const saved = hashOf(path, 'alice');
    expect(costOf(saved)).toBe('scrypt$2048$8$1');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    // the next sign-in checks the new hash (and re-hashes nothing), here and on another replica
    expect((await a.check('alice', 'correct horse battery'))?.name).toBe('alice');
    expect(hashOf(path, 'alice')).toBe(saved);
    const other = await Accounts.open(path, () => undefined, { passwordCost: LESS_CHEAP });
    expect((await other.check('alice', 'correct horse battery'))?.name).toBe('alice');
    // a console at a lower cost never downgrades it
    const lower = await Accounts.open(path, () => undefined, { passwordCost: CHEAP });
    expect((await lower.check('alice', 'correct horse battery'))?.name).toBe('alice');
    expect(hashOf(path, 'alice')).toBe(saved);
  });
  it('a file that cannot be written: the sign-in still succeeds, the old hash is kept, said once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'acc-'));
    const path = join(dir, 'auth.json');
    const old = await hashPassword('pw', CHEAP);
    writeFileSync(path, JSON.stringify({ users: [{ id: 'u-1', name: 'bob', passwordHash: old, grants: [] }] }));
    mkdirSync(`${path}.tmp`); // where the file is written first: a directory, so no write succeeds (even as root)
    const said: string[] = [];
    const a = await Accounts.open(path, (l) => said.push(l), { passwordCost: LESS_CHEAP });
    for (let i = 0; i < 3; i++) expect((await a.check('bob', 'pw'))?.name).toBe('bob');
    expect(hashOf(path, 'bob')).toBe(old);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^The password hash of bob is of an older, lower cost and .* cannot be written/);
    expect(said[0]).not.toContain('pw');
  });
  it('a burst of sign-ins cannot queue unbounded scrypt work: 2 run, 32 wait, the rest are told Busy', async () => {
    const h = await hashPassword('pw', CHEAP);
    const results = await Promise.allSettled(Array.from({ length: 40 }, () => verifyPassword('pw', h)));
    const busy = results.filter((r) => r.status === 'rejected' && r.reason instanceof Busy);
    expect(busy).toHaveLength(6);
    expect(results.filter((r) => r.status === 'fulfilled' && r.value === true)).toHaveLength(34);
  });
  it('first start: one admin with a one-time password, announced once, file 0600', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'acc-'));
    const lines: string[] = [];
    const a = await Accounts.open(join(dir, 'auth.json'), (l) => lines.push(l), { passwordCost: CHEAP });
    const pw = /\n {4}(\S+)\n/.exec(lines.join(''))?.[1] ?? '';
    expect(pw).toHaveLength(20);
    expect(readFileSync(join(dir, 'auth.json'), 'utf8')).not.toContain(pw);
    expect(statSync(join(dir, 'auth.json')).mode & 0o777).toBe(0o600);
    expect((await a.check('admin', pw))?.mustChangePassword).toBe(true);
    expect(await a.check('admin', 'wrong')).toBeUndefined();
    const again = await Accounts.open(join(dir, 'auth.json'), (l) => lines.push(l), { passwordCost: CHEAP });
    expect(lines).toHaveLength(1);
    await again.setPassword('admin', 'a much better password');
    expect(await again.check('admin', pw)).toBeUndefined();
    expect((await again.check('admin', 'a much better password'))?.mustChangePassword).toBe(false);
  });
  it('a broken accounts file is a clear error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'acc-'));
    const p = join(dir, 'auth.json');
    await import('node:fs').then((fs) => fs.writeFileSync(p, '{"users":[{"name":"a b","passwordHash":"x"}]}'));
    await expect(Accounts.open(p)).rejects.toThrow(/invalid accounts file .*users\.0\.name/);
  });
});

describe('rate limiter', () => {
  it('allows the limit per window, then says how long to wait', () => {
    const r = new RateLimiter(3, 60_000);
    expect([1, 2, 3].map(() => r.take('k', 0))).toEqual([undefined, undefined, undefined]);
    expect(r.take('k', 1000)).toBe(59);
    expect(r.take('other', 1000)).toBeUndefined();
    expect(r.take('k', 60_001)).toBeUndefined();
  });
});

describe('rate limiter under attack', () => {
  it('peek does not count; past the key cap the oldest windows go', () => {
    const r = new RateLimiter(2, 60_000, 100);
    r.take('victim', 0);
    expect(r.peek('victim', 0)).toBeUndefined();
    r.take('victim', 0);
    expect(r.peek('victim', 0)).toBe(60);
    for (let i = 0; i < 10_000; i++) r.take(`junk-${i}`, 1);
    expect(r.size).toBeLessThanOrEqual(100);
    expect(r.peek('victim', 2)).toBeUndefined(); // evicted, not grown without bound
  });
  it('keys IPv6 clients by /64 and IPv4 (also mapped) as is', () => {
    expect(clientKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey('::ffff:10.0.0.1')).toBe('10.0.0.1');
    expect(clientKey('10.0.0.1')).toBe('10.0.0.1');
  });
});

describe('request checks', () => {
  const req = (headers: Record<string, string>) =>
    ({ headers: { host: 'console.local:8080', ...headers }, protocol: 'http' }) as unknown as FastifyRequest;
  it('Origin must be the console itself', () => {
    expect(originAllowed(req({ origin: 'http://console.local:8080' }), undefined)).toBe(true);
    expect(originAllowed(req({ origin: 'http://evil.console.local:8080' }), undefined)).toBe(false);
    expect(originAllowed(req({ origin: 'null' }), undefined)).toBe(false);
    expect(originAllowed(req({ 'sec-fetch-site': 'same-site' }), undefined)).toBe(false);
    expect(originAllowed(req({ 'sec-fetch-site': 'same-origin' }), undefined)).toBe(true);
    expect(originAllowed(req({ referer: 'https://evil.example/x' }), undefined)).toBe(false);
    expect(originAllowed(req({ origin: 'https://gitops.example.com' }), 'https://gitops.example.com')).toBe(true);
    expect(originAllowed(req({ origin: 'http://console.local:8080' }), 'https://gitops.example.com')).toBe(false);
  });
  it('cookies parse; the first of duplicates wins', () => {
    expect(parseCookies('a=1; console_session=abc%3D; a=2')).toEqual({ a: '1', console_session: 'abc=' });
    expect(parseCookies(undefined)).toEqual({});
  });
  it('next is a same-origin path only', () => {
    expect(safeNext('/apps/x?th=Degraded')).toBe('/apps/x?th=Degraded');
    for (const bad of ['//evil.example', 'https://evil.example', '/\\evil.example', 'javascript:alert(1)', '', 5])
      expect(safeNext(bad)).toBe('/');
  });
});
