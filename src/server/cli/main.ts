// npm run cli -- diff <cluster>/<namespace>/<app>: the same field diff the console shows, with owners (cli/diff.ts)
// npm run cli -- user add <name> --grant …: a local account with a one-time password
// npm run cli -- evidence verify|public-key: an export verified offline (cli/evidence.ts)
// Each command's module is loaded only when it runs: `evidence` and `user` start without the Kubernetes client.
import { join } from 'node:path';
import { formatGrant, parseGrant, type Grant } from '../../domain/access.ts';
import { Accounts, generatePassword, passwordCostOf } from '../auth/index.ts';
import { loadConfig } from '../config.ts';

/** `user add <name> [--grant role[@cluster[/env]]]...`: a local account with a one-time password, printed once. */
async function users(argv: string[]): Promise<number> {
  const [sub, name, ...rest] = argv;
  const grants: Grant[] = [];
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === '--grant' && rest[i + 1]) grants.push(parseGrant(String(rest[++i])));
    else throw new Error(`unexpected argument ${rest[i]}`);
  }
  if (sub !== 'add' || !name) {
    process.stderr.write('usage: npm run cli -- user add <name> --grant role[@cluster[/env]] [--grant …]\n');
    return 2;
  }
  const cfg = loadConfig(process.env, []);
  const accounts = await Accounts.open(cfg.authFile ?? join(cfg.dataDir, 'auth.json'), undefined, {
    passwordCost: passwordCostOf(cfg),
  });
  const password = generatePassword();
  await accounts.addUser(name, password, grants, true);
  process.stdout.write(
    `user ${name} (${grants.map(formatGrant).join(', ') || 'no roles'}); one-time password, shown once:\n\n    ${password}\n\n` +
      'It must be changed at the first sign-in. A running console reads new accounts at sign-in.\n',
  );
  return 0;
}
async function main(argv: string[]): Promise<number> {
  const [cmd, target] = argv;
  if (cmd === 'user') return users(argv.slice(1));
  if (cmd === 'evidence') return (await import('./evidence.ts')).evidenceCli(argv.slice(1));
  if (cmd !== 'diff' || !target || target.split('/').length !== 3) {
    process.stderr.write(
      'usage: npm run cli -- diff <cluster>/<namespace>/<app>\n       npm run cli -- user add <name> --grant role[@cluster[/env]]\n       npm run cli -- evidence verify <export.jsonl> [--public-key <file> --checkpoints <file>]\n       npm run cli -- evidence public-key\n',
    );
    return 2;
  }
  return (await import('./diff.ts')).diffCli(target);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(2);
  },
);
