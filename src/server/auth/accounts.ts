// Local accounts and role grants: one JSON file (default <dataDir>/auth.json,
// mode 0600). On first start it holds one admin whose one-time password is
// printed once to stdout and must be changed at the first sign-in.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { ROLES, type Grant } from '../../domain/access.ts';
import { DUMMY_HASH, generatePassword, hashPassword, verifyPassword } from './passwords.ts';

const GrantSchema = z.object({
  role: z.enum(ROLES),
  clusters: z.array(z.string().min(1)).min(1).default(['*']),
  envs: z.array(z.string().min(1)).min(1).default(['*']),
});

const UserSchema = z.object({
  name: z.string().regex(/^[a-zA-Z0-9._@-]{1,64}$/, 'user names are 1–64 of a-z A-Z 0-9 . _ @ -'),
  passwordHash: z.string().startsWith('scrypt$'),
  grants: z.array(GrantSchema).default([]),
  mustChangePassword: z.boolean().default(false),
});

export const AuthFileSchema = z.object({
  users: z.array(UserSchema).default([]),
  /** OIDC (and local) groups → grants */
  groups: z.array(z.object({ group: z.string().min(1), grants: z.array(GrantSchema) })).default([]),
});
export type AuthFile = z.infer<typeof AuthFileSchema>;
export type LocalUser = z.infer<typeof UserSchema>;

export class Accounts {
  private data: AuthFile;

  private constructor(
    readonly path: string,
    data: AuthFile,
  ) {
    this.data = data;
  }

  /**
   * Loads the file, or creates it with a first-start admin. The one-time password is
   * written to `announce` (stdout by default) exactly once and never kept in clear.
   */
  private static read(path: string): AuthFile {
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(path, 'utf8'));
    } catch (e) {
      throw new Error(`cannot read the accounts file ${path}: ${e instanceof Error ? e.message : String(e)}`);
    }
    const parsed = AuthFileSchema.safeParse(raw);
    if (!parsed.success)
      throw new Error(
        `invalid accounts file ${path}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    return parsed.data;
  }

  private mtime = 0;

  /** Picks up edits of the file (e.g. `npm run cli -- user add`) without a restart; a broken edit keeps the last good one. */
  private refresh(): void {
    try {
      const m = statSync(this.path).mtimeMs;
      if (m === this.mtime) return;
      this.data = Accounts.read(this.path);
      this.mtime = m;
    } catch {
      /* keep what we have */
    }
  }

  static async open(path: string, announce: (line: string) => void = (l) => process.stdout.write(l)) {
    if (existsSync(path)) {
      const a = new Accounts(path, Accounts.read(path));
      a.mtime = statSync(path).mtimeMs;
      return a;
    }
    const password = generatePassword();
    const data: AuthFile = {
      users: [
        {
          name: 'admin',
          passwordHash: await hashPassword(password),
          grants: [{ role: 'admin', clusters: ['*'], envs: ['*'] }],
          mustChangePassword: true,
        },
      ],
      groups: [],
    };
    const a = new Accounts(path, data);
    a.save();
    announce(
      `\nFirst start: created the local account "admin" with the one-time password\n\n    ${password}\n\n` +
        `It is shown only now and must be changed at the first sign-in. Accounts live in ${path}.\n\n`,
    );
    return a;
  }

  private save(): void {
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const tmp = `${this.path}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(this.data, null, 2)}\n`, { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, this.path);
    this.mtime = statSync(this.path).mtimeMs;
  }

  user(name: string): LocalUser | undefined {
    this.refresh();
    return this.data.users.find((u) => u.name === name);
  }

  /** The user when the password matches; the same work is done for unknown names. */
  async check(name: string, password: string): Promise<LocalUser | undefined> {
    const u = this.user(name);
    const ok = await verifyPassword(password, u?.passwordHash ?? DUMMY_HASH);
    return ok && u ? u : undefined;
  }

  async setPassword(name: string, password: string): Promise<void> {
    const u = this.user(name);
    if (!u) throw new Error(`no user ${name}`);
    u.passwordHash = await hashPassword(password);
    u.mustChangePassword = false;
    this.save();
  }

  async addUser(name: string, password: string, grants: Grant[], mustChangePassword = true): Promise<void> {
    if (this.user(name)) throw new Error(`user ${name} exists`);
    this.data.users.push(
      UserSchema.parse({ name, passwordHash: await hashPassword(password), grants, mustChangePassword }),
    );
    this.save();
  }

  /** Grants for a set of groups (OIDC groups claim, or a local user's own grants plus none). */
  grantsForGroups(groups: readonly string[]): Grant[] {
    this.refresh();
    return this.data.groups.filter((g) => groups.includes(g.group)).flatMap((g) => g.grants);
  }
}
