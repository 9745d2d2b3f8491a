// The gate of a governed Flagger promote or rollback (issue 40, item 7): its URL comes from Git, so the console
// calls only a load tester host on CONSOLE_FLAGGER_GATE_HOSTS (refused with 409 naming the setting before any intent
// is recorded or any name resolved), resolves it once and connects to that address, and never repeats the gate's
// answer: its status only, in the message and the evidence. A real HTTP server on 127.0.0.1 plays the load tester
// under a name only the test's resolver knows, so a request that reaches it was sent to the pinned address.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { App } from '../../domain/app.ts';
import { loadConfig } from '../config.ts';
import { FlakyMemoryStore } from '../evidence/memory-store.test-support.ts';
import { EvidenceRecorder } from '../evidence/recorder.ts';
import { HttpError } from '../http/errors.ts';
import type { ClusterConnection } from '../kube/connection.ts';
import { sandboxDefaults, sandboxGateHosts } from '../sandbox-defaults.ts';
import { controlFlaggerCanary } from './flagger-actions.ts';
import { gatePolicy } from './flagger-gate.ts';

const NAME = 'loadtester.gates.test'; // no DNS answers it: only the test's resolver
const BODY = 'SECRET-REPLY: internal stack trace, token=abc123';

let server: Server;
let port = 0;
let answer = { status: 200, body: '{"gate":"open"}' };
const got: Array<{ host: string | undefined; path: string | undefined; body: string }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      got.push({ host: req.headers.host, path: req.url, body });
      res.writeHead(answer.status, { 'content-type': 'text/plain' });
      res.end(answer.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  got.length = 0;
  answer = { status: 200, body: '{"gate":"open"}' };
});

const app = {
  id: 'nonprod/flux-system/kustomization/payments',
  name: 'payments',
  cluster: 'nonprod',
  env: 'staging',
  inventory: [
    { cluster: 'nonprod', group: 'flagger.app', version: 'v1beta1', kind: 'Canary', namespace: 'staging', name: 'pay' },
  ],
} as unknown as App;

function canary(gateUrl: string) {
  return {
    apiVersion: 'flagger.app/v1beta1',
    kind: 'Canary',
    metadata: { name: 'pay', namespace: 'staging', uid: 'u-1' },
    spec: {
      targetRef: { name: 'pay' },
      analysis: { webhooks: [{ name: 'promotion-gate', type: 'confirm-promotion', url: gateUrl }] },
    },
    status: { phase: 'WaitingPromotion', lastAppliedSpec: 'abc123', lastPromotedSpec: 'old' },
  };
}

function setup(gateUrl: string, hosts: string[], addresses: string[] = ['127.0.0.1']) {
  const store = new FlakyMemoryStore();
  const recorder = new EvidenceRecorder(store, { warn: () => undefined, error: () => undefined });
  const lookups: string[] = [];
  const gates = gatePolicy(hosts, async (h) => {
    lookups.push(h);
    // a second lookup would be told another address (DNS rebinding): only the first is ever asked
    return lookups.length === 1 ? addresses : ['10.9.9.9'];
  });
  const conn = {
    request: async () => ({ status: 200, headers: {}, body: JSON.stringify(canary(gateUrl)) }),
  } as unknown as ClusterConnection;
  const promote = () =>
    controlFlaggerCanary(app, { namespace: 'staging', name: 'pay' }, 'promote', 'looks good', 'olivia', {
      recorder,
      conn,
      gates,
      gateTimeoutMs: 3000,
    });
  return { store, lookups, promote };
}

async function refusal(p: Promise<unknown>): Promise<HttpError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(HttpError);
  return e as HttpError;
}

describe('a Flagger gate is called only on an allow-listed load tester host', () => {
  it('an allowed host: resolved once, the POST goes to that address, the intent names it', async () => {
    const s = setup(`http://${NAME}:${port}/gate/check`, [`${NAME}:${port}`]);
    await expect(s.promote()).resolves.toEqual({ verb: 'promote', phase: 'WaitingPromotion', gate: 'promotion-gate' });
    expect(s.lookups).toEqual([NAME]);
    expect(got).toEqual([
      {
        host: `${NAME}:${port}`,
        path: '/gate/open',
        body: JSON.stringify({ name: 'pay', namespace: 'staging', lastAppliedSpec: 'abc123', by: 'olivia' }),
      },
    ]);
    expect(s.store.types()).toEqual(['rollout.control', 'action.completed']);
    expect(s.store.events[0]?.data).toMatchObject({
      gate: { webhook: 'promotion-gate', url: `http://${NAME}:${port}/gate/open`, addresses: ['127.0.0.1'] },
    });
  });

  it.each([
    ['a host not on the list', `http://${NAME}:${port}/gate/check`, ['other.gates.test']],
    ['the right host on another port', `http://${NAME}:${port}/gate/check`, [`${NAME}:1`]],
    ['a private address not on the list', 'http://10.0.0.7:8080/gate/check', [`${NAME}`]],
    ['loopback by address, the list naming only a name', `http://127.0.0.1:${port}/gate/check`, [NAME]],
    ['no list at all (the default)', `http://${NAME}:${port}/gate/check`, []],
  ])('%s: 409 naming CONSOLE_FLAGGER_GATE_HOSTS; nothing resolved, recorded or sent', async (_what, url, hosts) => {
    const s = setup(url, hosts);
    const e = await refusal(s.promote());
    expect(e.status).toBe(409);
    expect(e.message).toMatch(
      /not a Flagger load tester host the console may call \(add it to CONSOLE_FLAGGER_GATE_HOSTS\)/,
    );
    expect(s.lookups).toEqual([]);
    expect(s.store.events).toEqual([]);
    expect(got).toEqual([]);
  });

  it('a cloud metadata address is refused even when listed, by name or by address', async () => {
    const byAddress = setup('http://169.254.169.254/gate/check', ['169.254.169.254']);
    expect((await refusal(byAddress.promote())).message).toMatch(/cloud metadata/);
    const byName = setup(`http://${NAME}:${port}/gate/check`, [`${NAME}:${port}`], ['169.254.169.254']);
    const e = await refusal(byName.promote());
    expect([e.status, e.message]).toEqual([409, expect.stringMatching(/resolves to 169\.254\.169\.254/)]);
    expect(byName.store.events).toEqual([]);
    expect(got).toEqual([]);
  });

  it('credentials in a gate URL are refused, and never shown', async () => {
    const s = setup(`http://ops:hunter2@${NAME}:${port}/gate/check`, [`${NAME}:${port}`]);
    const e = await refusal(s.promote());
    expect(e.status).toBe(409);
    expect(e.message).toMatch(/credentials/);
    expect(e.message).not.toContain('hunter2');
    expect(got).toEqual([]);
  });
});

describe("a gate's answer is never repeated: its status only", () => {
  it.each([
    [500, 502, 'answered HTTP 500'],
    [403, 502, 'answered HTTP 403'],
    [302, 502, 'answered HTTP 302 (a redirect, which is not followed)'],
    [409, 409, 'the Canary moved on before the gate opened (the gate answered HTTP 409)'],
  ])(
    'HTTP %i with a body: %i, the status in the message and the record, the body nowhere',
    async (status, code, says) => {
      answer = { status, body: BODY };
      // by address: no name to resolve (the same answer reaches a console that calls any address)
      const s = setup(`http://127.0.0.1:${port}/gate/check`, [`127.0.0.1:${port}`]);
      const e = await refusal(s.promote());
      expect(e.status).toBe(code);
      expect(e.message).toContain(says);
      expect(e.message).not.toContain('SECRET');
      expect(got).toHaveLength(1);
      expect(s.store.types()).toEqual(['rollout.control', 'action.failed']);
      expect(s.store.events[1]?.data).toMatchObject({ error: e.message });
      expect(JSON.stringify(s.store.events)).not.toContain('SECRET');
    },
  );

  it('a gate that does not answer: 502 with the socket error, the intent and its failure recorded', async () => {
    const s = setup('http://127.0.0.1:1/gate/check', ['127.0.0.1:1']);
    const e = await refusal(s.promote());
    expect([e.status, e.message]).toEqual([502, expect.stringMatching(/did not answer: ECONNREFUSED$/)]);
    expect(s.store.types()).toEqual(['rollout.control', 'action.failed']);
  });
});

describe('the allow-list setting', () => {
  it('CONSOLE_FLAGGER_GATE_HOSTS: hosts and host:ports; an address range or a bad entry stops the start', () => {
    const cfg = (v: string) => loadConfig({ KUBECONFIG: '/dev/null', CONSOLE_FLAGGER_GATE_HOSTS: v }, []);
    expect(cfg('flagger-loadtester.test, 10.0.0.5:8080 ,[::1]:9090').flaggerGateHosts).toEqual([
      'flagger-loadtester.test',
      '10.0.0.5:8080',
      '[::1]:9090',
    ]);
    expect(loadConfig({ KUBECONFIG: '/dev/null' }, []).flaggerGateHosts).toEqual([]);
    expect(() => cfg('10.0.0.0/8')).toThrow(/CONSOLE_FLAGGER_GATE_HOSTS: "10\.0\.0\.0\/8" is not a host or host:port/);
    expect(() => cfg('http://x/')).toThrow(/CONSOLE_FLAGGER_GATE_HOSTS: .* is not a host or host:port/);
  });

  it("sandbox mode: the sandbox's load tester stand-ins (its business endpoints), host and port", () => {
    const st = {
      clusters: [],
      business: {
        endpoints: {
          dev: { url: 'http://127.0.0.1:25292' },
          staging: { url: 'http://127.0.0.1:24595' },
          prod: { url: 'http://127.0.0.1:26215' },
        },
      },
    };
    expect(sandboxGateHosts(st)).toEqual(['127.0.0.1:25292', '127.0.0.1:24595', '127.0.0.1:26215']);
    expect(sandboxDefaults(st, '/nonexistent').flaggerGateHosts).toEqual(sandboxGateHosts(st));
    expect(sandboxGateHosts({ clusters: [] })).toEqual([]);
  });
});
