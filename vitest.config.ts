import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        plugins: [react()],
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'src/**/*.test.tsx', 'test/unit/**/*.test.ts'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'integration',
          // writeback-scope's rendered cases need the sandbox's real kustomize, which a fresh machine builds only
          // after the unit step (where they are skipped, with a warning): they run here again, with it
          include: ['test/integration/**/*.test.ts', 'src/domain/writeback-scope.test.ts'],
          environment: 'node',
          globalSetup: ['test/integration/global-setup.ts'],
          testTimeout: 240_000,
          hookTimeout: 600_000,
          fileParallelism: false,
          pool: 'forks',
        },
      },
    ],
  },
});
