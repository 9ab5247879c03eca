import { join } from 'node:path';
import type { ArchiveStore } from '../../src/store/archive-store-spec.ts';
import { openStore } from '../../src/store/open-store.ts';
import { createTestDatabase, PG_URL } from './postgres-test-db.ts';

/**
 * Every backend a port-level test runs on, by name, each opening a fresh empty store: memory, SQLite (a new
 * file in `dir` per call) and PostgreSQL when a test cluster is configured (GRAPHMEMIX_TEST_PG_URL; callers
 * drop its databases with dropTestDatabases).
 */
export function storeBackends(dir: string, prefix: string): Array<[string, () => Promise<ArchiveStore>]> {
  let files = 0;
  return [
    ['memory', () => openStore('memory:')],
    ['sqlite', () => openStore(join(dir, `${prefix}-${files++}.db`))],
    ...(PG_URL === undefined
      ? []
      : [
          ['postgres', async () => openStore(await createTestDatabase())] as [
            string,
            () => Promise<ArchiveStore>,
          ],
        ]),
  ];
}
