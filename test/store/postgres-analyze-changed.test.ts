import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { createTestDatabase, dropTestDatabases, PG_SKIP } from './postgres-test-db.ts';
import { write } from './store-conformance.ts';

/**
 * optimizeLexicalIndex on PostgreSQL (after a bulk import or a compaction) analyzes the tables whose rows
 * changed past autovacuum's rule, so questions right after an import get plans for the tables as they are.
 */
afterAll(dropTestDatabases);
if (PG_SKIP) console.warn(`[postgres analyze skipped] ${PG_SKIP}`);

describe.skipIf(PG_SKIP !== undefined)('PostgreSQL optimizeLexicalIndex', () => {
  it('analyzes the tables an import filled, and nothing once they are analyzed', async () => {
    const url = await createTestDatabase();
    let store = await openPostgresStore({ url });
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      // Autovacuum's own analyze must not get there first (the CI cluster's naptime is a minute; twice a
      // 60 s wait let it, and there was then nothing left for this call to do).
      const tables = await admin.query<{ name: string }>(
        "SELECT format('%I.%I', schemaname, relname) AS name FROM pg_stat_user_tables",
      );
      for (const { name } of tables.rows)
        await admin.query(`ALTER TABLE ${name} SET (autovacuum_enabled = off)`);
      await store.writeMemories(
        'ctx',
        Array.from({ length: 300 }, (_, i) =>
          write('ctx', `m${i}`, `memory number ${i} about the garden`, i),
        ),
      );
      const lastAnalyze = async () =>
        (
          await admin.query<{ at: Date | null }>(
            "SELECT last_analyze AS at FROM pg_stat_user_tables WHERE relname = 'memories'",
          )
        ).rows[0]?.at ?? null;
      expect(await lastAnalyze()).toBeNull();
      // A backend reports its row counts to pg_stat_user_tables when it exits (an idle one only after ~10 s,
      // longer under load): close the writing connections, then ask through fresh ones.
      await store.close();
      store = await openPostgresStore({ url });
      let analyzed = false;
      for (let tries = 0; tries < 100 && !analyzed; tries++) {
        analyzed = await store.optimizeLexicalIndex!('ctx');
        if (!analyzed) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(analyzed).toBe(true);
      expect(await lastAnalyze()).not.toBeNull();
      // Its statistics are now current: nothing left to analyze.
      expect(await store.optimizeLexicalIndex!('ctx')).toBe(false);
      // Searches are unchanged by it (planner statistics only).
      expect((await store.searchLexical('ctx', 'garden', { limit: 3 })).length).toBe(3);
    } finally {
      await admin.end();
      await store.close();
    }
  }, 120_000);
});
