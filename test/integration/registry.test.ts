// Issue #15 acceptance, registry part: CNCF Distribution in the sandbox with the seed's images,
// the kubelet stand-in's imageIDs (a simulation), a moved tag, and the business endpoints.
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../sandbox/procs.ts';
import { resolveDigest, SANDBOX_IMAGES } from '../../sandbox/registry.ts';
import { kubectl } from '../../sandbox/sandbox.ts';
import {
  businessEndpointUrl,
  getJson,
  makeRegistryReachable,
  makeRegistryUnreachable,
  moveImageTag,
  sandboxRegistry,
  setBusinessEndpoint,
} from '../../sandbox/scenario.ts';
import { PROD_RENDER_WORKER_DIGEST, SEED_IMAGE_HOST } from '../../sandbox/seed.ts';

type Json = Record<string, unknown>;
const HOST = SEED_IMAGE_HOST;

const digestOf = (ref: string) => {
  const d = sandboxRegistry().images.find((i) => i.ref === ref)?.digest;
  if (!d) throw new Error(`no image ${ref} pushed`);
  return d;
};

function pods(cluster: string, ns: string, app: string): Json[] {
  return getJson(cluster, ['-n', ns, 'get', 'pods', '-l', `app.kubernetes.io/name=${app}`]).items as Json[];
}
const imageIds = (p: Json) =>
  (((p.status as Json).containerStatuses as Json[] | undefined) ?? []).map((c) => String(c.imageID ?? ''));
const isLive = (p: Json) => !(p.metadata as Json).deletionTimestamp && (p.status as Json).phase === 'Running';

describe('registry and imageIDs (kubelet stand-in, a simulation)', () => {
  afterAll(async () => {
    await makeRegistryReachable();
  });

  it('serves every image of the seed, deterministic digests; prod pins a real one', async () => {
    const reg = sandboxRegistry();
    expect(Object.keys(SANDBOX_IMAGES).length).toBe(4);
    for (const [repo, tags] of Object.entries(SANDBOX_IMAGES)) {
      expect(tags.length).toBeGreaterThanOrEqual(2);
      for (const tag of tags) {
        const d = await resolveDigest(reg, `${HOST}/${repo}:${tag}`);
        expect(d).toMatch(/^sha256:[0-9a-f]{64}$/);
      }
    }
    expect(digestOf('digital-human/render-worker:1.4.2')).toBe(PROD_RENDER_WORKER_DIGEST);
    expect(await resolveDigest(reg, `${HOST}/digital-human/render-worker@${PROD_RENDER_WORKER_DIGEST}`)).toBe(
      PROD_RENDER_WORKER_DIGEST,
    );
    expect(await resolveDigest(reg, `${HOST}/digital-human/nope:1`)).toBeUndefined();
  });

  it("sets each Pod's imageID to the digest the registry resolves (dev by tag, prod by digest)", async () => {
    const dev = `${HOST}/digital-human/render-worker@${digestOf('digital-human/render-worker:1.5.0-rc.1')}`;
    const prod = `${HOST}/digital-human/render-worker@${PROD_RENDER_WORKER_DIGEST}`;
    await waitFor(
      'imageIDs on the render worker pods',
      async () => {
        const d = pods('nonprod', 'dev', 'render-worker').filter(isLive);
        const p = pods('prod', 'prod', 'render-worker').filter(isLive);
        return (
          d.length > 0 &&
          p.length > 0 &&
          d.every((x) => imageIds(x).every((id) => id === dev)) &&
          p.every((x) => imageIds(x).every((id) => id === prod))
        );
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    const one = pods('nonprod', 'dev', 'render-worker').find(isLive);
    const managers = ((one?.metadata as Json).managedFields as Array<{ manager: string; subresource?: string }>).map(
      (m) => `${m.manager}/${m.subresource ?? ''}`,
    );
    expect(managers).toContain('sandbox-kubelet-sim/status');
  });

  it("a moved tag makes the next Pod's imageID differ", async () => {
    const repo = 'digital-human/tts-gateway';
    const before = digestOf(`${repo}:2.1.0`);
    const beforeId = `${HOST}/${repo}@${before}`;
    await waitFor(
      'staging tts-gateway pods with imageIDs',
      async () => {
        const p = pods('nonprod', 'staging', 'tts-gateway').filter(isLive);
        return p.length > 0 && p.every((x) => imageIds(x)[0] === beforeId);
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    const moved = moveImageTag(repo, '2.1.0', '2.1.0-build.2');
    try {
      expect(moved).toBe(digestOf(`${repo}:2.1.0-build.2`));
      expect(moved).not.toBe(before);
      expect(await resolveDigest(sandboxRegistry(), `${HOST}/${repo}:2.1.0`)).toBe(moved);
      const old = pods('nonprod', 'staging', 'tts-gateway').filter(isLive);
      const victim = String((old[0]?.metadata as Json).name);
      const keep = old.slice(1).map((p) => String((p.metadata as Json).name));
      kubectl('nonprod', ['-n', 'staging', 'delete', 'pod', victim, '--wait=false']);
      await waitFor(
        'a new tts-gateway pod with the moved digest',
        async () => {
          const now = pods('nonprod', 'staging', 'tts-gateway').filter(isLive);
          const fresh = now.filter((p) => ![victim, ...keep].includes(String((p.metadata as Json).name)));
          return fresh.length > 0 && fresh.every((p) => imageIds(p)[0] === `${HOST}/${repo}@${moved}`);
        },
        { timeoutMs: 60_000, intervalMs: 1000 },
      );
      // the pods that were already running keep the digest they pulled
      for (const name of keep) {
        const p = getJson('nonprod', ['-n', 'staging', 'get', 'pod', name]);
        expect(imageIds(p)[0]).toBe(beforeId);
      }
    } finally {
      moveImageTag(repo, '2.1.0', before);
    }
    expect(await resolveDigest(sandboxRegistry(), `${HOST}/${repo}:2.1.0`)).toBe(before);
  });

  it('registry down: a new Pod waits for its imageID; back: it gets one', async () => {
    const victim = pods('nonprod', 'dev', 'session-cache').filter(isLive)[0];
    expect(victim).toBeDefined();
    const name = String((victim?.metadata as Json).name);
    // every session-cache Pod there is now (a rollout may leave a second one): the replacement is none of them
    const before = new Set(pods('nonprod', 'dev', 'session-cache').map((p) => String((p.metadata as Json).name)));
    await makeRegistryUnreachable();
    // the stand-in caches a resolved digest for 1.5 s: let any such entry expire
    await new Promise((r) => setTimeout(r, 2000));
    let fresh = '';
    try {
      kubectl('nonprod', ['-n', 'dev', 'delete', 'pod', name, '--wait=false']);
      await waitFor(
        'a replacement session-cache pod',
        async () => {
          const p = pods('nonprod', 'dev', 'session-cache').filter(
            (x) => isLive(x) && !before.has(String((x.metadata as Json).name)),
          );
          fresh = String((p[0]?.metadata as Json | undefined)?.name ?? '');
          return !!fresh;
        },
        { timeoutMs: 60_000, intervalMs: 500 },
      );
      expect(imageIds(getJson('nonprod', ['-n', 'dev', 'get', 'pod', fresh]))).toEqual(['']);
    } finally {
      await makeRegistryReachable();
    }
    const want = `${HOST}/digital-human/session-cache@${digestOf('digital-human/session-cache:7.2')}`;
    await waitFor(
      'the imageID after the registry is back',
      async () => imageIds(getJson('nonprod', ['-n', 'dev', 'get', 'pod', fresh]))[0] === want,
      { timeoutMs: 30_000, intervalMs: 1000 },
    );
  });
});

describe('business endpoints (stand-ins, a simulation)', () => {
  afterAll(() => {
    for (const env of ['dev', 'staging', 'prod']) setBusinessEndpoint(env, { mode: 'ok' });
  });

  it('answer per env with the digest the render worker runs', async () => {
    const r = await fetch(`${businessEndpointUrl('prod')}/healthz`);
    expect(r.status).toBe(200);
    expect(r.headers.get('x-sandbox-simulation')).toMatch(/stand-in/);
    expect(r.headers.get('x-image-digest')).toBe(PROD_RENDER_WORKER_DIGEST);
    const body = (await r.json()) as Json;
    expect(body.env).toBe('prod');
  });

  it('fail and slow on request', async () => {
    setBusinessEndpoint('staging', { mode: 'fail' });
    expect((await fetch(businessEndpointUrl('staging'))).status).toBe(503);
    setBusinessEndpoint('staging', { mode: 'slow', latencyMs: 800 });
    const t0 = Date.now();
    expect((await fetch(businessEndpointUrl('staging'))).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(750);
    setBusinessEndpoint('staging', { mode: 'ok' });
    expect((await fetch(businessEndpointUrl('staging'))).status).toBe(200);
  });
});
