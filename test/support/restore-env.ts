// A setup file of every vitest tier (vitest.config.ts): the environment variables a test file sets are put back
// when the file ends. The tiers run with `isolate: false` (docs/develop/testing.md, "Isolation"): a worker process runs
// file after file, and a variable one file set (CONSOLE_GIT_ALLOW_FILE_URLS, say) must not reach the next.
import { afterAll } from 'vitest';

const saved = { ...process.env };

afterAll(() => {
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  for (const [k, v] of Object.entries(saved)) if (process.env[k] !== v) process.env[k] = v;
});
