import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Starts a throwaway PostgreSQL for the Postgres store tests when GRAPHMEMIX_TEST_PG_URL is unset.
    globalSetup: ['test/support/postgres-global-setup.ts'],
  },
});
