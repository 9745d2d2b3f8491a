// Delivery against a real local HTTP receiver and a real SQLite evidence store: order, signatures, a receiver
// that is down for a while, a sink that refuses for good (dead letters), and a retry on demand.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EvidenceInput } from '../../domain/evidence.ts';
import { openEvidenceStore, type EvidenceStore } from '../evidence/index.ts';
import type { SinkConfig } from './config.ts';
import { SinkDelivery } from './delivery.ts';
import { SIGNATURE_HEADER, verifySignature } from './signature.ts';
import { SinkStore } from './sink-store.ts';

const SECRET = 'a-test-secret-of-32-characters!!';
const quiet = { info: () => undefined, warn: () => undefined };

interface Got {
  seq: number;
  type: string;
  signed: boolean;
}
/** a receiver answering `status()` (200 unless changed), recording what it took */
function receiver() {
  const got: Got[] = [];
  let status = 200;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (status === 200) {
        const ev = JSON.parse(body) as { customData: { evidence: { seq: number } }; context: { type: string } };
        got.push({
          seq: ev.customData.evidence.seq,
          type: ev.context.type,
          signed: verifySignature(SECRET, body, String(req.headers[SIGNATURE_HEADER]), Date.now() / 1000),
        });
      }
      res.writeHead(status).end();
    });
  });
  return {
    got,
    setStatus: (s: number) => (status = s),
    listen: () =>
      new Promise<string>((r) =>
        server.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(server.address() as { port: number }).port}/e`)),
      ),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const release = (i: number, app = 'nonprod/flux-system/a'): EvidenceInput => ({
  time: new Date().toISOString(),
  type: 'release.render',
  actor: 'console',
  app,
  cluster: 'nonprod',
  env: 'dev',
  data: { sha: `sha${i}`, status: 'ok', renderHash: `h${i}` },
});

async function until(what: string, f: () => boolean | Promise<boolean>, ms = 10_000) {
  const end = Date.now() + ms;
  while (!(await f())) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let dir: string;
let store: EvidenceStore;
let delivery: SinkDelivery | undefined;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sinks-'));
  store = await openEvidenceStore({ dataDir: dir });
});
afterEach(async () => {
  await delivery?.stop();
  delivery = undefined;
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function start(sink: Partial<SinkConfig> & { url: string }) {
  const cfg: SinkConfig = {
    name: 'audit',
    secret: SECRET,
    deadLetterAfterMs: 60_000,
    from: 'start',
    format: 'cdevents',
    notify: [],
    ...sink,
  };
  delivery = new SinkDelivery({
    sinks: [cfg],
    store,
    sinkStore: new SinkStore(store),
    source: 'https://console.example.com',
    log: quiet,
    pollMs: 20,
    retryBaseMs: 20,
    retryMaxMs: 100,
  });
  delivery.start();
  return delivery;
}

describe('event sinks', () => {
  it("a sink's status shows the scheme and host of its URL only: never its path, query or credentials", () => {
    const hooks = [
      ['https://hooks.slack.example/services/T0001/B0002/XXXXSECRETXXXX', 'https://hooks.slack.example'],
      ['https://ops:SECRETpw@events.example.com:8443/cdevents?token=SECRET', 'https://events.example.com:8443'],
      ['http://127.0.0.1:9/e#SECRET', 'http://127.0.0.1:9'],
    ];
    const d = new SinkDelivery({
      sinks: hooks.map(([url], i) => ({
        name: `s${i}`,
        url: url!,
        secret: SECRET,
        deadLetterAfterMs: 60_000,
        from: 'now' as const,
        format: 'slack' as const,
        notify: [],
      })),
      store,
      sinkStore: new SinkStore(store),
      source: 'https://console.example.com',
      log: quiet,
    });
    expect(d.status().map((s) => s.url)).toEqual(hooks.map(([, shown]) => shown));
    expect(JSON.stringify(d.status())).not.toContain('SECRET');
  });

  it('delivers the sink records in chain order, signed; other records are skipped', async () => {
    const r = receiver();
    const url = await r.listen();
    await store.append({ time: new Date().toISOString(), type: 'auth.signed-in', actor: 'dev', data: {} });
    for (let i = 1; i <= 5; i++) await store.append(release(i, i % 2 ? 'a' : 'b'));
    const d = start({ url });
    await until('5 delivered', () => r.got.length === 5);
    expect(r.got.map((g) => g.seq)).toEqual([2, 3, 4, 5, 6]);
    expect(r.got.every((g) => g.signed)).toBe(true);
    expect(r.got[0]?.type).toBe('dev.cdeventsx.gitopsconsole-release.render.0.1.0');
    await until('cursor at head', () => d.status()[0]?.cursor === 6);
    expect(d.status()[0]).toMatchObject({ delivered: 5, lag: 0, deadLettered: 0, url: new URL(url).origin });
    await r.close();
  });

  it('a receiver down for a while gets every record afterwards, none lost, none out of order', async () => {
    const r = receiver();
    const url = await r.listen();
    r.setStatus(503);
    const d = start({ url });
    for (let i = 1; i <= 4; i++) await store.append(release(i));
    await until('retrying', () => (d.status()[0]?.failedAttempts ?? 0) >= 3);
    expect(d.status()[0]?.retrying?.seq).toBe(1);
    r.setStatus(200);
    await until('4 delivered', () => r.got.length === 4);
    expect(r.got.map((g) => g.seq)).toEqual([1, 2, 3, 4]);
    expect(d.status()[0]).toMatchObject({ deadLettered: 0, down: false, retrying: null });
    await r.close();
  });

  it('a sink refusing for good: its records land in the dead-letter list, and a retry on demand delivers one', async () => {
    const r = receiver();
    const url = await r.listen();
    r.setStatus(500);
    const sinkStore = new SinkStore(store);
    const d = start({ url, deadLetterAfterMs: 150 });
    for (let i = 1; i <= 3; i++) await store.append(release(i));
    await until('3 dead letters', async () => (await sinkStore.deadLetters('audit')).length === 3);
    const dead = await sinkStore.deadLetters('audit');
    expect(dead.map((x) => x.seq)).toEqual([1, 2, 3]);
    expect(dead[0]).toMatchObject({ lastError: 'HTTP 500' });
    expect(d.status()[0]).toMatchObject({ down: true, deadLettered: 3 });
    r.setStatus(200);
    expect(await d.retryDeadLetter('audit', 2)).toEqual({ ok: true });
    expect(r.got.map((g) => g.seq)).toEqual([2]);
    expect((await sinkStore.deadLetters('audit')).map((x) => x.seq)).toEqual([1, 3]);
    expect(await d.retryDeadLetter('audit', 2)).toMatchObject({ ok: false, error: 'no dead letter 2 for sink audit' });
    await r.close();
  });

  it('a 4xx is dead at once and the sink goes on; the cursor survives a restart (at least once, not from the start)', async () => {
    const r = receiver();
    const url = await r.listen();
    r.setStatus(400);
    let d = start({ url });
    await store.append(release(1));
    const sinkStore = new SinkStore(store);
    await until('dead at once', async () => (await sinkStore.deadLetters('audit')).length === 1);
    expect(d.status()[0]).toMatchObject({ down: false, failedAttempts: 1 });
    r.setStatus(200);
    await store.append(release(2));
    await until('2 delivered and its cursor written', () => r.got.length === 1 && d.status()[0]?.cursor === 2);
    await d.stop();
    await store.append(release(3));
    d = start({ url });
    await until('3 delivered after the restart', () => r.got.length === 2);
    expect(r.got.map((g) => g.seq)).toEqual([2, 3]);
    await r.close();
  });

  it('a new sink starts at the head by default: the history before it is not replayed', async () => {
    const r = receiver();
    const url = await r.listen();
    await store.append(release(1));
    const d = start({ url, from: 'now' });
    await until('cursor set', () => d.status()[0]?.cursor === 1);
    await store.append(release(2));
    await until('1 delivered', () => r.got.length === 1);
    expect(r.got[0]?.seq).toBe(2);
    await r.close();
  });

  it('a stop while a record is being retried leaves the cursor before it: the next start delivers it', async () => {
    const r = receiver();
    const url = await r.listen();
    r.setStatus(503);
    const d = start({ url });
    await store.append(release(1));
    await until('retrying record 1', () => d.status()[0]?.retrying?.seq === 1);
    await d.stop();
    expect(await new SinkStore(store).cursor('audit')).toBe(0);
    r.setStatus(200);
    d.start();
    await until('record 1 delivered after the restart', () => r.got.length === 1);
    expect(r.got[0]?.seq).toBe(1);
    await r.close();
  });

  it('a stop and an immediate start (a Lease lost and won again) run one loop per sink: nothing twice', async () => {
    const r = receiver();
    const url = await r.listen();
    const d = start({ url });
    const stopped = d.stop();
    d.start();
    await stopped;
    for (let i = 1; i <= 20; i++) await store.append(release(i));
    await until('20 delivered', () => r.got.length >= 20);
    await new Promise((res) => setTimeout(res, 200));
    expect(r.got.map((g) => g.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(d.status()[0]?.running).toBe(true);
    await r.close();
  });

  it("a sink's retryMaxMs caps its back-off below the delivery's: a receiver back is tried again within it", async () => {
    const r = receiver();
    const url = await r.listen();
    r.setStatus(503);
    const cfg: SinkConfig = {
      name: 'audit',
      url,
      secret: SECRET,
      deadLetterAfterMs: 60_000,
      retryMaxMs: 100,
      from: 'start',
      format: 'cdevents',
      notify: [],
    };
    // the delivery's own back-off would wait 100 ms, 200, 400, … up to a minute between attempts
    const d = new SinkDelivery({
      sinks: [cfg],
      store,
      sinkStore: new SinkStore(store),
      source: 'https://console.example.com',
      log: quiet,
      pollMs: 20,
      retryBaseMs: 100,
      retryMaxMs: 60_000,
    });
    delivery = d;
    d.start();
    await store.append(release(1));
    // 8 failed attempts: 7 waits of at most 100 ms (uncapped: 100 + 200 + … + 6,400 = 12.7 s); the bounds leave a
    // loaded machine seconds of slack and still tell the two apart
    const t0 = Date.now();
    await until('8 failed attempts', () => (d.status()[0]?.failedAttempts ?? 0) >= 8, 10_000);
    expect(Date.now() - t0).toBeLessThan(8_000);
    r.setStatus(200);
    const back = Date.now();
    // delivered: received and its outcome recorded (the next uncapped wait would be 12.8 s)
    await until('delivered once the receiver is back', () => d.status()[0]?.delivered === 1, 10_000);
    expect(Date.now() - back).toBeLessThan(6_000);
    expect(r.got).toHaveLength(1);
    expect(d.status()[0]).toMatchObject({ delivered: 1, deadLettered: 0, retrying: null });
    await r.close();
  }, 30_000);
});
