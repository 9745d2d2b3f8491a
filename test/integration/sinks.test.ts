// Issue 28, event sinks, against the real sandbox: a release of a real commit reaches a test receiver (started
// here, on 127.0.0.1) as CDEvents in chain order with valid signatures; the receiver down for 30 s loses nothing
// and reorders nothing; a sink that always fails lands its records in the dead-letter list, which an admin sees
// (and a developer may not) and retries; /metrics names both sinks. Git is put back by a second commit.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isEmitted } from '../../src/domain/cdevents.ts';
import { openEvidenceStore } from '../../src/server/evidence/index.ts';
import { SIGNATURE_HEADER, verifySignature } from '../../src/server/sinks/signature.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { commitAndPushRetrying, readRepoFile, writeRepoFile } from '../../sandbox/scenario.ts';
import { as, signIn } from '../support/auth.ts';
import { RECORDER_ON, startTestConsole } from '../support/console.ts';

const APP = 'nonprod/flux-system/kustomization/digital-human-dev';
const OVERLAY = 'overlays/dev/kustomization.yaml';
const SECRET = `sinks-test-${Date.now()}-0123456789abcdef`;

interface Got {
  seq: number;
  type: string;
  evidenceType: string;
  app: string | undefined;
  subjectId: string;
  signed: boolean;
  body: string;
}

/** a receiver on a fixed port once listening (so it can come back on the same address) */
function receiver(status = 200) {
  const got: Got[] = [];
  let server: Server | undefined;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer((req, res) => {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () => {
          if (status === 200) {
            const ev = JSON.parse(body) as {
              context: { type: string };
              subject: { id: string; content: { app?: string } };
              customData: { evidence: { seq: number; type: string } };
            };
            got.push({
              seq: ev.customData.evidence.seq,
              type: ev.context.type,
              evidenceType: ev.customData.evidence.type,
              app: ev.subject.content.app,
              subjectId: ev.subject.id,
              signed: verifySignature(SECRET, body, String(req.headers[SIGNATURE_HEADER]), Date.now() / 1000),
              body,
            });
          }
          res.writeHead(status).end();
        });
      });
      server.once('error', reject); // the port taken meanwhile: fail, not hang
      server.listen(port, '127.0.0.1', () => {
        port = (server?.address() as { port: number }).port;
        resolve();
      });
    });
  return {
    got,
    listen,
    url: () => `http://127.0.0.1:${port}/cdevents`,
    close: () =>
      new Promise<void>((r) => {
        if (!server) return r();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

let dir: string;
let con: Awaited<ReturnType<typeof startTestConsole>>;
const audit = receiver();
const broken = receiver(500);
let original: string;
let pushed = false;

beforeAll(async () => {
  await audit.listen();
  await broken.listen();
  dir = mkdtempSync(join(tmpdir(), 'sinks-it-'));
  const secretFile = join(dir, 'hmac');
  writeFileSync(secretFile, `${SECRET}\n`);
  chmodSync(secretFile, 0o600);
  const sinksFile = join(dir, 'sinks.json');
  writeFileSync(
    sinksFile,
    JSON.stringify({
      sinks: [
        { name: 'audit', url: audit.url(), secretFile },
        { name: 'broken', url: broken.url(), secretFile, deadLetterAfterSeconds: 2 },
      ],
    }),
  );
  con = await startTestConsole({ ...RECORDER_ON, CONSOLE_EVENT_SINKS_FILE: sinksFile });
  original = readRepoFile(OVERLAY);
}, 120_000);

afterAll(async () => {
  if (pushed && readRepoFile(OVERLAY) !== original)
    commitAndPushRetrying('Put dev back (sinks test)', (w) => writeRepoFile(w, OVERLAY, original));
  await con?.close();
  await audit.close();
  await broken.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** what the chain holds for the sinks after `afterSeq` (read from the console's own SQLite file) */
async function emittedAfter(afterSeq: number): Promise<number[]> {
  const store = await openEvidenceStore({ dataDir: con.dataDir });
  try {
    const all = await store.list({ afterSeq, order: 'asc', limit: 10_000 });
    return all.filter((e) => isEmitted(e.type)).map((e) => e.seq);
  } finally {
    await store.close();
  }
}

const releaseOf = (sha: string) => audit.got.filter((g) => g.app === APP && g.body.includes(sha));

describe('event sinks on the sandbox', () => {
  it('a release reaches the receiver as CDEvents, in chain order, each signed', async () => {
    // a replica count (a generator literal would rename its ConfigMap: a prune the policy holds for a reviewer)
    const scaled = original.replace(
      /(name: session-cache\n\s+count: )(\d+)/,
      (_m, a: string, n: string) => `${a}${Number(n) + 1}`,
    );
    expect(scaled).not.toBe(original);
    const sha = commitAndPushRetrying('Sinks test: one more dev session-cache', (w) =>
      writeRepoFile(w, OVERLAY, scaled),
    );
    pushed = true;
    await waitFor(
      `change.merged and service.deployed of ${sha.slice(0, 8)}`,
      async () => {
        const r = releaseOf(sha);
        return (
          r.some((g) => g.type === 'dev.cdevents.change.merged.0.2.0' && g.subjectId === sha) &&
          r.some((g) => g.type === 'dev.cdevents.service.deployed.0.2.0')
        );
      },
      { timeoutMs: 180_000, intervalMs: 500 },
    );
    const r = releaseOf(sha);
    const order = r.map((g) => g.evidenceType);
    expect(order.indexOf('release.change')).toBeLessThan(order.indexOf('release.health'));
    expect(order).toContain('release.render');
    const seqs = audit.got.map((g) => g.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(audit.got.every((g) => g.signed)).toBe(true);
    // only ids, names, states and links: no commit message, no author e-mail
    expect(r.map((g) => g.body).join('\n')).not.toMatch(/Sinks test: one more|@example|"message"/);
  }, 240_000);

  it('the receiver down for 30 s: every record arrives afterwards, none lost, none out of order', async () => {
    const before = audit.got.at(-1)?.seq ?? 0;
    await audit.close();
    const sha = commitAndPushRetrying('Sinks test: dev session-cache back', (w) => writeRepoFile(w, OVERLAY, original));
    await new Promise((r) => setTimeout(r, 30_000));
    await audit.listen();
    await waitFor(
      `service.deployed of ${sha.slice(0, 8)} after the receiver came back`,
      async () => releaseOf(sha).some((g) => g.type === 'dev.cdevents.service.deployed.0.2.0'),
      { timeoutMs: 180_000, intervalMs: 500 },
    );
    const last = audit.got.at(-1)?.seq ?? 0;
    const got = audit.got.filter((g) => g.seq > before && g.seq <= last).map((g) => g.seq);
    const chain = (await emittedAfter(before)).filter((s) => s <= last);
    expect(got).toEqual(chain);
    // the sink noticed the receiver was gone (attempts failed) and gave up on nothing
    const sinks = await as(con.admin, con.url, '/api/sinks');
    const a = (sinks.body.sinks as Array<{ name: string; deadLetters: unknown[]; failedAttempts: number }>).find(
      (s) => s.name === 'audit',
    );
    expect(a?.failedAttempts).toBeGreaterThan(0);
    expect(a?.deadLetters).toEqual([]);
  }, 300_000);

  it('a sink that always fails: its records are dead letters an admin sees and retries; a developer may not', async () => {
    const r = await as(con.admin, con.url, '/api/sinks');
    expect(r.status).toBe(200);
    const b = (
      r.body.sinks as Array<{ name: string; down: boolean; deadLetters: Array<{ seq: number; attempts: number }> }>
    ).find((s) => s.name === 'broken');
    expect(b?.down).toBe(true);
    expect(b?.deadLetters.length).toBeGreaterThan(0);
    const seq = b?.deadLetters[0]?.seq ?? 0;
    const dev = await signIn(con.url, 'developer');
    expect((await as(dev, con.url, '/api/sinks')).status).toBe(403);
    expect((await as(dev, con.url, `/api/sinks/broken/dead-letters/${seq}/retry`, { method: 'POST' })).status).toBe(
      403,
    );
    // still failing: 502, the dead letter stays, intent and outcome recorded
    const retry = await as(con.admin, con.url, `/api/sinks/broken/dead-letters/${seq}/retry`, { method: 'POST' });
    expect(retry.status).toBe(502);
    expect(retry.text).toContain(`the sink did not take record ${seq}: HTTP 500`);
    const after = await as(con.admin, con.url, '/api/sinks');
    const still = (after.body.sinks as Array<{ name: string; deadLetters: Array<{ seq: number; attempts: number }> }>)
      .find((s) => s.name === 'broken')
      ?.deadLetters.find((d) => d.seq === seq);
    expect(still?.attempts).toBeGreaterThan(b?.deadLetters[0]?.attempts ?? 0);
    const ev = await as(con.admin, con.url, '/api/evidence?type=sink.redelivery');
    expect(JSON.stringify(ev.body)).toContain(`"seq":${seq}`);
    expect(
      (await as(con.admin, con.url, '/api/sinks/broken/dead-letters/999999999/retry', { method: 'POST' })).status,
    ).toBe(404);
    const metrics = await (await fetch(`${con.url}/metrics`)).text();
    expect(metrics).toMatch(/gitops_console_sink_dead_letters\{sink="broken"\} [1-9]/);
    expect(metrics).toMatch(/gitops_console_sink_up\{sink="audit"\} 1/);
    expect(metrics).toMatch(/gitops_console_sink_up\{sink="broken"\} 0/);
  }, 120_000);
});
