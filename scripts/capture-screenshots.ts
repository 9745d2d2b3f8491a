// The docs' screenshots (README.md, docs/guide/) — the overview, the app page, a release chain and the Try-it page, in light and dark
// mode — from the real sandbox (reused when it runs) through the built SPA and the BFF in sandbox mode (what
// `npm start` runs), signed in as admin:
//   npx vite build && npx tsx scripts/capture-screenshots.ts
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { REPO_ROOT, startSandbox } from '../sandbox/sandbox.ts';
import { CHROMIUM_ARGS, spawnBff } from '../test/support/bff-process.ts';

const PAGES = [
  { name: 'overview', path: '/', ready: '[data-testid="app-card"]' },
  {
    name: 'app-page',
    path: '/apps/nonprod/flux-system/kustomization/digital-human-dev',
    ready: '[data-testid="tree-row"]',
  },
  {
    name: 'release-chain',
    path: '/apps/nonprod/flux-system/kustomization/digital-human-dev',
    ready: '[data-testid="release"]',
    scrollTo: '[data-testid="release"]',
  },
  { name: 'try-it', path: '/try', ready: '[data-testid="tryit-card"]' },
];

await startSandbox({ reuse: true });
const bff = await spawnBff('console-screenshots', { env: { CONSOLE_SANDBOX: '1' } });
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
try {
  for (const colorScheme of ['light', 'dark'] as const) {
    const ctx = await browser.newContext({
      baseURL: bff.base,
      storageState: bff.storageState,
      colorScheme,
      viewport: { width: 1280, height: 900 },
    });
    const page = await ctx.newPage();
    for (const p of PAGES) {
      await page.goto(p.path);
      await page.locator(p.ready).first().waitFor({ timeout: 120_000 });
      if ('scrollTo' in p && p.scrollTo) await page.locator(p.scrollTo).first().scrollIntoViewIfNeeded();
      await page.waitForTimeout(1500); // the live stream's first update and the lazy panels
      const file = join(REPO_ROOT, 'docs', `${p.name}-${colorScheme}.png`);
      await page.screenshot({ path: file });
      console.log(file);
    }
    await ctx.close();
  }
} finally {
  await browser.close();
  await bff.stop();
}
