import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { ClusterConnection, KubeError } from './connection.ts';
import { nextProbe, type ProbeState } from './cluster-manager.ts';

const refused = new KubeError('https://127.0.0.1:1 unreachable: ECONNREFUSED', 'prod', 0, 'ECONNREFUSED');
const timedOut = new KubeError('unreachable: ETIMEDOUT request timed out after 3000 ms', 'prod', 0, 'ETIMEDOUT');
const run = (...answers: Array<KubeError | undefined>): ProbeState =>
  answers.reduce<ProbeState>((s, a) => nextProbe(s, a), { timeouts: 0 });

describe('the apiserver probe', () => {
  it('one timed-out probe of a reachable apiserver is no verdict; the second in a row is', () => {
    expect(run(undefined, timedOut).error).toBeUndefined();
    expect(run(undefined, timedOut, timedOut).error).toBe(timedOut);
    // an answer between them starts the count again
    expect(run(timedOut, undefined, timedOut).error).toBeUndefined();
  });

  it('a refused connection or an HTTP error is a verdict at once, and a timeout after it keeps the cluster down', () => {
    expect(run(refused).error).toBe(refused);
    const notReady = new KubeError('readyz: HTTP 500', 'prod', 500);
    expect(run(undefined, notReady).error).toBe(notReady);
    expect(run(refused, timedOut).error).toBe(refused);
    expect(run(refused, undefined).error).toBeUndefined();
  });

  describe('a request that times out', () => {
    let server: Server | undefined;
    afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

    it('is a KubeError of reason ETIMEDOUT, which the probe tells from a refused connection', async () => {
      // accepts the connection and never says a word: the TLS handshake never ends
      const sockets: Array<{ destroy(): void }> = [];
      server = createServer((s) => void sockets.push(s));
      await new Promise<void>((r) => server?.listen(0, '127.0.0.1', () => r()));
      const port = (server.address() as AddressInfo).port;
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, skipTLSVerify: true }],
        users: [{ name: 'u' }],
        contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
        currentContext: 'c',
      });
      const conn = new ClusterConnection('prod', kc);
      try {
        const e = await conn.request('GET', '/readyz', { timeoutMs: 200 }).then(
          () => undefined,
          (x: unknown) => x,
        );
        expect(e).toBeInstanceOf(KubeError);
        expect((e as KubeError).reason).toBe('ETIMEDOUT');
        expect(run(undefined, e as KubeError).error).toBeUndefined();
      } finally {
        for (const s of sockets) s.destroy();
        conn.close();
      }
    });
  });
});
