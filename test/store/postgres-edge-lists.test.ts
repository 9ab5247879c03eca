import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';
import { postgresEdgeReads } from '../../src/store/postgres/postgres-edges.ts';
import { openPostgresStore, type PostgresArchiveStore } from '../../src/store/postgres/postgres-store.ts';
import type { MemoryEdge } from '../../src/types/relation.ts';
import { createTestDatabase, dropTestDatabases, PG_SKIP } from './postgres-test-db.ts';
import { write } from './store-conformance.ts';

/*
 * The PostgreSQL store keeps each memory's complete edge list under the read generation of the read unit
 * that read it (src/store/postgres/postgres-edge-lists.ts). It must answer exactly what the table holds in
 * the unit's snapshot: the same edges as an uncached read, fresh objects every time, nothing stale after any
 * write (this handle, another process, plain SQL), and no caching outside read units.
 */
afterAll(dropTestDatabases);
if (PG_SKIP) console.warn(`[postgres edge lists skipped] ${PG_SKIP}`);

const IDS = Array.from({ length: 12 }, (_, i) => `m${i}`);

/** A ring with chords: every memory has 2-4 edges, some pairs with a similarity. */
const CHANGES = IDS.flatMap((id, i) => [
  { a: id, b: IDS[(i + 1) % IDS.length]!, add: ['consecutive_turn' as const] },
  ...(i % 3 === 0
    ? [{ a: id, b: IDS[(i + 5) % IDS.length]!, add: ['semantic_knn' as const], similarity: 0.1 + i / 7 }]
    : []),
]);

async function inReadUnit<T>(store: PostgresArchiveStore, work: () => Promise<T>): Promise<T> {
  return store.unitOfWork!(
    'ctx',
    async () => {
      await store.countMemories('ctx'); // the BEGIN (with the generation) goes out with a first read
      return work();
    },
    { read: true },
  );
}

describe.skipIf(PG_SKIP !== undefined)('PostgreSQL edge lists by read generation', () => {
  it('answers as the table does, reads nothing twice per generation, and never serves a stale list', async () => {
    const url = await createTestDatabase();
    const store = await openPostgresStore({ url });
    const other = await openPostgresStore({ url });
    const reference = await openStore('memory:');
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      for (const target of [store, reference]) {
        await target.writeMemories(
          'ctx',
          IDS.map((id, i) => write('ctx', id, `note ${id}`, i)),
        );
        await target.changeEdges('ctx', CHANGES);
      }
      const same = async (what: string) => {
        for (const ids of [['m0', 'm1'], ['m2', 'm3', 'm4', 'm9'], IDS]) {
          const [touching, among] = await inReadUnit(store, async () => [
            await store.neighbors('ctx', ids),
            await store.edgesAmong!('ctx', ids),
          ]);
          expect(touching, `${what}: neighbors ${ids}`).toEqual(await reference.neighbors('ctx', ids));
          expect(among, `${what}: edgesAmong ${ids}`).toEqual(await reference.edgesAmong!('ctx', ids));
        }
      };
      await same('first read');
      // Warm: the same questions read no edge statement at all, in a new unit (same generation).
      let before = postgresEdgeReads.statements;
      await same('warm');
      expect(postgresEdgeReads.statements).toBe(before);

      // A mix: m0's list is cached, m5..m7 are not read yet in this generation after a write below.
      await store.changeEdges('ctx', [{ a: 'm0', b: 'm6', add: ['same_round'] }]);
      await reference.changeEdges('ctx', [{ a: 'm0', b: 'm6', add: ['same_round'] }]);
      await same('after this handle added an edge');
      // Another process's write and a plain SQL update move the generation too.
      await other.changeEdges('ctx', [{ a: 'm1', b: 'm2', remove: ['consecutive_turn'] }]);
      await reference.changeEdges('ctx', [{ a: 'm1', b: 'm2', remove: ['consecutive_turn'] }]);
      await same('after another process removed an edge');
      await admin.query("SELECT set_config('graphmemix.context_id', 'ctx', false)");
      await admin.query(
        "UPDATE edges SET strength = 0.25 WHERE context_id = 'ctx' AND a = 'm3' AND b = 'm4'",
      );
      const plain = await inReadUnit(store, () => store.neighbors('ctx', ['m3']));
      expect(plain.find((edge) => edge.b === 'm4')?.strength).toBe(0.25);

      // Callers may mutate what they get: the kept lists do not change.
      const first = await inReadUnit(store, () => store.neighbors('ctx', ['m0']));
      first[0]!.types.push('supersedes');
      first[0]!.strength = -1;
      const again: MemoryEdge[] = await inReadUnit(store, () => store.neighbors('ctx', ['m0']));
      expect(again[0]!.types).not.toContain('supersedes');
      expect(again[0]!.strength).not.toBe(-1);

      // Outside a read unit nothing is kept or served: every call reads.
      before = postgresEdgeReads.statements;
      await store.neighbors('ctx', ['m0']);
      await store.neighbors('ctx', ['m0']);
      expect(postgresEdgeReads.statements).toBe(before + 2);
    } finally {
      await admin.end();
      await store.close();
      await other.close();
      await reference.close();
    }
  }, 60_000);
});
