// A generated docs page (scripts/gen-api-docs.ts, scripts/gen-config-docs.ts): written, or with `--check` compared
// with the checked-in file (exit 1 when it is out of date, naming the command that writes it again).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export function writeOrCheckPage(root: string, out: string, text: string, command: string): void {
  const file = join(root, out);
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(file, 'utf8');
    } catch {
      // missing: differs
    }
    if (current !== text) {
      console.error(`${out} is out of date: run ${command}`);
      process.exit(1);
    }
    return;
  }
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  console.log(`wrote ${out} (${text.split('\n').length - 1} lines)`);
}
