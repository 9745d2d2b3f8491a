// Local accounts and role grants: one JSON file (default <dataDir>/auth.json,
// mode 0600). On first start it holds one admin whose one-time password is
// printed once to stdout and must be changed at the first sign-in.
// Who is the same person (personOf): every local account has a stable id (assigned and saved when absent, kept
// through renames); an account may name its email (an SSO identity whose issuer verified that address is the
// same person) and the SSO identities an admin linked to it (issuer + subject).
// Password hashes are made at passwords.ts PASSWORD_COST; a sign-in with a hash of a lower cost saves its re-hash.
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { ROLES, type Grant } from '../../domain/access.ts';
import {
  checkPassword,
  dummyHash,
  generatePassword,
  hashPassword,
  PASSWORD_COST,
  type ScryptCost,
} from './passwords.ts';

const GrantSchema = z.object({
  role: z.enum(ROLES),
  clusters: z.array(z.string().min(1)).min(1).default(['*']),
  envs: z.array(z.string().min(1)).min(1).default(['*']),
});

/** The issuer of local accounts (their subject is the account id). */
export const LOCAL_ISSUER = 'console:local';
/** The first start's one-time admin password, beside the accounts file, outside sandbox mode (never in a log). */
export const INITIAL_PASSWORD_FILE = 'initial-admin-password';

const LinkSchema = z.object({
  issuer: z
    .string()
    .min(1)
    .refine((i) => i !== LOCAL_ISSUER, 'a linked identity is an SSO one (another issuer than console:local)'),
  subject: z.string().min(1),
});

const UserSchema = z.object({
  /** stable across renames; assigned (and saved) when the file has none */
  id: z
    .string()
    .regex(/^[A-Za-z0-9._:-]{1,100}$/, 'account ids are 1–100 of a-z A-Z 0-9 . _ : -')
    .optional(),
  name: z.string().regex(/^[a-zA-Z0-9._@-]{1,64}$/, 'user names are 1–64 of a-z A-Z 0-9 . _ @ -'),
  /** an address the admin vouches for: an SSO identity whose issuer verified it is this person */
  email: z
    .string()
    .regex(/^[^\s@]+@[^\s@]+$/, 'not an email address')
    .max(254)
    .optional(),
  /** SSO identities (issuer + subject) an admin linked to this account: the same person */
  identities: z.array(LinkSchema).optional(),
  passwordHash: z.string().startsWith('scrypt$'),
  grants: z.array(GrantSchema).default([]),
  mustChangePassword: z.boolean().default(false),
});

export const AuthFileSchema = z
  .object({
    users: z.array(UserSchema).default([]),
    /** OIDC (and local) groups → grants */
    groups: z.array(z.object({ group: z.string().min(1), grants: z.array(GrantSchema) })).default([]),
  })
  .superRefine((f, ctx) => {
    // one account per id, per email and per linked identity: a person is never two accounts' at once
    const seen = new Map<string, string>();
    const once = (key: string, name: string, what: string, i: number) => {
      const other = seen.get(key);
      if (other !== undefined && other !== name)
        ctx.addIssue({ code: 'custom', path: ['users', i], message: `${what} is also ${other}'s` });
      seen.set(key, name);
    };
    f.users.forEach((u, i) => {
      if (f.users.findIndex((x) => x.name === u.name) !== i)
        ctx.addIssue({ code: 'custom', path: ['users', i, 'name'], message: `user ${u.name} is listed twice` });
      if (u.id) once(`id ${u.id}`, u.name, `the id ${u.id}`, i);
      if (u.email) once(`email ${u.email.toLowerCase()}`, u.name, `the email ${u.email}`, i);
      for (const l of u.identities ?? [])
        once(`link ${l.issuer}#${l.subject}`, u.name, `the identity ${l.subject} of ${l.issuer}`, i);
    });
  });
export type AuthFile = z.infer<typeof AuthFileSchema>;
export type LocalUser = z.infer<typeof UserSchema> & { id: string };

/** An identity as a sign-in proved it (OIDC: `iss`, `sub`, and the email only when the issuer verified it). */
export interface ProvenIdentity {
  issuer: string;
  subject: string;
  email?: string | undefined;
}

const personOfEmail = (email: string) => `email:${email.toLowerCase()}`;

export class Accounts {
  private data: AuthFile;

  /** the accounts whose re-hash could not be saved (a read-only file): not tried again by this process */
  private readonly unsaved = new Set<string>();

  private constructor(
    readonly path: string,
    data: AuthFile,
    /** the cost of the hashes it makes (tests: a cheaper one) */
    private readonly cost: ScryptCost,
    private readonly warn: (line: string) => void,
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
      this.assignIds();
    } catch {
      /* keep what we have */
    }
  }

  /**
   * Gives every account without an id a new one and saves the file: the id is who the account is from then on
   * (through renames). A file the console cannot write (mounted read-only) gets ids derived from the names
   * instead — stable while the names are, so add ids to such a file to keep people through renames.
   */
  private assignIds(warn?: (line: string) => void): void {
    const missing = this.data.users.filter((u) => !u.id);
    if (!missing.length) return;
    for (const u of missing) u.id = randomUUID();
    try {
      this.save();
    } catch (e) {
      for (const u of missing) u.id = `name.${u.name}`;
      warn?.(
        `Accounts in ${this.path} have no ids and the file cannot be written (${e instanceof Error ? e.message : String(e)}): ` +
          'their names stand in for ids, so a renamed account is a new person. Add an "id" to each account.\n',
      );
    }
  }

  /**
   * `passwordFile`: where the first-start admin's one-time password goes instead of `announce` (a file of mode
   * 0600, removed when that password is changed): a console in a cluster logs to stdout, and a password must never
   * be in a log (issue 40). Sandbox mode prints it to the terminal that ran `npm start`.
   */
  static async open(
    path: string,
    announce: (line: string) => void = (l) => process.stdout.write(l),
    opts: { passwordCost?: ScryptCost; passwordFile?: string } = {},
  ) {
    const cost = opts.passwordCost ?? PASSWORD_COST;
    if (existsSync(path)) {
      const a = new Accounts(path, Accounts.read(path), cost, announce);
      a.mtime = statSync(path).mtimeMs;
      a.assignIds(announce);
      return a;
    }
    const password = generatePassword();
    const data: AuthFile = {
      users: [
        {
          id: randomUUID(),
          name: 'admin',
          passwordHash: await hashPassword(password, cost),
          grants: [{ role: 'admin', clusters: ['*'], envs: ['*'] }],
          mustChangePassword: true,
        },
      ],
      groups: [],
    };
    const a = new Accounts(path, data, cost, announce);
    a.save();
    if (opts.passwordFile) {
      mkdirSync(dirname(opts.passwordFile), { recursive: true, mode: 0o700 });
      writeFileSync(opts.passwordFile, `${password}\n`, { mode: 0o600 });
      chmodSync(opts.passwordFile, 0o600);
      announce(
        `First start: created the local account "admin"; its one-time password is in ${opts.passwordFile} ` +
          '(mode 0600; read it once, e.g. kubectl exec; it is removed when the password is changed, which the first ' +
          `sign-in requires). Accounts live in ${path}.\n`,
      );
    } else
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
    return this.data.users.find((u): u is LocalUser => u.name === name && !!u.id);
  }

  /** The account with this stable id (whatever it is called now). */
  userById(id: string): LocalUser | undefined {
    this.refresh();
    return this.data.users.find((u): u is LocalUser => u.id === id);
  }

  /**
   * The person behind an identity. A local account: its email when the admin set one, else the account itself.
   * An SSO identity: the account an admin linked it to, else its verified email (so it is the local account with
   * that email, and any other SSO identity with it), else the identity itself (`<issuer>#<subject>`).
   * Linking only ever makes two identities one person — it grants nothing.
   */
  personOf(who: ProvenIdentity): string {
    this.refresh();
    if (who.issuer === LOCAL_ISSUER) {
      const u = this.data.users.find((x) => x.id === who.subject);
      return u?.email ? personOfEmail(u.email) : `${LOCAL_ISSUER}#${who.subject}`;
    }
    const linked = this.data.users.find((u) =>
      (u.identities ?? []).some((l) => l.issuer === who.issuer && l.subject === who.subject),
    );
    if (linked?.id) return this.personOf({ issuer: LOCAL_ISSUER, subject: linked.id });
    return who.email ? personOfEmail(who.email) : `${who.issuer}#${who.subject}`;
  }

  /**
   * The user when the password matches; the same work is done for unknown names. A match with a hash of a lower
   * cost than the console's saves the password's new hash (once per process when the file cannot be written).
   */
  async check(name: string, password: string): Promise<LocalUser | undefined> {
    const u = this.user(name);
    const stored = u?.passwordHash ?? dummyHash(this.cost);
    const r = await checkPassword(password, stored, u && this.unsaved.has(u.id) ? undefined : this.cost);
    if (!r.ok || !u) return undefined;
    if (r.rehashed) this.saveRehash(u.id, stored, r.rehashed);
    return u;
  }

  /** The account's new hash, unless its hash changed meanwhile (an edit, a new password). */
  private saveRehash(id: string, old: string, hash: string): void {
    this.refresh();
    const cur = this.data.users.find((x) => x.id === id);
    if (!cur || cur.passwordHash !== old) return;
    cur.passwordHash = hash;
    try {
      this.save();
    } catch (e) {
      cur.passwordHash = old;
      this.unsaved.add(id);
      this.warn(
        `The password hash of ${cur.name} is of an older, lower cost and ${this.path} cannot be written ` +
          `(${e instanceof Error ? e.message : String(e)}): it is kept as it is. A password changed in the console ` +
          'is stored at the current cost.\n',
      );
    }
  }

  async setPassword(name: string, password: string): Promise<void> {
    const u = this.user(name);
    if (!u) throw new Error(`no user ${name}`);
    u.passwordHash = await hashPassword(password, this.cost);
    u.mustChangePassword = false;
    this.save();
    // the first start's one-time password (Accounts.open passwordFile) is spent once the admin chose their own
    if (name === 'admin') rmSync(join(dirname(this.path), INITIAL_PASSWORD_FILE), { force: true });
  }

  async addUser(name: string, password: string, grants: Grant[], mustChangePassword = true): Promise<void> {
    if (this.user(name)) throw new Error(`user ${name} exists`);
    this.data.users.push(
      UserSchema.parse({
        id: randomUUID(),
        name,
        passwordHash: await hashPassword(password, this.cost),
        grants,
        mustChangePassword,
      }),
    );
    this.save();
  }

  /** Every account (its name, person and grants) and every group's grants: who a notification may reach. */
  directory(): {
    users: Array<{ name: string; person: string; grants: Grant[] }>;
    groups: Array<{ group: string; grants: Grant[] }>;
  } {
    this.refresh();
    return {
      users: this.data.users
        .filter((u): u is LocalUser => !!u.id)
        .map((u) => ({
          name: u.name,
          // personOf's local rule, without its file check once per account (refreshed once above)
          person: u.email ? personOfEmail(u.email) : `${LOCAL_ISSUER}#${u.id}`,
          grants: u.grants,
        })),
      groups: this.data.groups.map((g) => ({ group: g.group, grants: g.grants })),
    };
  }

  /** Grants for a set of groups (OIDC groups claim, or a local user's own grants plus none). */
  grantsForGroups(groups: readonly string[]): Grant[] {
    this.refresh();
    return this.data.groups.filter((g) => groups.includes(g.group)).flatMap((g) => g.grants);
  }
}
