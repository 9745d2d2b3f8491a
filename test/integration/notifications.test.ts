// Issue 28, notifications, against the real sandbox: a developer's prune preview in dev reaches its reviewers
// (a Slack-compatible body on a test receiver, on 127.0.0.1): the accounts who may approve in nonprod/dev, never
// the requester or anyone without the role there; a reviewer who opts out in their own settings is left out of
// the next one (and can only ever change their own); on-call hears, through a JSON sink, that a freeze ends in 15
// minutes — a `freeze.ending-soon` record in the chain. The file owns its estate (test/support/own-estate.ts: the
// dev template in a governed namespace of its own, env dev, as the seed's dev): the probe object is a hand-made
// ConfigMap there carrying its Kustomization's tracking labels (a candidate the controller never applied), and the
// freeze is on its app; both go with the estate.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { SIGNATURE_HEADER, verifySignature } from '../../src/server/sinks/signature.ts';
import { freePort, waitFor } from '../../sandbox/procs.ts';
import { kubectl } from '../../sandbox/state.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { startTestConsole } from '../support/console.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../support/own-estate.ts';

const PROBE = `notify-probe-${Date.now().toString(36)}`;
const SECRET = `notify-test-${Date.now()}-0123456789abcdef`;

interface Got {
  body: Record<string, unknown>;
  signed: boolean;
}

function receiver() {
  const got: Got[] = [];
  let server: Server | undefined;
  return {
    got,
    listen: () =>
      new Promise<string>((resolve) => {
        server = createServer((req, res) => {
          let body = '';
          req.on('data', (c: Buffer) => (body += c.toString()));
          req.on('end', () => {
            got.push({
              body: JSON.parse(body) as Record<string, unknown>,
              signed: verifySignature(SECRET, body, String(req.headers[SIGNATURE_HEADER]), Date.now() / 1000),
            });
            res.writeHead(200).end();
          });
        });
        server.listen(0, '127.0.0.1', () =>
          resolve(`http://127.0.0.1:${(server?.address() as { port: number }).port}/hook`),
        );
      }),
    close: () =>
      new Promise<void>((r) => {
        if (!server) return r();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

let estate: Estate;
let CLUSTER: string;
let APP: string;
let dir: string;
let con: Awaited<ReturnType<typeof startTestConsole>>;
let base: string;
let developer: Signed;
let devReviewer: Signed;
let oncall: Signed;
const chat = receiver();
const pager = receiver();
let freezeId: string | undefined;

beforeAll(async () => {
  estate = await ownEstate({ name: 'notifications', env: 'dev', files: digitalHumanTemplate('dev'), governed: true });
  CLUSTER = estate.cluster;
  APP = estate.appId();
  const chatUrl = await chat.listen();
  const pagerUrl = await pager.listen();
  dir = mkdtempSync(join(tmpdir(), 'notify-it-'));
  const secretFile = join(dir, 'hmac');
  writeFileSync(secretFile, `${SECRET}\n`);
  chmodSync(secretFile, 0o600);
  const sinksFile = join(dir, 'sinks.json');
  writeFileSync(
    sinksFile,
    JSON.stringify({
      sinks: [
        { name: 'chat', url: chatUrl, secretFile, format: 'slack', notify: ['prune.review-needed'] },
        { name: 'pager', url: pagerUrl, secretFile, format: 'json', notify: ['freeze.ending-soon'] },
      ],
    }),
  );
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  // the estate's cluster only: the informers of the other cluster are no part of this file
  con = await startTestConsole({
    CONSOLE_CONTEXTS: CLUSTER,
    CONSOLE_PORT: String(port),
    CONSOLE_PUBLIC_URL: base,
    CONSOLE_EVENT_SINKS_FILE: sinksFile,
  });
  developer = await signIn(con.url, 'developer', undefined, base);
  devReviewer = await signIn(con.url, 'dev-reviewer', undefined, base);
  oncall = await signIn(con.url, 'oncall', undefined, base);
  // a live object with the dev Kustomization's tracking labels that Git does not hold: a prune candidate
  kubectl(CLUSTER, ['-n', estate.namespace, 'create', 'configmap', PROBE, '--from-literal=probe=notifications']);
  kubectl(CLUSTER, [
    ...['-n', estate.namespace, 'label', 'configmap', PROBE],
    `kustomize.toolkit.fluxcd.io/name=${estate.kustomization()}`,
    'kustomize.toolkit.fluxcd.io/namespace=flux-system',
  ]);
}, 300_000);

afterAll(async () => {
  try {
    // a freeze still open is ended (its record closed), though its app goes with the estate
    if (freezeId)
      await as(oncall, con.url, `/api/freezes/${freezeId}/end`, { method: 'POST', body: { decisions: [] } });
  } finally {
    await con?.close();
    await chat.close();
    await pager.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    await estate?.teardown();
  }
}, 180_000);

/** a preview by the developer once the console lists the probe as a candidate */
async function requestPreview(): Promise<string> {
  let id = '';
  await waitFor(
    'a pending preview with the probe',
    async () => {
      const r = await as(developer, con.url, `/api/apps/${APP}/prune-previews`, { method: 'POST' });
      if (r.status !== 200) return false;
      const p = (r.body as { preview: { id: string; status: string; candidates: Array<{ ref: { name: string } }> } })
        .preview;
      id = p.id;
      return p.status === 'pending' && p.candidates.some((c) => c.ref.name === PROBE);
    },
    { timeoutMs: 90_000, intervalMs: 2000 },
  );
  return id;
}

/** the chat message about one preview (there may be earlier ones: a preview the wait above re-requested) */
async function messageAbout(previewId: string): Promise<Got> {
  let m: Got | undefined;
  await waitFor(
    `the chat message about preview ${previewId}`,
    async () => {
      m = chat.got.find((g) => JSON.stringify(g.body).includes(`/prune-previews/${previewId}`));
      return !!m;
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  );
  return m as Got;
}

const audience = (m: Got) =>
  /For ([^·"]*)/.exec(JSON.stringify((m.body.blocks as unknown[])[1]))?.[1]?.trim() ?? 'no audience line';

describe('notifications (issue 28)', () => {
  it("a reviewer's notification arrives when a preview is requested: the reviewers of dev, never the requester", async () => {
    const id = await requestPreview();
    const m = await messageAbout(id);
    expect(m.signed).toBe(true);
    expect(m.body.text).toMatch(
      new RegExp(`^Prune preview for .*${estate.kustomization()} waits for approval: developer asks to delete`),
    );
    expect(audience(m)).toBe('@dev-reviewer, @reviewer');
    expect(JSON.stringify(m.body)).toContain(`${base}/prune-previews/${encodeURIComponent(id)}`);
    // names, states and a link: not the candidates' names or their data
    expect(JSON.stringify(m.body)).not.toContain(PROBE);
    expect(pager.got.filter((g) => JSON.stringify(g.body).includes('prune'))).toEqual([]);
  });

  it('a reviewer who opts out is left out of the next one; nobody can choose for someone else', async () => {
    const before = await as(devReviewer, con.url, '/api/me/notifications');
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ viaGroups: false });
    const mine = (before.body as { kinds: Array<{ kind: string; subscribed: boolean; yours: boolean }> }).kinds;
    expect(mine.find((k) => k.kind === 'prune.review-needed')).toMatchObject({ subscribed: true, yours: true });
    expect(mine.find((k) => k.kind === 'freeze.ending-soon')).toMatchObject({ subscribed: true, yours: false });
    // a body naming another person is refused, whole
    const other = await as(devReviewer, con.url, '/api/me/notifications', {
      method: 'PUT',
      body: { kind: 'prune.review-needed', subscribed: false, user: 'reviewer' },
    });
    expect(other.status).toBe(400);
    const bad = await as(devReviewer, con.url, '/api/me/notifications', {
      method: 'PUT',
      body: { kind: 'prune.everything', subscribed: false },
    });
    expect(bad.status).toBe(400);
    const off = await as(devReviewer, con.url, '/api/me/notifications', {
      method: 'PUT',
      body: { kind: 'prune.review-needed', subscribed: false },
    });
    expect(off.status, off.text).toBe(200);
    // the reviewer's own choices are untouched
    const reviewer = await signIn(con.url, 'reviewer', undefined, base);
    const theirs = (await as(reviewer, con.url, '/api/me/notifications')).body as {
      kinds: Array<{ kind: string; subscribed: boolean }>;
    };
    expect(theirs.kinds.every((k) => k.subscribed)).toBe(true);

    const id = await requestPreview();
    expect(audience(await messageAbout(id))).toBe('@reviewer');
  });

  it('on-call hears that a freeze ends in 15 minutes (JSON sink), and the chain says so', async () => {
    const r = await as(oncall, con.url, '/api/freezes', {
      method: 'POST',
      body: { cluster: CLUSTER, app: APP, reason: 'notifications test', minutes: 10 },
    });
    expect(r.status, r.text).toBe(200);
    const id = (r.body as { freeze: { id: string } }).freeze.id;
    freezeId = id;
    let got: Got | undefined;
    // the delivering replica looks at the active freezes every 30 s
    await waitFor(
      'the pager message',
      async () => {
        got = pager.got.find((g) => g.body.kind === 'freeze.ending-soon' && JSON.stringify(g.body).includes(id));
        return !!got;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    expect(got?.signed).toBe(true);
    expect(got?.body).toMatchObject({
      kind: 'freeze.ending-soon',
      app: APP,
      link: `${base}/freezes/${encodeURIComponent(id)}`,
      recipients: { users: ['oncall'], groups: [] },
    });
    const chain = (await as(con.admin, con.url, '/api/evidence?type=freeze.ending-soon&limit=50')).body as {
      events: EvidenceEvent[];
    };
    expect(chain.events.filter((e) => e.data.freezeId === id)).toHaveLength(1);
    const ended = await as(oncall, con.url, `/api/freezes/${id}/end`, { method: 'POST', body: { decisions: [] } });
    expect(ended.status, ended.text).toBe(200);
    freezeId = undefined;
  });
});
