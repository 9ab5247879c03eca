import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgresStore, type PostgresArchiveStore } from '../../src/store/postgres/postgres-store.ts';
import { countRoundTrips, createTestDatabase, dropTestDatabases, PG_SKIP } from './postgres-test-db.ts';
import { write } from './store-conformance.ts';

/**
 * A question's read unit reads its context's generation with its BEGIN (schema migration 10; the question
 * path keeps records and edge counts under it). It must move on every change of the context's memories or
 * edges, by any handle or by plain SQL, stay put otherwise (reads, other contexts' writes, a rolled-back
 * write), never repeat after a context is deleted and written again, and cost no round trip.
 */
afterAll(dropTestDatabases);
if (PG_SKIP) console.warn(`[postgres read generation skipped] ${PG_SKIP}`);

const roundTrips = countRoundTrips();

/** The generation a read unit of `contextId` sees once its BEGIN went out (with a read). */
async function generationOf(store: PostgresArchiveStore, contextId: string): Promise<string | undefined> {
  return store.unitOfWork!(
    contextId,
    async () => {
      expect(store.readGeneration!(contextId)).toBeUndefined(); // the BEGIN has not gone out yet
      await store.countMemories(contextId);
      expect(store.readGeneration!('other-context')).toBeUndefined(); // only the unit's context
      return store.readGeneration!(contextId);
    },
    { read: true },
  );
}

describe.skipIf(PG_SKIP !== undefined)('PostgreSQL read generation', () => {
  it('moves on every memory and edge change, from any client, and only then', async () => {
    const url = await createTestDatabase();
    const reader = await openPostgresStore({ url });
    const writer = await openPostgresStore({ url });
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      expect(await generationOf(reader, 'ctx')).toBeUndefined(); // no such context yet
      await writer.writeMemories(
        'ctx',
        ['a', 'b', 'c'].map((id, i) => write('ctx', id, `note ${id} about the kayak`, i)),
      );
      const seen: string[] = [];
      const next = async (what: string) => {
        const generation = await generationOf(reader, 'ctx');
        expect(generation, what).toBeDefined();
        expect(seen, what).not.toContain(generation);
        seen.push(generation!);
      };
      await next('written');
      // Reads and another context's writes leave it.
      await reader.getMemories('ctx', ['a', 'b']);
      await writer.writeMemories('other', [write('other', 'x', 'elsewhere', 0)]);
      expect(await generationOf(reader, 'ctx')).toBe(seen.at(-1));
      // Outside a read unit there is none (nothing would bind it to the reads).
      expect(reader.readGeneration!('ctx')).toBeUndefined();

      roundTrips.reset();
      await generationOf(reader, 'ctx');
      expect(roundTrips.count).toBe(2); // BEGIN with the read-ahead and the read, COMMIT

      await writer.changeEdges('ctx', [{ a: 'a', b: 'b', add: ['same_round'] }]);
      await next('edge added');
      await writer.changeEdges('ctx', [{ a: 'a', b: 'b', remove: ['same_round'] }]);
      await next('edge removed');
      await writer.writeMemories('ctx', [write('ctx', 'a', 'note a, rewritten', 0)]);
      await next('memory rewritten');
      await writer.deleteMemory('ctx', 'c');
      await next('memory deleted');
      // Plain SQL by another client (the triggers, not the store, keep it).
      await admin.query("SELECT set_config('graphmemix.context_id', 'ctx', false)");
      await admin.query("UPDATE edges SET strength = strength WHERE context_id = 'ctx'");
      await admin.query("UPDATE memories SET record = record WHERE context_id = 'ctx' AND id = 'a'");
      await next('plain SQL update');
      // A rolled-back write leaves it (and the data) as it was.
      await admin.query('BEGIN');
      await admin.query("DELETE FROM memories WHERE context_id = 'ctx' AND id = 'b'");
      await admin.query('ROLLBACK');
      expect(await generationOf(reader, 'ctx')).toBe(seen.at(-1));
      // Several statements in one transaction move it once; a savepoint rolled back takes its move back, so
      // the next statement of the transaction moves it again.
      await admin.query('BEGIN');
      await admin.query("UPDATE memories SET record = record WHERE context_id = 'ctx' AND id = 'a'");
      await admin.query("UPDATE edges SET strength = strength WHERE context_id = 'ctx'");
      await admin.query('COMMIT');
      await next('one transaction, two statements');
      await admin.query('BEGIN');
      await admin.query('SAVEPOINT s');
      await admin.query("UPDATE memories SET record = record WHERE context_id = 'ctx' AND id = 'a'");
      await admin.query('ROLLBACK TO SAVEPOINT s');
      await admin.query("UPDATE memories SET record = record WHERE context_id = 'ctx' AND id = 'b'");
      await admin.query('COMMIT');
      await next('a write after a rolled-back savepoint');
      // A transaction that moved one context's generation still moves another's.
      await admin.query('BEGIN');
      await admin.query("UPDATE memories SET record = record WHERE context_id = 'other'");
      const before = await generationOf(reader, 'ctx');
      await admin.query("UPDATE memories SET record = record WHERE context_id = 'ctx' AND id = 'a'");
      await admin.query('COMMIT');
      expect(before).toBe(seen.at(-1));
      await next('second context of a transaction');
      // Deleted and written again with the same content: a generation never seen before.
      await writer.deleteContext('ctx');
      await writer.writeMemories(
        'ctx',
        ['a', 'b', 'c'].map((id, i) => write('ctx', id, `note ${id} about the kayak`, i)),
      );
      await next('context recreated');
    } finally {
      await admin.end();
      await reader.close();
      await writer.close();
    }
  }, 60_000);
});
