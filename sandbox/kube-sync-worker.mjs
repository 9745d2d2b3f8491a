// The worker thread behind sandbox/kube-sync.ts: it makes one HTTPS request at a time for a caller that waits
// on a shared Int32Array (Atomics.wait), so the scenario helpers keep their synchronous kubectl-like API without
// starting a kubectl process per call (0.15 core-seconds each, all of it Go start-up).
//
// workerData: { signal: SharedArrayBuffer(4), port: MessagePort }
// a request:  { method, url, headers, body?, tls: { ca, cert, key }, timeoutMs }
// its answer: { status, body } or { error } on the port, then signal[0] = 1 and a notify.
import { Buffer } from 'node:buffer';
import https from 'node:https';
import { URL } from 'node:url';
import { workerData } from 'node:worker_threads';

const signal = new Int32Array(workerData.signal);
const port = workerData.port;
/** one keep-alive agent per server and client certificate */
const agents = new Map();

function agentFor(url, tls) {
  const key = `${new URL(url).host}\n${tls.cert ?? ''}`;
  let a = agents.get(key);
  if (!a) {
    a = new https.Agent({ keepAlive: true, maxSockets: 1, ca: tls.ca, cert: tls.cert, key: tls.key });
    agents.set(key, a);
  }
  return a;
}

function request(req, retry = true) {
  // a body always with its length: Node sends a DELETE's body unframed otherwise, and the server reads it as the
  // next request on the kept-alive connection
  if (req.body !== undefined) req.headers['content-length'] = String(Buffer.byteLength(req.body));
  return new Promise((resolve) => {
    const r = https.request(
      req.url,
      { method: req.method, headers: req.headers, agent: agentFor(req.url, req.tls), timeout: req.timeoutMs },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (e) => resolve({ error: e.message }));
      },
    );
    r.on('timeout', () => r.destroy(new Error(`no answer in ${req.timeoutMs} ms`)));
    r.on('error', (e) => {
      // a kept-alive connection the server closed meanwhile (an apiserver restarted): once more on a new one,
      // as Node's documentation advises (the request never reached the server)
      if (retry && r.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE')) resolve(request(req, false));
      else resolve({ error: e.message });
    });
    if (req.body !== undefined) r.write(req.body);
    r.end();
  });
}

port.on('message', async (req) => {
  const answer = await request(req).catch((e) => ({ error: String(e?.message ?? e) }));
  port.postMessage(answer);
  Atomics.store(signal, 0, 1);
  Atomics.notify(signal, 0);
});
