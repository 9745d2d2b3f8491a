// SIMULATION — the process behind test/support/business-standin.ts: one business endpoint stand-in
// (sandbox/business-endpoint.ts businessListener) on 127.0.0.1, a free port, in its own process. In the test's
// own process its answers waited for the test's synchronous calls (kubectl and git through execFileSync): an
// AnalysisRun's web metric, whose timeout is 2 s, read "context deadline exceeded" instead of the 503 it was
// made to answer (a cold run, 2026-12-06). Its own event loop answers whatever the test process is doing.
//
//   node --import tsx test/support/business-standin-process.ts <control dir>
//
// The control dir (0700, made by the parent) holds target.json (the apiserver and the client certificate it
// reads pods with: never on the command line), namespace (the namespace whose pods it reports, rewritten when
// the estate exists) and <env>.json (its mode, as sandbox/business-endpoint.ts reads it). It prints
// `{"port":N}` once it listens and exits when its parent closes its stdin.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { businessListener, controlFile, readMode } from '../../sandbox/business-endpoint.ts';
import type { KubeTarget } from '../../sandbox/kube-http.ts';

const controlDir = process.argv[2];
if (!controlDir) {
  console.error('usage: business-standin-process.ts <control dir>');
  process.exit(2);
}
const { env, target } = JSON.parse(readFileSync(join(controlDir, 'target.json'), 'utf8')) as {
  env: string;
  target: KubeTarget;
};
const ep = {
  env,
  target,
  // read when it answers (the listener asks for the pods then): the estate's namespace is known after the start
  get namespace() {
    try {
      return readFileSync(join(controlDir, 'namespace'), 'utf8').trim() || 'default';
    } catch {
      return 'default';
    }
  },
};
const srv = createServer(
  businessListener(ep, {
    controlDir,
    mode: () => readMode(controlFile(controlDir, env)),
    say: () => undefined,
  }),
);
srv.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (srv.address() as AddressInfo).port })}\n`);
});
// the parent's end: its stdin closes when the parent exits or closes the stand-in
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();
process.on('SIGTERM', () => process.exit(0));
