// Issue 28, event sinks, against the real sandbox: a release of a real commit reaches a test receiver (started
// here, on 127.0.0.1) as CDEvents in chain order with valid signatures; the receiver down for a whole release loses
// nothing and reorders nothing; a sink that always fails lands its records in the dead-letter list, which an admin
// sees (and a developer may not) and retries; /metrics names both sinks. The commits are the file's own: it owns
// its estate (test/support/own-estate.ts: the dev template in a namespace of its own, env dev).
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isEmitted } from '../../src/domain/cdevents.ts';
import { openEvidenceStore } from '../../src/server/evidence/index.ts';
import { SIGNATURE_HEADER, verifySignature } from '../../src/server/sinks/signature.ts';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { writeRepoFile } from '../../sandbox/scenario.ts';
import { as, signIn } from '../support/auth.ts';
import { RECORDER_ON, startTestConsole } from '../support/console.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../support/own-estate.ts';

const OVERLAY = 'overlays/dev/kustomization.yaml';
const FILES = digitalHumanTemplate('dev');
/** the audit sink's longest wait between two attempts (sinks.json retryMaxSeconds; 30 s by default) */
const AUDIT_RETRY_MAX_SECONDS = 1;
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

/**
 * A receiver on a fixed port once listening (so it can come back on the same address). It goes down as a server
 * does: no new connections, and each request it has begun to read is answered (a record it took and never
 * answered would come again: at least once), then the connection closed.
 */
function receiver(status = 200) {
  const got: Got[] = [];
  let server: Server | undefined;
  let closing = false;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      closing = false;
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
          res.writeHead(status, closing ? { Connection: 'close' } : {}).end();
        });
      });
      // an idle connection is kept longer than the sink's client keeps it: the client is the one to close it
      server.keepAliveTimeout = 60_000;
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
        closing = true;
        server.close(() => r());
        server.closeIdleConnections();
      }),
  };
}

let dir: string;
let con: Awaited<ReturnType<typeof startTestConsole>>;
let estate: Estate;
let APP: string;
const audit = receiver();
const broken = receiver(500);
const original = FILES[OVERLAY] ?? '';

beforeAll(async () => {
  estate = await ownEstate({ name: 'sinks', env: 'dev', files: FILES });
  APP = estate.appId();
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
        // back within a second of the receiver: the test waits on the delivery, not on a 30 s back-off
        { name: 'audit', url: audit.url(), secretFile, retryMaxSeconds: AUDIT_RETRY_MAX_SECONDS },
        { name: 'broken', url: broken.url(), secretFile, deadLetterAfterSeconds: 2 },
      ],
    }),
  );
  // the estate's cluster only: the recorder renders and dry-runs every app it sees, prod's too otherwise
  con = await startTestConsole({
    ...RECORDER_ON,
    CONSOLE_CONTEXTS: estate.cluster,
    CONSOLE_EVENT_SINKS_FILE: sinksFile,
  });
}, 300_000);

afterAll(async () => {
  await con?.close();
  await audit.close();
  await broken.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  await estate?.teardown();
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

/** the audit sink as the console reports it */
async function auditSink() {
  const sinks = await as(con.admin, con.url, '/api/sinks');
  return (
    sinks.body.sinks as Array<{
      name: string;
      deadLetters: unknown[];
      failedAttempts: number;
      retrying: { seq: number; attempts: number } | null;
    }>
  ).find((s) => s.name === 'audit');
}

/** the chain holds the healthy release of `sha` (the record the sinks send as service.deployed) */
async function healthyRecorded(sha: string): Promise<boolean> {
  const r = await as(con.admin, con.url, `/api/evidence?type=release.health&app=${encodeURIComponent(APP)}&limit=100`);
  return (r.body as { events: EvidenceEvent[] }).events.some(
    (e) => e.data.sha === sha && (e.data.status ?? 'ok') === 'ok',
  );
}

/** what the chain and the receiver hold of `sha`'s release, and the audit sink's state: said when a wait fails */
async function releaseSoFar(sha: string): Promise<string> {
  const r = await as(con.admin, con.url, `/api/evidence?app=${encodeURIComponent(APP)}&limit=200`);
  const chain = (r.body as { events: EvidenceEvent[] }).events
    .filter((e) => e.data.sha === sha)
    .map((e) => `${e.seq} ${e.type} ${String(e.data.status ?? '')}`)
    .reverse();
  const got = releaseOf(sha).map((g) => `${g.seq} ${g.evidenceType}`);
  const { deadLetters: _, ...sink } = (await auditSink()) ?? { deadLetters: [] };
  return `chain: ${chain.join(', ') || 'nothing'}; received: ${got.join(', ') || 'nothing'}; audit sink: ${JSON.stringify(sink)}`;
}

/** `wait`, its failure followed by what the release of `sha` has come to */
async function explained(sha: string, wait: Promise<void>): Promise<void> {
  try {
    await wait;
  } catch (e) {
    throw new Error(`${e instanceof Error ? e.message : String(e)}\n${await releaseSoFar(sha)}`);
  }
}

describe('event sinks on the sandbox', () => {
  it('a release reaches the receiver as CDEvents, in chain order, each signed', async () => {
    // a replica count (a generator literal would rename its ConfigMap: a prune the policy holds for a reviewer)
    const scaled = original.replace(
      /(name: session-cache\n\s+count: )(\d+)/,
      (_m, a: string, n: string) => `${a}${Number(n) + 1}`,
    );
    expect(scaled).not.toBe(original);
    const sha = estate.push('Sinks test: one more dev session-cache', (w) => writeRepoFile(w, OVERLAY, scaled));
    // Flux applies it (the estate's source is fetched when asked: waitApplied asks)
    await estate.waitApplied(sha);
    await explained(
      sha,
      waitFor(
        `change.merged and service.deployed of ${sha.slice(0, 8)}`,
        async () => {
          const r = releaseOf(sha);
          return (
            r.some((g) => g.type === 'dev.cdevents.change.merged.0.2.0' && g.subjectId === sha) &&
            r.some((g) => g.type === 'dev.cdevents.service.deployed.0.2.0')
          );
        },
        { timeoutMs: 180_000, intervalMs: 500 },
      ),
    );
    const r = releaseOf(sha);
    const order = r.map((g) => g.evidenceType);
    expect(order.indexOf('release.change')).toBeLessThan(order.indexOf('release.health'));
    expect(order).toContain('release.render');
    const seqs = audit.got.map((g) => g.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    // each once (a second delivery would be a retry of a record the receiver had taken)
    expect(
      seqs.filter((q, i) => seqs.indexOf(q) !== i),
      JSON.stringify(await auditSink()),
    ).toEqual([]);
    expect(audit.got.every((g) => g.signed)).toBe(true);
    // only ids, names, states and links: no commit message, no author e-mail
    expect(r.map((g) => g.body).join('\n')).not.toMatch(/Sinks test: one more|@example|"message"/);
  }, 240_000);

  it('the receiver down for a whole release: every record arrives afterwards, none lost, none out of order', async () => {
    const before = audit.got.at(-1)?.seq ?? 0;
    const failedBefore = (await auditSink())?.failedAttempts ?? 0;
    await audit.close();
    const sha = estate.push('Sinks test: dev session-cache back', (w) => writeRepoFile(w, OVERLAY, original));
    await estate.waitApplied(sha);
    // down until the release is recorded to its end (healthy), the sink holding its records and trying again
    await explained(
      sha,
      waitFor(
        `the healthy release of ${sha.slice(0, 8)} recorded while the sink retries a record`,
        async () => {
          const a = await auditSink();
          return (
            (a?.failedAttempts ?? 0) >= failedBefore + 2 &&
            (a?.retrying?.seq ?? 0) > before &&
            (await healthyRecorded(sha))
          );
        },
        { timeoutMs: 180_000, intervalMs: 500 },
      ),
    );
    expect(releaseOf(sha)).toEqual([]);
    await audit.listen();
    await explained(
      sha,
      waitFor(
        `service.deployed of ${sha.slice(0, 8)} after the receiver came back`,
        async () => releaseOf(sha).some((g) => g.type === 'dev.cdevents.service.deployed.0.2.0'),
        { timeoutMs: 60_000, intervalMs: 500 },
      ),
    );
    const last = audit.got.at(-1)?.seq ?? 0;
    const got = audit.got.filter((g) => g.seq > before && g.seq <= last).map((g) => g.seq);
    const chain = (await emittedAfter(before)).filter((s) => s <= last);
    expect(got).toEqual(chain);
    // the sink noticed the receiver was gone (attempts failed) and gave up on nothing
    const a = await auditSink();
    expect(a?.failedAttempts).toBeGreaterThan(failedBefore);
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
