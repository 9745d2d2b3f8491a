import { defineConfig } from '@playwright/test';
import { CHROMIUM_ARGS, E2E_CHROMIUM } from './test/support/bff-process.ts';

/**
 * Specs that change nothing shared (no Git push, no live edit in a seed namespace, no stopped component, no action
 * on the shared console) and read nothing another spec changes: `npm test` runs them with 2 workers, then, in the
 * same Playwright run, every other spec with 1 (docs/develop/testing.md). A spec that owns its estate belongs here.
 */
export const PARALLEL_SPECS = [
  'a11y.spec.ts',
  'break-glass.spec.ts',
  // its own Argo CD Application (the seed's ledger files in its own repository) on its own estate
  'argocd.spec.ts',
  // journeys on their own estates (test/support/own-estate.ts); the seed only read. On their own estates but serial:
  // drift.spec.ts (it times "drift shown within 2 s" by the wall clock: 2.3 s once beside diff.spec.ts) and
  // overview.spec.ts (it stops the prod apiserver and counts the seed's cards)
  'dependencies.spec.ts',
  'diff.spec.ts',
  // its own estate for the hidden objects; the seed's Argo CD hooks and dev/staging renders only read
  'env-boundaries.spec.ts',
  'env-releases.spec.ts',
  'evidence-export-verify.spec.ts',
  'flagger.spec.ts',
  'flux-secrets.spec.ts',
  'freeze.spec.ts',
  // its own estate's app only: a planned window scoped to it
  'freeze-windows.spec.ts',
  'helmrelease.spec.ts',
  // reads the seed's dev app with the keyboard only; changes nothing
  'keyboard.spec.ts',
  'notifications.spec.ts',
  'prune.spec.ts',
  'releases.spec.ts',
  'roles.spec.ts',
  'rollouts.spec.ts',
  'sinks.spec.ts',
  'startup.spec.ts',
  'tree.spec.ts',
  'what-ran.spec.ts',
];

/**
 * The parallel specs that take over a minute each, in their own project listed first, so that the two workers
 * start on them: listed by file name they started last, and one of them was the project's tail alone (releases
 * began 4 minutes into a 7-minute run, 2026-12-06). `npm test` runs both projects in one invocation.
 */
export const LONG_PARALLEL_SPECS = ['releases.spec.ts', 'flagger.spec.ts', 'argocd.spec.ts', 'freeze-windows.spec.ts'];

export default defineConfig({
  testDir: 'e2e',
  timeout: 180_000,
  expect: { timeout: 60_000 },
  // a plain `playwright test` runs everything one at a time; scripts/test.mjs runs `parallel` with 2 workers
  workers: 1,
  retries: 0,
  reporter: [['list']],
  globalSetup: './e2e/global-setup.ts',
  // each project its own output folder: a run of one cleans only its own, so the parallel run's failure screenshots
  // are still there after the serial run (and the vitest reports in test-results/ are never touched)
  projects: [
    { name: 'parallel-long', testMatch: LONG_PARALLEL_SPECS, outputDir: 'test-results/e2e-parallel-long' },
    {
      name: 'parallel',
      testMatch: PARALLEL_SPECS.filter((f) => !LONG_PARALLEL_SPECS.includes(f)),
      outputDir: 'test-results/e2e-parallel',
    },
    {
      name: 'serial',
      testIgnore: PARALLEL_SPECS,
      outputDir: 'test-results/e2e-serial',
      // one spec at a time, whatever --workers says
      workers: 1,
      // npm test runs the three projects in one invocation (one global set-up: 20 s of BFF start and sign-ins
      // saved, 2026-12-06): the serial specs start once every parallel spec has ended. Not by default, or a
      // developer's `playwright test e2e/auth.spec.ts` would first run every parallel spec
      ...(process.env.E2E_SERIAL_AFTER_PARALLEL === '1' ? { dependencies: ['parallel-long', 'parallel'] } : {}),
    },
  ],
  use: {
    baseURL: process.env.E2E_BASE_URL,
    launchOptions: {
      executablePath: E2E_CHROMIUM,
      args: CHROMIUM_ARGS,
    },
    screenshot: 'only-on-failure',
    trace: 'off',
  },
});
