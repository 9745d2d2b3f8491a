// npm run chaos [-- --cells row/fault/point,…] [--json file]: runs the chaos matrix (issue 42, test/chaos/) against
// the running sandbox, one cell at a time, and prints each cell (invariants held or which broke, with the evidence
// seq numbers), then the summary. Nothing else may use the sandbox meanwhile: cells stop its apiservers and forge.
// Exit code 1 when a cell broke.
import { writeFileSync } from 'node:fs';
import { describeMatrix, runCells, selectCells } from '../test/chaos/matrix.ts';

const args = process.argv.slice(2);
const opt = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
if (args.includes('--help')) {
  console.log('npm run chaos -- [--cells row/fault/point,…] [--list] [--json results.json]');
  process.exit(0);
}
const cells = selectCells((opt('--cells') ?? '').split(',').filter(Boolean));
if (args.includes('--list')) {
  for (const c of cells) console.log(c.id);
  console.log(`${cells.length} cells`);
  process.exit(0);
}
console.log(`chaos: ${cells.length} cells, ${new Date().toISOString()}`);
const started = Date.now();
const results = await runCells(cells, (r) => console.log(describeMatrix([r]).slice(0, -1).join('\n')));
console.log('');
for (const line of describeMatrix(results)) console.log(line);
console.log(`whole run: ${Math.round((Date.now() - started) / 1000)} s`);
const json = opt('--json');
if (json) writeFileSync(json, JSON.stringify({ at: new Date().toISOString(), results }, null, 2));
process.exit(results.every((r) => r.ok) ? 0 : 1);
