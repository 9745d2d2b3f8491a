// The verification state against a real HTTP endpoint: a configured versionHeader must name the release's own
// image (the digest Git pins or its tag resolved to, or the tag), so an endpoint still answering with the
// previous image's digest fails the release naming both values; a missing header fails; the right one passes;
// a release that names no image cannot be compared and is unknown, never verified on presence.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../domain/app.ts';
import type { ObjectIndex } from '../kube/object-index.ts';
import { recordVerification } from './record-verification.ts';
import type { ReleaseRecorderOptions } from './recorder-options.ts';
import type { StateContext, Tracked } from './tracking.ts';

const D_NEW = `sha256:${'a'.repeat(64)}`;
const D_OLD = `sha256:${'b'.repeat(64)}`;
const IMAGE = 'registry.example.com/shop/web';

const dir = mkdtempSync(join(tmpdir(), 'record-verification-'));
let server: Server;
/** what the endpoint says in X-Image-Digest now (undefined: no header) */
let answer: string | undefined;

beforeAll(async () => {
  server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', ...(answer ? { 'x-image-digest': answer } : {}) });
    res.end('{"status":"ok"}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  writeFileSync(
    join(dir, 'verifications.json'),
    JSON.stringify({ 'c/dev': { url: `http://127.0.0.1:${port}/health`, versionHeader: 'X-Image-Digest' } }),
  );
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const app = {
  id: 'c/flux-system/kustomization/web-dev',
  name: 'web-dev',
  cluster: 'c',
  env: 'dev',
  inventory: [{ group: 'apps', version: 'v1', kind: 'Deployment', namespace: 'shop', name: 'web' }],
} as unknown as App;

/** One Deployment whose one running Pod runs the release's image (so only the HTTP check decides), or none. */
function context(withPod = true): { ctx: StateContext; emitted: Array<Record<string, unknown>> } {
  const deployment = { kind: 'Deployment', metadata: { uid: 'd1', name: 'web', namespace: 'shop' } };
  const pod = {
    kind: 'Pod',
    metadata: { uid: 'p1', name: 'web-1', namespace: 'shop' },
    status: {
      phase: 'Running',
      containerStatuses: [{ name: 'web', image: `${IMAGE}:1.4.2`, imageID: `${IMAGE}@${D_NEW}` }],
    },
  };
  const index = {
    get: () => deployment,
    childrenOf: (_c: string, uid: string) => (uid === 'd1' && withPod ? [pod] : []),
  } as unknown as ObjectIndex;
  const emitted: Array<Record<string, unknown>> = [];
  const o = {
    index,
    verificationsFile: join(dir, 'verifications.json'),
    log: { info() {}, warn() {} },
  } as unknown as ReleaseRecorderOptions;
  return { ctx: { o, emit: (_a, _r, _s, _actor, data) => emitted.push(data), emitOther: () => undefined }, emitted };
}

const release = (images: Tracked['images']): Tracked => ({
  sha: 'c'.repeat(40),
  revision: `main@sha1:${'c'.repeat(40)}`,
  seenAt: 0,
  recorded: new Map(),
  healthAt: 0,
  images,
});
const tagged = [
  {
    image: `${IMAGE}:1.4.2`,
    object: 'Deployment/web',
    container: 'web',
    name: IMAGE,
    tag: '1.4.2',
    mutable: true,
    resolved: D_NEW,
  },
];

async function verify(images: Tracked['images'], withPod = true): Promise<Record<string, unknown>> {
  const { ctx, emitted } = context(withPod);
  await recordVerification(ctx, app, release(images), true);
  expect(emitted).toHaveLength(1);
  return emitted[0] as Record<string, unknown>;
}

describe('verification: the version header against the release', () => {
  it('the digest the release names: verified, the value recorded beside the expected one', async () => {
    answer = D_NEW;
    const d = await verify(tagged);
    expect(d.status).toBeUndefined();
    expect(d.http).toMatchObject({ ok: true, version: D_NEW, expectedVersions: [D_NEW, '1.4.2'] });
  });
  it("the previous image's digest: failed, naming both values", async () => {
    answer = D_OLD;
    const d = await verify(tagged);
    expect(d.status).toBe('failed');
    expect(d.reason).toBe(`HTTP check: X-Image-Digest is ${D_OLD}, expected ${D_NEW} or 1.4.2 (the release's image)`);
    expect(d.http).toMatchObject({ ok: false, version: D_OLD });
  });
  it('no header: failed', async () => {
    answer = undefined;
    const d = await verify(tagged);
    expect(d.status).toBe('failed');
    expect(d.reason).toBe(`HTTP check: no X-Image-Digest header in the answer, expected ${D_NEW} or 1.4.2`);
  });
  it('a release that names no image: unknown (nothing to compare with), never verified', async () => {
    answer = D_NEW;
    // (no Pods either: a Pod running an image Git does not name would fail the release on its own)
    const d = await verify([], false);
    expect(d.status).toBe('unknown');
    expect(String(d.reason)).toMatch(/X-Image-Digest is sha256:a+, but the release names no image digest or tag/);
  });
});

describe('verification when the images Git names are unknown (the render did not complete)', () => {
  it('is recorded at once as unknown, never failed for the digests it cannot judge', async () => {
    answer = D_NEW;
    const { ctx, emitted } = context(true);
    // right after health (the settle wait would hold a known release back for 90 s)
    await recordVerification(ctx, app, { ...release(undefined), healthAt: Date.now() }, false);
    expect(emitted).toHaveLength(1);
    expect(emitted[0]?.status).toBe('unknown');
    expect(String(emitted[0]?.reason)).toMatch(/images are unknown \(its render did not complete\)/);
  });
});
