// Issue #13, the first start: while the sandbox compiles, the console's address shows the build's progress
// (what is built and why, component, done/total, elapsed, estimate), accessible in light and dark mode, and
// turns into the console by itself when it listens on the same address. The start-up server is the real one
// (src/server/startup-page.ts) fed with build.sh's own log lines.
import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';
import { createServer, type Server } from 'node:http';
import { BuildProgress } from '../sandbox/build-progress.ts';
import { freePort } from '../sandbox/procs.ts';
import { startStartupServer } from '../src/server/startup-page.ts';

for (const colorScheme of ['light', 'dark'] as const)
  test(`the start-up page shows the build and becomes the console (${colorScheme})`, async ({ browser }) => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const progress = new BuildProgress(['jq-del', 'etcd', 'kube', 'kwok'], undefined);
    progress.line('[sandbox build 10:00:00] jq-del cached (/x)');
    progress.line('[sandbox build 10:00:00] etcd cached (/x)');
    progress.line('[sandbox build 10:00:01] building kube (kube-apiserver kube-controller-manager) ...');
    const server = await startStartupServer('127.0.0.1', port, () => progress.snapshot());
    const ctx = await browser.newContext({ colorScheme });
    let consoleServer: Server | undefined;
    try {
      const page = await ctx.newPage();
      await page.goto(base);
      await expect(page).toHaveTitle('Starting — GitOps console');
      await expect(page.getByRole('status')).toContainText('Compiling kube — 2 of 4 components ready');
      await expect(page.getByRole('status')).toContainText('left');
      await expect(page.getByText('compiled from their Go modules once')).toBeVisible();
      const r = await new AxeBuilder({ page }).analyze();
      const bad = r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      logLine(`axe start-up page (${colorScheme}): ${bad.reduce((n, v) => n + v.nodes.length, 0)} serious/critical`);
      expect(bad.map((v) => v.id)).toEqual([]);
      // the page follows the build
      progress.line('[sandbox build 10:06:00] built kube in 359s');
      progress.line('[sandbox build 10:06:01] kwok cached (/x)');
      progress.finishBuild();
      await expect(page.getByRole('status')).toContainText('Starting the clusters');
      await expect(page.getByRole('listitem').filter({ hasText: 'kube: built in 5 min 59 s' })).toBeVisible();
      // the sandbox is up: the start-up server closes, the console listens on the same address a moment later
      progress.ready();
      await server.close();
      await new Promise((r) => setTimeout(r, 2000)); // a gap in which nothing listens
      consoleServer = createServer((_q, res) => {
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
        res.end('<!doctype html><title>All apps — GitOps console</title><p>console</p>');
      });
      await new Promise<void>((r) => consoleServer?.listen(port, '127.0.0.1', () => r()));
      await expect(page).toHaveTitle('All apps — GitOps console', { timeout: 15_000 });
    } finally {
      await ctx.close();
      await server.close().catch(() => undefined);
      await new Promise<void>((r) => (consoleServer ? consoleServer.close(() => r()) : r()));
    }
  });

function logLine(s: string): void {
  process.stdout.write(`${s}\n`);
}
