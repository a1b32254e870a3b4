import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    reporters: ['default', './test/summaryReporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          setupFiles: ['test/setupHome.ts'],
          exclude: ['test/e2e/**', 'node_modules/**', 'dist/**'],
        },
      },
      {
        // End to end: the built app (dist/, so `npm run build` first) in browser mode, driven in Debian's
        // Chromium by playwright-core. Each test starts the app on a fresh MAILSIEVE_HOME.
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/e2e/globalSetup.ts'],
          testTimeout: 90_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
