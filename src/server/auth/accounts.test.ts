// People, not names: every local account has a stable id (assigned and saved, kept through renames), and
// identities are one person only when an admin linked them or an issuer verified the account's email.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Accounts, LOCAL_ISSUER } from './accounts.ts';
import { refreshGrants } from './guard.ts';
import { hashPassword } from './passwords.ts';

/** a cheap scrypt cost: these tests are about accounts, not hashing (auth.test.ts hashes at the real cost) */
const CHEAP = { N: 1024, r: 8, p: 1 };
import type { Principal } from './session-types.ts';

const IDP = 'https://login.example.com';
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function file(users: Array<Record<string, unknown>>): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'accounts-'));
  dirs.push(dir);
  const path = join(dir, 'auth.json');
  const passwordHash = await hashPassword('correct horse battery', CHEAP);
  writeFileSync(path, JSON.stringify({ users: users.map((u) => ({ passwordHash, grants: [], ...u })), groups: [] }));
  return path;
}

let edits = 0;
/** Rewrites the file the way an admin edits it (and makes sure the change is seen: a new mtime each time). */
function edit(path: string, change: (f: { users: Array<Record<string, unknown>> }) => void): void {
  const f = JSON.parse(readFileSync(path, 'utf8')) as { users: Array<Record<string, unknown>> };
  change(f);
  writeFileSync(path, JSON.stringify(f));
  const t = new Date(Date.now() + 10_000 + 1000 * ++edits);
  utimesSync(path, t, t);
}

const userOf = (f: string, name: string) =>
  (JSON.parse(readFileSync(f, 'utf8')) as { users: Array<{ name: string; id?: string }> }).users.find(
    (u) => u.name === name,
  );

describe('accounts: ids and people', () => {
  it('an account without an id gets one, saved in the file; it survives a rename, and so does the person', async () => {
    const path = await file([{ name: 'alice' }, { name: 'bob', id: 'bob-1' }]);
    const a = await Accounts.open(path, () => undefined);
    const id = userOf(path, 'alice')?.id ?? '';
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.user('alice')?.id).toBe(id);
    expect(userOf(path, 'bob')?.id).toBe('bob-1');
    const person = a.personOf({ issuer: LOCAL_ISSUER, subject: id });
    expect(person).toBe(`console:local#${id}`);
    edit(path, (f) => {
      const u = f.users.find((x) => x.name === 'alice');
      if (u) u.name = 'alice.smith';
    });
    expect(a.user('alice')).toBeUndefined();
    expect(a.userById(id)?.name).toBe('alice.smith');
    expect(a.personOf({ issuer: LOCAL_ISSUER, subject: id })).toBe(person);
    // an account added by hand later gets its id too
    edit(path, (f) => f.users.push({ ...f.users[0], name: 'carol', id: undefined }));
    expect(a.user('carol')?.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(userOf(path, 'carol')?.id).toBe(a.user('carol')?.id);
  });

  it('a file the console cannot write: names stand in for ids, and it says so', async () => {
    const path = await file([{ name: 'alice' }]);
    // the save goes through <file>.tmp: a directory there makes every write fail (even as root)
    mkdirSync(`${path}.tmp`);
    const said: string[] = [];
    const a = await Accounts.open(path, (l) => said.push(l));
    expect(a.user('alice')?.id).toBe('name.alice');
    expect(userOf(path, 'alice')?.id).toBeUndefined();
    expect(said.join('')).toMatch(/cannot be written.*renamed account is a new person/s);
  });

  it('an SSO identity is a local account’s person when an admin linked it or the issuer verified its email', async () => {
    const path = await file([
      { name: 'alice', id: 'a-1', identities: [{ issuer: IDP, subject: 'alice' }] },
      { name: 'carol', id: 'c-1', email: 'Carol@Example.com' },
      { name: 'dave', id: 'd-1' },
    ]);
    const a = await Accounts.open(path, () => undefined);
    // an admin-made link: the SSO identity is the account's person
    expect(a.personOf({ issuer: IDP, subject: 'alice' })).toBe(a.personOf({ issuer: LOCAL_ISSUER, subject: 'a-1' }));
    // a verified email (oidc.ts passes it only when email_verified is true), any case
    const carol = a.personOf({ issuer: LOCAL_ISSUER, subject: 'c-1' });
    expect(carol).toBe('email:carol@example.com');
    expect(a.personOf({ issuer: IDP, subject: 'c-7', email: 'carol@example.COM' })).toBe(carol);
    // the same subject at another issuer, an unlinked SSO "dave", an unverified (absent) email: other people
    expect(a.personOf({ issuer: 'https://other', subject: 'alice' })).toBe('https://other#alice');
    expect(a.personOf({ issuer: IDP, subject: 'dave' })).not.toBe(a.personOf({ issuer: LOCAL_ISSUER, subject: 'd-1' }));
    expect(a.personOf({ issuer: IDP, subject: 'c-8' })).toBe(`${IDP}#c-8`);
    // two SSO identities with one verified email (and no account) are one person too
    expect(a.personOf({ issuer: IDP, subject: 'x', email: 'x@example.com' })).toBe(
      a.personOf({ issuer: 'https://other', subject: 'y', email: 'X@example.com' }),
    );
  });

  it('an email or a linked identity on two accounts is refused (the last good file is kept)', async () => {
    const path = await file([
      { name: 'alice', id: 'a-1', email: 'a@example.com' },
      { name: 'bob', id: 'b-1' },
    ]);
    const a = await Accounts.open(path, () => undefined);
    edit(path, (f) => {
      const bob = f.users[1] as Record<string, unknown>;
      bob.email = 'A@example.com';
    });
    expect(a.user('bob')?.email).toBeUndefined();
    edit(path, (f) => {
      (f.users[0] as Record<string, unknown>).identities = [{ issuer: IDP, subject: 's' }];
      (f.users[1] as Record<string, unknown>).identities = [{ issuer: IDP, subject: 's' }];
      (f.users[1] as Record<string, unknown>).email = undefined;
    });
    expect(a.user('bob')?.identities).toBeUndefined();
    await expect(
      Accounts.open(
        await file([
          { name: 'x', id: 'same' },
          { name: 'y', id: 'same' },
        ]),
        () => undefined,
      ),
    ).rejects.toThrow(/the id same is also x's/);
    await expect(
      Accounts.open(await file([{ name: 'x', identities: [{ issuer: LOCAL_ISSUER, subject: 'y' }] }]), () => undefined),
    ).rejects.toThrow(/a linked identity is an SSO one/);
  });
});

describe('sessions follow the account and the links', () => {
  it('a local session ends when its account is renamed or gone; an SSO session picks up a new link at once', async () => {
    const path = await file([{ name: 'alice', id: 'a-1', grants: [{ role: 'viewer', clusters: ['*'], envs: ['*'] }] }]);
    const a = await Accounts.open(path, () => undefined);
    const local: Principal = {
      name: 'alice',
      source: 'local',
      issuer: LOCAL_ISSUER,
      subject: 'a-1',
      groups: [],
      grants: [],
    };
    expect(refreshGrants(local, a)).toBe(true);
    expect(local).toMatchObject({ person: 'console:local#a-1', grants: [{ role: 'viewer' }] });
    const sso: Principal = {
      name: 'oidc:alice',
      source: 'oidc',
      issuer: IDP,
      subject: 'alice',
      groups: [],
      idpGroups: ['g'],
      grants: [],
    };
    edit(path, (f) => {
      Object.assign(f, { groups: [{ group: 'g', grants: [{ role: 'viewer', clusters: ['*'], envs: ['*'] }] }] });
    });
    expect(refreshGrants(sso, a)).toBe(true);
    expect(sso.person).toBe(`${IDP}#alice`);
    edit(path, (f) => {
      (f.users[0] as Record<string, unknown>).identities = [{ issuer: IDP, subject: 'alice' }];
    });
    expect(refreshGrants(sso, a)).toBe(true);
    expect(sso.person).toBe('console:local#a-1');
    // an SSO session that does not say which identity it is (stored by an older version) is not served
    expect(refreshGrants({ ...sso, issuer: undefined }, a)).toBe(false);
    edit(path, (f) => {
      (f.users[0] as Record<string, unknown>).name = 'alice2';
    });
    expect(refreshGrants(local, a)).toBe(false);
  });
});
