import { afterAll, describe, expect, it } from 'vitest';
import type { EdgeChange } from '../../src/store/archive-store-spec.ts';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { countRoundTrips, createTestDatabase, dropTestDatabases, PG_SKIP } from './postgres-test-db.ts';
import { write } from './store-conformance.ts';

/**
 * Statements issued together inside a unit of work go out as one simple query of EXECUTEs with literal
 * arguments (postgres-statement-pipeline.ts): the answers must be those of the parameterised statements,
 * whatever the values hold, and the connection must run everything in the order it was issued.
 */
afterAll(dropTestDatabases);
if (PG_SKIP) console.warn(`[postgres statement pipeline skipped] ${PG_SKIP}`);

/** Round trips of this process's pg clients. */
const roundTrips = countRoundTrips();

/** Ids that a literal must carry exactly: quotes, backslashes, array syntax, a NULL look-alike, non-ASCII. */
const IDS = ["q'uote", 'back\\slash', 'dq"uote', 'brace{x}', 'comma,id', 'NULL', 'sp ace', 'ünï\\"'];
const CHANGES: EdgeChange[] = IDS.slice(1).map((id) => ({
  a: IDS[0]!,
  b: id,
  add: ['same_round'],
}));

describe.skipIf(PG_SKIP !== undefined)('PostgreSQL statement pipeline', () => {
  it('answers reads issued together in one round trip, exactly, and keeps the issue order', async () => {
    // One connection: the statements below are prepared on it by their first run.
    const store = await openPostgresStore({ url: await createTestDatabase(), maxConnections: 1 });
    try {
      const ids = [...IDS, 'x'];
      await store.writeMemories(
        'ctx',
        ids.map((id, i) => write('ctx', id, `memory ${i}`, i)),
      );
      await store.changeEdges('ctx', CHANGES);
      const expected = await Promise.all(ids.map((id) => store.neighbors('ctx', [id])));
      const all = await store.neighbors('ctx', ids);
      expect(all.length).toBe(CHANGES.length);

      await store.unitOfWork!('ctx', async () => {
        await store.neighbors('ctx', ['warm']); // prepared on this connection now
        roundTrips.reset();
        const got = await Promise.all(ids.map((id) => store.neighbors('ctx', [id])));
        expect(roundTrips.count).toBe(1);
        expect(got).toEqual(expected);

        // A write between two reads: the first read does not see it, the second does.
        await store.changeEdges('ctx', [{ a: 'x', b: 'NULL', add: ['same_round'] }]); // prepares the write
        roundTrips.reset();
        const [before, , after] = await Promise.all([
          store.neighbors('ctx', ['x']),
          store.changeEdges('ctx', [{ a: 'x', b: 'sp ace', add: ['consecutive_turn'] }]),
          store.neighbors('ctx', ['x']),
        ]);
        expect(roundTrips.count).toBe(1);
        expect(before.map((edge) => `${edge.a}|${edge.b}|${edge.types}`)).toEqual(['NULL|x|same_round']);
        expect(after.map((edge) => `${edge.a}|${edge.b}|${edge.types}`)).toEqual([
          'NULL|x|same_round',
          'sp ace|x|consecutive_turn',
        ]);
      });
      expect((await store.neighbors('ctx', ['x'])).length).toBe(2);
    } finally {
      await store.close();
    }
  });

  it('writes new memories in three round trips: records and lexical documents go together', async () => {
    const store = await openPostgresStore({ url: await createTestDatabase(), maxConnections: 1 });
    try {
      await store.writeMemories('ctx', [write('ctx', 'warm', 'warm up the statements', 0)]);
      roundTrips.reset();
      // BEGIN with the stored hashes, the records with their lexical documents, the counters with COMMIT.
      await store.writeMemories('ctx', [write('ctx', 'm1', 'a memory about apples', 1)]);
      expect(roundTrips.count).toBe(3);
      expect((await store.searchLexical('ctx', 'apples', { limit: 5 })).map((hit) => hit.memoryId)).toEqual([
        'm1',
      ]);
      expect(await store.countMemories('ctx')).toBe(2);
    } finally {
      await store.close();
    }
  });
});
