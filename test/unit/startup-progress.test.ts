// The first start's progress: build.sh's own components and log lines drive it; the start-up server answers
// its page, its JSON and 503 for everything else, and frees the port when it closes.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BuildProgress, componentsOf } from '../../sandbox/build-progress.ts';
import { REPO_ROOT } from '../../sandbox/state.ts';
import { freePort } from '../../sandbox/procs.ts';
import { startStartupServer } from '../../src/server/startup-page.ts';

const dir = mkdtempSync(join(tmpdir(), 'startup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const script = readFileSync(join(REPO_ROOT, 'sandbox/build.sh'), 'utf8');

describe('build progress', () => {
  it('knows build.sh components in order', () => {
    const names = componentsOf(script);
    expect(names.slice(0, 3)).toEqual(['etcd', 'kube', 'kwok']);
    expect(names).toEqual(expect.arrayContaining(['flux-source', 'flux-kustomize', 'gitea', 'registry']));
    expect(names).not.toContain('COMPONENT');
  });

  it("follows build.sh's lines, estimates from typical times, then remembers this machine's", () => {
    let now = 0;
    const times = join(dir, 'times.json');
    const p = new BuildProgress(['etcd', 'kube', 'kwok'], times, () => now);
    expect(p.line('[sandbox build 10:00:00] etcd cached (/x/etcd-1)')).toBe(true);
    expect(p.line('[sandbox build 10:00:01] building kube (kube-apiserver kube-controller-manager) ...')).toBe(true);
    expect(p.line('go: downloading k8s.io/api v0.35.0')).toBe(false);
    now = 60_000;
    let s = p.snapshot();
    expect(s).toMatchObject({ phase: 'building', done: 1, total: 3, current: 'kube', elapsedS: 60 });
    // kube typical 660 s, 60 s in → 600 left; kwok typical 100; the assets 5 and the start-up 50
    expect(s.estimateLeftS).toBe(755);
    expect(p.summary()).toBe('[sandbox 1/3] building kube · 1 min 0 s elapsed · about 13 min left');
    p.line('[sandbox build 10:05:00] built kube in 300s');
    s = p.snapshot();
    expect(s.components.find((c) => c.name === 'kube')).toEqual({ name: 'kube', state: 'built', seconds: 300 });
    expect(JSON.parse(readFileSync(times, 'utf8'))).toEqual({ kube: 300 });
    // the next machine start estimates kube from this one
    const next = new BuildProgress(['kube'], times, () => 0);
    expect(next.snapshot().estimateLeftS).toBe(300 + 5 + 50);
    p.finishBuild();
    expect(p.snapshot().phase).toBe('starting');
  });
});

describe('start-up server', () => {
  it('serves the page, the progress and 503 for the rest; closing frees the port for the console', async () => {
    const port = await freePort();
    const p = new BuildProgress(['etcd', 'kube'], undefined);
    p.line('[sandbox build 10:00:01] building kube (kube-apiserver) ...');
    const s = await startStartupServer('127.0.0.1', port, () => p.snapshot());
    const base = `http://127.0.0.1:${port}`;
    const page = await fetch(base, { headers: { Accept: 'text/html' } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('compiled from their Go modules once');
    expect(html).toContain('role="status"');
    const js = await fetch(`${base}/api/startup`);
    expect(((await js.json()) as { startup: { current: string } }).startup.current).toBe('kube');
    const api = await fetch(`${base}/api/apps`);
    expect(api.status).toBe(503);
    expect(api.headers.get('retry-after')).toBe('5');
    await s.close();
    // the console takes the same port
    const next = createServer((_q, r) => r.end('console'));
    await new Promise<void>((r) => next.listen(port, '127.0.0.1', () => r()));
    expect(await (await fetch(base)).text()).toBe('console');
    await new Promise<void>((r) => next.close(() => r()));
  });
});
