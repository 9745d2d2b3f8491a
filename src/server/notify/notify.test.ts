// Notifications through a real delivery, a real SQLite store and a local HTTP receiver: a Slack-compatible body
// for the reviewers of a waiting prune preview (an opted-out one left out; nobody left: nothing sent), generic
// JSON for on-call, and the freeze reminder recorded once per freeze and expiry (also after a restart).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseGrant } from '../../domain/access.ts';
import type { EvidenceInput } from '../../domain/evidence.ts';
import type { Directory } from '../../domain/notifications.ts';
import { openEvidenceStore, type EvidenceStore } from '../evidence/index.ts';
import type { FreezeRow } from '../freeze/store.ts';
import { SinkDelivery, SinkStore, type SinkConfig } from '../sinks/index.ts';
import { SIGNATURE_HEADER, verifySignature } from '../sinks/signature.ts';
import { NotificationPrefs } from './prefs-store.ts';
import { FreezeReminder } from './reminder.ts';
import { Notifier } from './renderer.ts';

const SECRET = 'a-test-secret-of-32-characters!!';
const quiet = { info: () => undefined, warn: () => undefined };
const APP = 'nonprod/flux-system/kustomization/digital-human-dev';

const user = (name: string, person: string, ...grants: string[]) => ({ name, person, grants: grants.map(parseGrant) });
const DIR: Directory = {
  users: [
    user('developer', 'p-dev', 'developer'),
    user('dev-reviewer', 'p-dr', 'reviewer@nonprod/dev'),
    user('reviewer', 'p-r', 'reviewer'),
    user('oncall', 'p-oc', 'oncall'),
  ],
  groups: [],
};

function receiver() {
  const got: Array<{ body: Record<string, unknown>; signed: boolean; delivery: string }> = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      got.push({
        body: JSON.parse(body) as Record<string, unknown>,
        signed: verifySignature(SECRET, body, String(req.headers[SIGNATURE_HEADER]), Date.now() / 1000),
        delivery: String(req.headers['x-console-delivery']),
      });
      res.writeHead(200).end();
    });
  });
  return {
    got,
    listen: () =>
      new Promise<string>((r) =>
        server.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(server.address() as { port: number }).port}/n`)),
      ),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

async function until(what: string, f: () => boolean | Promise<boolean>, ms = 10_000) {
  const end = Date.now() + ms;
  while (!(await f())) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const previewRequested = (id: string, plan = 'ready'): EvidenceInput => ({
  time: new Date().toISOString(),
  type: 'prune.requested',
  actor: 'developer',
  app: APP,
  cluster: 'nonprod',
  env: 'dev',
  data: { previewId: id, plan, requester: { name: 'developer', person: 'p-dev' }, candidates: [{ object: 'x' }] },
});

let dir: string;
let store: EvidenceStore;
let delivery: SinkDelivery | undefined;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'notify-'));
  store = await openEvidenceStore({ dataDir: dir });
});
afterEach(async () => {
  await delivery?.stop();
  delivery = undefined;
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function start(sinks: Array<Partial<SinkConfig> & { name: string; url: string }>, prefs: NotificationPrefs) {
  delivery = new SinkDelivery({
    sinks: sinks.map((s) => ({
      secret: SECRET,
      deadLetterAfterMs: 60_000,
      from: 'start',
      format: 'slack',
      notify: ['prune.review-needed', 'freeze.ending-soon', 'freeze.interfered', 'release.verification-failed'],
      ...s,
    })),
    store,
    sinkStore: new SinkStore(store),
    source: 'https://console.example.com',
    publicUrl: 'https://console.example.com',
    log: quiet,
    notifications: new Notifier({
      directory: () => DIR,
      prefs,
      source: 'https://console.example.com',
      publicUrl: 'https://console.example.com',
    }),
    pollMs: 20,
  });
  delivery.start();
}

describe('notifications sinks', () => {
  it('a waiting preview reaches its reviewers (Slack body, signed); opted out: left out; nobody left: not sent', async () => {
    const slack = receiver();
    const json = receiver();
    const prefs = new NotificationPrefs(store);
    start(
      [
        { name: 'chat', url: await slack.listen() },
        { name: 'pager', url: await json.listen(), format: 'json', notify: ['freeze.ending-soon'] },
      ],
      prefs,
    );
    await store.append(previewRequested('p-1'));
    await store.append(previewRequested('p-void', 'nothing'));
    await until('the first notification', () => slack.got.length === 1);
    const first = slack.got[0];
    expect(first?.signed).toBe(true);
    expect(first?.delivery).toBe('chat:1');
    expect(first?.body.text).toMatch(/^Prune preview for .*digital-human-dev waits for approval: developer asks/);
    expect(JSON.stringify(first?.body.blocks)).toContain('For @dev-reviewer, @reviewer');
    expect(JSON.stringify(first?.body.blocks)).toContain('https://console.example.com/prune-previews/p-1');

    await prefs.set('p-dr', 'prune.review-needed', false);
    await store.append(previewRequested('p-2'));
    await until('the second notification', () => slack.got.length === 2);
    expect(JSON.stringify(slack.got[1]?.body.blocks)).toContain('For @reviewer ·');

    await prefs.set('p-r', 'prune.review-needed', false);
    await store.append(previewRequested('p-3'));
    await store.append({
      time: new Date().toISOString(),
      type: 'freeze.ending-soon',
      actor: 'console',
      app: APP,
      cluster: 'nonprod',
      env: 'dev',
      data: { freezeId: 'f-1', expiresAt: '2026-12-02T10:15:00.000Z' },
    });
    // the pager hears the freeze only; the chat hears it too, and nothing for the preview nobody wants
    await until('the freeze reminders', () => json.got.length === 1 && slack.got.length === 3);
    expect(json.got[0]?.body).toMatchObject({
      kind: 'freeze.ending-soon',
      seq: 5,
      recipients: { users: ['oncall'], groups: [] },
      link: 'https://console.example.com/freezes/f-1',
    });
    expect(slack.got.map((g) => g.delivery)).toEqual(['chat:1', 'chat:3', 'chat:5']);
    // a person's choice back on
    await prefs.set('p-r', 'prune.review-needed', true);
    expect([...(await prefs.optedOut('prune.review-needed'))]).toEqual(['p-dr']);
    expect([...(await prefs.of('p-dr'))]).toEqual(['prune.review-needed']);
    await slack.close();
    await json.close();
  });
});

describe('the freeze reminder', () => {
  const freeze = (id: string, inMs: number, status = 'active'): FreezeRow =>
    ({
      id,
      cluster: 'prod',
      env: 'prod',
      app: 'prod/flux-system/kustomization/x',
      status,
      expiresAt: new Date(NOW + inMs).toISOString(),
      doc: { targets: [] },
    }) as unknown as FreezeRow;
  const NOW = Date.parse('2026-12-02T10:00:00Z');

  it('records once per freeze and expiry, finds earlier records after a restart, and leaves the others', async () => {
    const rows = [
      freeze('soon', 10 * 60_000),
      freeze('later', 40 * 60_000),
      freeze('past', -1000),
      freeze('ending', 5 * 60_000, 'ending'),
    ];
    const freezes = { list: async () => rows };
    const recorder = { record: async (e: EvidenceInput) => void (await store.append(e)) };
    const mk = () => new FreezeReminder({ freezes, store, recorder, log: quiet, now: () => NOW });
    const a = mk();
    expect(await a.tick()).toBe(1);
    expect(await a.tick()).toBe(0);
    expect(await mk().tick()).toBe(0); // a new replica (or a restart) finds it in the chain
    const [rec] = await store.list({ type: 'freeze.ending-soon' });
    expect(rec).toMatchObject({ app: 'prod/flux-system/kustomization/x', env: 'prod', actor: 'console' });
    expect(rec?.data).toMatchObject({ freezeId: 'soon', minutesLeft: 10 });
    // extended: a new expiry, a new reminder once it is near
    rows[0] = freeze('soon', 12 * 60_000);
    expect(await a.tick()).toBe(1);
    expect(await store.list({ type: 'freeze.ending-soon' })).toHaveLength(2);
  });
});
