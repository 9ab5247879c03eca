import { afterAll, describe, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { createTestDatabase, dropTestDatabases, PG_SKIP } from './postgres-test-db.ts';
import { describeStoreConformance } from './store-conformance.ts';

if (PG_SKIP) {
  console.warn(`[postgres tests skipped] ${PG_SKIP}`);
  describe.skip('ArchiveStore conformance: postgres', () => {
    it(`skipped: ${PG_SKIP}`, () => {});
  });
} else {
  afterAll(dropTestDatabases);
  describeStoreConformance('postgres', async () =>
    openPostgresStore({ url: await createTestDatabase(), maxConnections: 4 }),
  );
}
