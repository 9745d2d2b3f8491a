// The start-up estimate on a warm and on a cold machine, fed build.sh's real log lines: a component already in
// the binary cache costs seconds (looked up before build.sh says anything about it), a missing one its cold build.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ASSETS_SECONDS,
  CACHED_SECONDS,
  BuildProgress,
  TYPICAL_SECONDS,
  TYPICAL_START_SECONDS,
  cachedComponents,
  componentsOf,
} from '../../sandbox/build-progress.ts';
import { REPO_ROOT } from '../../sandbox/state.ts';

const root = mkdtempSync(join(tmpdir(), 'build-progress-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const components = componentsOf(readFileSync(join(REPO_ROOT, 'sandbox/build.sh'), 'utf8'));

/** A cache directory laid out as build.sh leaves it: <dir>/bin/<component>-<key>/<binary>. */
function cacheWith(names: string[]): { times: string; bin: string } {
  const dir = mkdtempSync(join(root, 'cache-'));
  for (const [i, n] of names.entries()) {
    const d = join(dir, 'bin', `${n}-${String(i).padStart(16, 'a')}`);
    mkdirSync(d, { recursive: true });
    writeFileSync(join(d, n), '#!/bin/sh\n', { mode: 0o755 });
  }
  return { times: join(dir, 'build-times.json'), bin: join(dir, 'bin') };
}

// build.sh's lines on a warm machine (as printed by `bash sandbox/build.sh`, every binary cached)
const warmLog = [
  ...components.map(
    (c, i) =>
      `[sandbox build 17:54:${String(43 + Math.floor(i / 4)).padStart(2, '0')}] ${c} cached (/root/.cache/gitops-console/sandbox/bin/${c}-${String(i).padStart(16, 'a')})`,
  ),
  '[sandbox build 17:54:49] assets ready in /work/main/.sandbox/assets',
];

describe('the start-up estimate', () => {
  it('knows every component build.sh builds, those built by their own function (Argo CD) too, each with a cold time', () => {
    expect(components).toEqual(expect.arrayContaining(['etcd', 'kube', 'flux-source', 'gitea', 'argocd']));
    expect(componentsOf('build_argocd() {\n}\nif want argo; then build_argocd & pid=$!; fi\n')).toEqual(['argocd']);
    for (const c of components) expect(TYPICAL_SECONDS[c], c).toBeGreaterThan(0);
  });

  it('finds the cached components in the binary cache (and only keyed, non-empty entries)', () => {
    const c = cacheWith(['etcd', 'kube']);
    mkdirSync(join(c.bin, 'kwok-0123456789abcdef.tmp.42'), { recursive: true }); // a build under way
    mkdirSync(join(c.bin, 'kustomize-0123456789abcdef'), { recursive: true }); // empty
    writeFileSync(join(c.bin, 'flux-source-0123456789abcdef'), ''); // not a directory
    expect([...cachedComponents(c.bin, components)].sort()).toEqual(['etcd', 'kube']);
    expect(cachedComponents(join(root, 'nowhere'), components).size).toBe(0);
  });

  it('says "about 1 min" from the first line on a warm machine, and counts seconds, not cold builds', () => {
    const c = cacheWith(components);
    let now = 0;
    const p = new BuildProgress([...components], c.times, () => now);
    // before build.sh said anything: the page already knows everything is cached
    const before = p.snapshot().estimateLeftS ?? Infinity;
    expect(before).toBeLessThanOrEqual(90);
    expect(p.summary()).toBe(`[sandbox 0/${components.length}] checking the cache · 0 s elapsed · about 1 min left`);
    const estimates: number[] = [];
    for (const line of warmLog) {
      now += 400;
      if (p.line(line)) {
        const s = p.snapshot();
        estimates.push(s.estimateLeftS ?? Infinity);
        expect(p.summary()).toMatch(/about (1 min|\d+ s) left$/);
      }
      if (/assets ready/.test(line)) p.finishBuild();
    }
    expect(estimates).toHaveLength(components.length);
    expect(Math.max(...estimates)).toBeLessThanOrEqual(90);
    // never growing: a cached component never costs more than it was estimated at
    for (let i = 1; i < estimates.length; i++) expect(estimates[i]).toBeLessThanOrEqual(estimates[i - 1] ?? 0);
    expect(p.snapshot()).toMatchObject({ phase: 'starting', done: components.length, total: components.length });
    expect(p.snapshot().estimateLeftS).toBeLessThanOrEqual(TYPICAL_START_SECONDS);
    // the start-up is remembered for the next estimate
    now += 40_000;
    p.ready();
    expect(JSON.parse(readFileSync(c.times, 'utf8'))).toEqual({ '(start)': 40 });
    expect(p.snapshot().estimateLeftS).toBe(0);
    const next = new BuildProgress([...components], c.times, () => 0);
    expect(next.snapshot().estimateLeftS).toBe(components.length * CACHED_SECONDS + ASSETS_SECONDS + 40);
  });

  it('gives the cold figures on a machine with nothing cached', () => {
    const c = cacheWith([]);
    let now = 0;
    const p = new BuildProgress([...components], c.times, () => now);
    const cold =
      components.reduce((t, n) => t + (TYPICAL_SECONDS[n] ?? 60), 0) + ASSETS_SECONDS + TYPICAL_START_SECONDS;
    expect(p.snapshot().estimateLeftS).toBe(cold);
    expect(p.line('[sandbox build 09:00:00] building etcd (etcd) ...')).toBe(true);
    expect(p.snapshot().estimateLeftS).toBe(cold);
    expect(p.summary()).toBe(
      `[sandbox 0/${components.length}] building etcd · 0 s elapsed · about ${Math.round(cold / 60)} min left`,
    );
    now = 100_000;
    expect(p.snapshot().estimateLeftS).toBe(cold - 100);
    p.line('[sandbox build 09:01:40] built etcd in 100s');
    p.line(
      '[sandbox build 09:01:40] building kube (kube-apiserver kube-controller-manager kube-scheduler kubectl) ...',
    );
    expect(p.snapshot().estimateLeftS).toBe(cold - (TYPICAL_SECONDS.etcd ?? 0));
  });

  it('an entry under an older key: counted as cached until build.sh says it builds, then its cold time', () => {
    const c = cacheWith(components);
    const p = new BuildProgress([...components], c.times, () => 0);
    const warm = p.snapshot().estimateLeftS ?? 0;
    p.line('[sandbox build 09:00:00] etcd cached (/root/.cache/gitops-console/sandbox/bin/etcd-b38a5bc424228ddd)');
    p.line(
      '[sandbox build 09:00:01] building kube (kube-apiserver kube-controller-manager kube-scheduler kubectl) ...',
    );
    expect(p.snapshot().estimateLeftS).toBe(warm - 2 * CACHED_SECONDS + (TYPICAL_SECONDS.kube ?? 0));
  });
});
