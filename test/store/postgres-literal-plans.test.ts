import { afterAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { createTestDatabase, dropTestDatabases, PG_SKIP } from './postgres-test-db.ts';
import { write } from './store-conformance.ts';

/**
 * The statements sent as text in simple queries (with BEGIN or COMMIT, or queued in a unit) run as EXECUTE
 * of statements each connection prepared once (postgres-literal-plans.ts), so the server plans them once per
 * connection instead of at every call.
 */
afterAll(dropTestDatabases);
if (PG_SKIP) console.warn(`[postgres literal plans skipped] ${PG_SKIP}`);

describe.skipIf(PG_SKIP !== undefined)('PostgreSQL literal statements', () => {
  it('are prepared once per connection and executed with a cached plan', async () => {
    // One connection: every call below runs on it, and it is the one the last query inspects.
    const store = await openPostgresStore({ url: await createTestDatabase(), maxConnections: 1 });
    try {
      for (let round = 0; round < 3; round++) {
        await store.writeMemories('ctx', [write('ctx', `m${round}`, `memory number ${round}`, round)]);
        const journal = await store.pendingRelationWork('ctx', 10);
        await store.unitOfWork!('ctx', async () => {
          await store.setMeta('probe:ctx', { round });
          await store.clearRelationWork(
            'ctx',
            journal.map((entry) => entry.seq),
          );
        });
        expect(await store.countEdges('ctx')).toMatchObject({ same_round: 0 });
      }
      expect(await store.getMeta('probe:ctx')).toEqual({ round: 2 });
      expect(await store.pendingRelationWork('ctx', 10)).toEqual([]);
      expect(await store.countMemories('ctx')).toBe(3);
      const rows = await store.queryInContext(
        'ctx',
        "SELECT name, generic_plans, custom_plans FROM pg_prepared_statements WHERE name LIKE 'gmx_l_%' ORDER BY name",
      );
      const plans = Object.fromEntries(
        rows.map((row) => [row.name, [Number(row.generic_plans), Number(row.custom_plans)]]),
      );
      // Each ran three times, on the generic plan the server made once and cached, never planned per call.
      for (const name of [
        'gmx_l_stored_hashes',
        'gmx_l_write_counters',
        'gmx_l_unit_prefetch',
        'gmx_l_clear_journal',
        'gmx_l_meta_put',
        'gmx_l_edge_counts',
      ]) {
        expect(plans[name], name).toEqual([3, 0]);
      }
    } finally {
      await store.close();
    }
  });
});
