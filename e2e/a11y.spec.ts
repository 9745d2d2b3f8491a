// Issue #13: an automated accessibility check (axe-core) on every page and state the e2e suite visits,
// in light and dark mode. No violation of impact serious or critical; the count per page is printed.
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';

const DEV_APP = '/apps/nonprod/flux-system/kustomization/digital-human-dev';
const BLOCKING = new Set(['serious', 'critical']);

// every state is read-only (the seed's pages as they are): the states spread over the parallel project's workers
// instead of running one after another in one (this spec alone was 8 of the parallel project's 9 minutes)
test.describe.configure({ mode: 'parallel' });

/**
 * The rules whose outcome depends on colours: all that can differ between light and dark, whose pages have the same
 * structure, names and roles (only CSS variables change). The dark pass runs only these: axe's `cat.color` rules that
 * run by default (`color-contrast-enhanced`, AAA, is off by default and stays off).
 */
const COLOUR_RULES = ['color-contrast', 'link-in-text-block'];

async function audit(page: Page, name: string, only?: string[]): Promise<string[]> {
  const builder = new AxeBuilder({ page });
  const r = await (only ? builder.withRules(only) : builder).analyze();
  const bad = r.violations.filter((v) => BLOCKING.has(v.impact ?? ''));
  const count = bad.reduce((n, v) => n + v.nodes.length, 0);
  const rules = bad.map((v) => `${v.id}×${v.nodes.length}`).join(', ');
  console.log(`axe ${name}: ${count} serious/critical${rules ? ` (${rules})` : ''}`);
  return bad.flatMap((v) =>
    v.nodes.map((n) => `${name}: ${v.id} (${v.impact}) ${n.target.join(' ')} — ${n.failureSummary ?? v.help}`),
  );
}

const STATES: Array<{ name: string; show: (page: Page) => Promise<void> }> = [
  {
    name: 'overview',
    show: async (page) => {
      await page.goto('/');
      await expect(page.getByTestId('app-card').first()).toBeVisible();
      await expect(page.getByRole('heading', { name: 'Apps', level: 1 })).toBeVisible();
      await expect(page).toHaveTitle('All apps — GitOps console');
    },
  },
  {
    name: 'app page',
    show: async (page) => {
      await page.goto(DEV_APP);
      await expect(page.getByTestId('tree-row').first()).toBeVisible();
      await expect(page.getByTestId('env-compare')).toBeVisible();
      await expect(page).toHaveTitle('digital-human-dev · dev · nonprod — GitOps console');
    },
  },
  {
    name: 'tree, filtered',
    show: async (page) => {
      await page.goto(`${DEV_APP}?tq=render-worker`);
      await expect(page.locator('[data-testid="tree-row"][data-kind="Pod"]').first()).toBeVisible();
    },
  },
  {
    name: 'tree, nothing matches',
    show: async (page) => {
      await page.goto(`${DEV_APP}?tq=no-such-object`);
      await expect(page.getByTestId('tree-empty')).toContainText('No resources match');
    },
  },
  {
    name: 'graph',
    show: async (page) => {
      await page.goto(`${DEV_APP}?view=graph`);
      await expect(page.getByTestId('graph-box').first()).toBeVisible();
    },
  },
  {
    name: 'drawer',
    show: async (page) => {
      await page.goto(`${DEV_APP}?tk=Service`);
      await page.getByRole('button', { name: 'tts-gateway' }).click();
      await expect(page.getByTestId('live-yaml')).toBeVisible();
    },
  },
  {
    name: 'diff with monaco',
    show: async (page) => {
      await page.goto(DEV_APP);
      await page.getByLabel('show unchanged objects').check();
      const obj = page.locator('[data-testid="object-diff"][data-kind="Deployment"][data-name="render-worker"]');
      await obj.getByRole('button', { name: 'side-by-side' }).click();
      await expect(obj.getByTestId('monaco-diff').locator('.view-line').first()).toBeVisible();
    },
  },
  {
    name: 'evidence browser',
    show: async (page) => {
      await page.goto('/evidence');
      await expect(page.getByRole('heading', { name: 'Evidence', level: 1 })).toBeVisible();
      await expect(page.getByTestId('evidence-row').first()).toBeVisible();
    },
  },
  {
    name: 'prune previews (reviewer queue)',
    show: async (page) => {
      await page.goto('/prune-previews');
      await expect(page.getByRole('heading', { name: 'Prune previews', level: 1 })).toBeVisible();
    },
  },
  {
    name: 'ApplicationSet',
    show: async (page) => {
      await page.goto('/appsets/nonprod/argocd/web');
      await expect(page.getByRole('heading', { name: 'ApplicationSet web', level: 1 })).toBeVisible();
      await expect(page.getByTestId('appset-param-row').first()).toBeVisible();
    },
  },
  {
    name: 'freezes',
    show: async (page) => {
      await page.goto('/freezes');
      await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
      await expect(page.getByTestId('freeze-env-cluster')).toBeVisible();
    },
  },
  {
    name: 'environment releases',
    show: async (page) => {
      await page.goto('/envs/dev');
      await expect(page.getByRole('heading', { name: 'dev releases', level: 1 })).toBeVisible();
      await expect(page.getByTestId('env-chart')).toHaveCount(4);
      await expect(page.getByTestId('env-app-row').first()).toBeVisible();
      await expect(page).toHaveTitle('dev releases — GitOps console');
    },
  },
  {
    name: 'unknown app',
    show: async (page) => {
      await page.goto('/apps/nonprod/flux-system/kustomization/no-such-app');
      await expect(page.getByRole('heading', { name: 'App not found', level: 1 })).toBeVisible();
      await expect(page.getByRole('alert')).toContainText('No app nonprod/flux-system/kustomization/no-such-app.');
    },
  },
  {
    name: 'not found',
    show: async (page) => {
      await page.goto('/no/such/page');
      await expect(page.getByTestId('not-found')).toBeVisible();
      await expect(page.getByRole('banner')).toBeVisible(); // inside the normal layout
      await expect(page).toHaveTitle('Page not found — GitOps console');
    },
  },
];

/** Audits the page as shown, in light (every rule) then in dark (the colour rules): the page is loaded once and the
 * scheme switched live (the theme follows prefers-color-scheme as it changes, monaco's too), which halves this suite's
 * time. */
async function auditBothSchemes(page: Page, name: string): Promise<string[]> {
  const found = await audit(page, `${name} (light)`);
  await page.emulateMedia({ colorScheme: 'dark' });
  await expect(page.locator('html')).toHaveCSS('color-scheme', /dark/);
  // two frames: React re-renders the theme's subscribers (monaco's theme) before axe reads the colours
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  return [...found, ...(await audit(page, `${name} (dark)`, COLOUR_RULES))];
}

test.describe('light and dark mode', () => {
  test.use({ baseURL: process.env.E2E_BASE_URL, storageState: process.env.E2E_STORAGE, colorScheme: 'light' });

  test('sign-in (light, dark)', async ({ browser }) => {
    const anon = await browser.newContext({
      baseURL: process.env.E2E_BASE_URL,
      storageState: { cookies: [], origins: [] },
      colorScheme: 'light',
    });
    try {
      const page = await anon.newPage();
      await page.goto('/signin');
      await expect(page.getByLabel('User name')).toBeVisible();
      await expect(page).toHaveTitle('Sign in — GitOps console');
      const found = await auditBothSchemes(page, 'sign-in');
      expect(found, found.join('\n')).toEqual([]);
    } finally {
      await anon.close();
    }
  });

  for (const s of STATES) {
    test(`${s.name} (light, dark)`, async ({ page }) => {
      await s.show(page);
      const found = await auditBothSchemes(page, s.name);
      expect(found, found.join('\n')).toEqual([]);
    });
  }
});

test.describe('narrow window', () => {
  test.use({
    baseURL: process.env.E2E_BASE_URL,
    storageState: process.env.E2E_STORAGE,
    viewport: { width: 800, height: 900 },
  });

  test('no sideways scroll at 800 px on the overview and the app page', async ({ page }) => {
    for (const path of ['/', DEV_APP]) {
      await page.goto(path);
      await expect(page.getByTestId(path === '/' ? 'app-card' : 'tree-row').first()).toBeVisible();
      const { scroll, client } = await page.evaluate(() => ({
        scroll: document.documentElement.scrollWidth,
        client: document.documentElement.clientWidth,
      }));
      expect(scroll, `${path} scrolls sideways`).toBeLessThanOrEqual(client);
    }
  });
});
