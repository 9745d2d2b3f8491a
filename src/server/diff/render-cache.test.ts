import { describe, expect, it } from 'vitest';
import type { RenderInput } from './desired.ts';
import { RenderCache, renderKey } from './render-cache.ts';
import type { RenderResult, RenderTools } from './render.ts';

const tools: RenderTools = { fluxRender: 'flux-render', kustomize: 'kustomize', workDir: '/tmp/x' };
const source = (digest: string, revision = 'main@sha1:aaaa') => ({
  apiVersion: 'source.toolkit.fluxcd.io/v1',
  kind: 'GitRepository',
  metadata: { name: 'repo', namespace: 'flux-system', resourceVersion: '7' },
  status: { artifact: { url: 'http://source/repo.tar.gz', digest, revision }, conditions: [] },
});
const ks = (over: Record<string, unknown> = {}, md: Record<string, unknown> = {}) => ({
  apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
  kind: 'Kustomization',
  metadata: { name: 'app', namespace: 'flux-system', resourceVersion: '1', generation: 1, ...md },
  spec: { path: './overlays/dev', prune: true, ...over },
  status: { lastAppliedRevision: 'main@sha1:aaaa' },
});
const flux = (k = ks(), s: Record<string, unknown> | undefined = source('sha256:1')): RenderInput => ({
  controller: 'flux',
  kustomization: k,
  source: s,
});
const argo = (revision: string, over: Partial<Extract<RenderInput, { controller: 'argocd' }>> = {}): RenderInput => ({
  controller: 'argocd',
  repoURL: 'http://git/repo.git',
  revision,
  path: 'overlays/dev',
  namespace: 'dev',
  helm: { appName: 'app' },
  ...over,
});
const SHA = 'a'.repeat(40);

describe('renderKey: what determines a render, and nothing else', () => {
  const base = renderKey(flux(), tools);
  it.each<[string, RenderInput]>([
    ['the Kustomization status changes', flux({ ...ks(), status: { lastAppliedRevision: 'main@sha1:bbbb' } })],
    [
      'its resourceVersion / generation change without a spec change',
      flux(ks({}, { resourceVersion: '99', generation: 1 })),
    ],
    [
      'the app is suspended, or its interval or prune option changes',
      flux(ks({ suspend: true, interval: '1m', prune: false })),
    ],
    [
      'the source object changes but not its artifact',
      flux(ks(), { ...source('sha256:1'), metadata: { resourceVersion: '8' } }),
    ],
  ])('same key when %s', (_, input) => expect(renderKey(input, tools)).toBe(base));

  it.each<[string, RenderInput]>([
    ['the artifact digest changes (a new commit)', flux(ks(), source('sha256:2'))],
    ['the artifact revision changes', flux(ks(), source('sha256:1', 'main@sha1:bbbb'))],
    ['the spec changes (e.g. a patch, a path)', flux(ks({ path: './overlays/staging' }))],
    [
      'a substituted ConfigMap value changes (merged into postBuild.substitute)',
      flux(ks({ postBuild: { substitute: { REPLICAS: '3' }, substituteFrom: [] } })),
    ],
    ['another Kustomization', flux(ks({}, { name: 'other' }))],
  ])('another key when %s', (_, input) => expect(renderKey(input, tools)).not.toBe(base));

  it('another renderer binary, another key', () =>
    expect(renderKey(flux(), { ...tools, fluxRender: '/other/flux-render' })).not.toBe(base));

  it('no source or no artifact yet: not cacheable', () => {
    expect(renderKey({ controller: 'flux', kustomization: ks(), source: undefined }, tools)).toBeUndefined();
    expect(renderKey(flux(ks(), { ...source('sha256:1'), status: {} }), tools)).toBeUndefined();
  });

  it('Argo CD: only an immutable commit is cached; path, namespace and Helm options are in the key', () => {
    expect(renderKey(argo('main'), tools)).toBeUndefined();
    expect(renderKey(argo('v1.2.0'), tools)).toBeUndefined();
    const k = renderKey(argo(SHA), tools);
    expect(k).toMatch(/^[0-9a-f]{64}$/);
    expect(renderKey(argo(SHA), tools)).toBe(k);
    expect(renderKey(argo('b'.repeat(40)), tools)).not.toBe(k);
    expect(renderKey(argo(SHA, { path: 'overlays/prod' }), tools)).not.toBe(k);
    expect(renderKey(argo(SHA, { namespace: 'prod' }), tools)).not.toBe(k);
    expect(renderKey(argo(SHA, { helm: { appName: 'app', parameters: [{ name: 'r', value: '2' }] } }), tools)).not.toBe(
      k,
    );
  });
});

describe('RenderCache', () => {
  const result = (n: number): RenderResult => ({
    objects: Array.from({ length: n }, (_, i) => ({ kind: 'ConfigMap', metadata: { name: `c${i}` } })),
    renderer: 'fake',
    revision: 'r',
    renderHash: 'sha256:x',
  });

  it('renders once per key; a new revision renders again', async () => {
    let runs = 0;
    const c = new RenderCache({ render: async () => (runs++, result(2)) });
    const a = await c.render(flux(), tools);
    const b = await c.render(flux(ks({}, { resourceVersion: '2' })), tools);
    expect([a.cached, b.cached, runs]).toEqual([false, true, 1]);
    expect(b.result).toBe(a.result);
    expect((await c.render(flux(ks(), source('sha256:2')), tools)).cached).toBe(false);
    expect(c.stats()).toMatchObject({ renders: 2, hits: 1, entries: 2, objects: 4 });
  });

  it('concurrent renders of one key share one run', async () => {
    let runs = 0;
    const c = new RenderCache({ render: () => (runs++, new Promise((r) => setTimeout(() => r(result(1)), 20))) });
    const [a, b] = await Promise.all([c.render(flux(), tools), c.render(flux(), tools)]);
    expect(runs).toBe(1);
    expect(a.result).toBe(b.result);
  });

  it('does not cache a failure, nor an input that does not pin its content', async () => {
    let runs = 0;
    const c = new RenderCache({
      render: async () => {
        runs++;
        if (runs === 1) throw new Error('kustomize build failed');
        return result(1);
      },
    });
    await expect(c.render(flux(), tools)).rejects.toThrow('kustomize build failed');
    expect((await c.render(flux(), tools)).cached).toBe(false);
    await c.render(argo('main'), tools);
    expect((await c.render(argo('main'), tools)).cached).toBe(false);
    expect(runs).toBe(4);
  });

  it('is bounded by entries and by objects held', async () => {
    const c = new RenderCache({ maxEntries: 2, maxObjects: 5, render: async () => result(2) });
    for (const d of ['1', '2', '3']) await c.render(flux(ks(), source(`sha256:${d}`)), tools);
    expect(c.stats()).toMatchObject({ entries: 2, objects: 4 });
    expect((await c.render(flux(ks(), source('sha256:1')), tools)).cached).toBe(false); // evicted first
    const big = new RenderCache({ maxObjects: 5, render: async () => result(6) });
    await big.render(flux(), tools);
    expect(big.stats()).toMatchObject({ entries: 0, objects: 0 });
  });
});
