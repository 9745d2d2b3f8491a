// CONSOLE_PASSWORD_SCRYPT_LOG2N: the production cost by default, never below 2^14 (the test consoles' cost), never
// above 2^17 (scrypt's memory at r=8 would pass the console's maxmem); a console at a cost re-hashes a sign-in's
// hash made at another.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config.ts';
import { Accounts } from './accounts.ts';
import { PASSWORD_COST, passwordCostOf } from './passwords.ts';

const cfg = (v?: string) =>
  loadConfig({ KUBECONFIG: '/dev/null', ...(v ? { CONSOLE_PASSWORD_SCRYPT_LOG2N: v } : {}) }, []);

describe('the password cost setting', () => {
  it('defaults to the production cost; 14–17 accepted; anything else refused at start-up', () => {
    expect(passwordCostOf(cfg())).toEqual(PASSWORD_COST);
    expect(passwordCostOf(cfg('14'))).toEqual({ N: 2 ** 14, r: 8, p: 1 });
    for (const bad of ['13', '18', '16.5', 'low']) expect(() => cfg(bad), bad).toThrow(ConfigError);
  });

  it('a console at 2^14 keeps a 2^14 hash; at 2^15 it re-hashes it at the next sign-in', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pw-cost-'));
    const file = join(dir, 'auth.json');
    const low = { N: 2 ** 14, r: 8, p: 1 };
    const a = await Accounts.open(file, () => undefined, { passwordCost: low });
    await a.addUser('erin', 'correct horse battery staple', [], false);
    const hashOfErin = (): string => {
      const doc = JSON.parse(readFileSync(file, 'utf8')) as { users: Array<{ name: string; passwordHash: string }> };
      return doc.users.find((u) => u.name === 'erin')?.passwordHash ?? '';
    };
    expect(await a.check('erin', 'correct horse battery staple')).toBeDefined();
    expect(hashOfErin()).toMatch(/^scrypt\$16384\$/);
    const b = await Accounts.open(file, () => undefined, { passwordCost: { N: 2 ** 15, r: 8, p: 1 } });
    expect(await b.check('erin', 'correct horse battery staple')).toBeDefined();
    expect(hashOfErin()).toMatch(/^scrypt\$32768\$/);
  });
});
