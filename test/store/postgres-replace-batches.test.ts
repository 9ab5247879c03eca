import { afterAll, describe, expect, it } from 'vitest';
import { REPLACE_BATCH_DOCS } from '../../src/store/postgres/postgres-semantic-index.ts';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import type { SemanticDoc, SemanticSnapshotInput } from '../../src/store/semantic-index-spec.ts';
import { createTestDatabase, dropTestDatabases, PG_SKIP } from './postgres-test-db.ts';
import { write } from './store-conformance.ts';

/**
 * PostgreSQL's replaceAll writes its documents in statements of REPLACE_BATCH_DOCS as it iterates them, inside
 * its one transaction: every row lands, the iterable is not drained before the first statement, and a bad
 * document in a later statement leaves the state stored before.
 */
afterAll(dropTestDatabases);

const N = 2 * REPLACE_BATCH_DOCS + 500;
const SNAPSHOT: SemanticSnapshotInput = {
  space: 'tfidf',
  documents: N,
  k: 2,
  createdAt: '2026-12-03T00:00:00.000Z',
  df: new Map([
    ['common', N],
    ['rare', 10],
  ]),
};

function doc(i: number, memoryId = `m${i}`): SemanticDoc {
  return {
    memoryId,
    terms: ['common', `t${i % 50}`],
    weights: [0.6, 0.8],
    neighbours: [
      { memoryId: `m${(i + 1) % N}`, score: 0.9 },
      { memoryId: `m${(i + 2) % N}`, score: 0.5 },
    ],
  };
}

describe.skipIf(PG_SKIP !== undefined)('PostgreSQL replaceAll in statements of documents', () => {
  it('stores every row, iterates lazily, and a bad document in a later statement changes nothing', async () => {
    const store = await openPostgresStore({ url: await createTestDatabase() });
    try {
      const writes = Array.from({ length: N }, (_, i) => write('ctx', `m${i}`, `memory ${i}`, i));
      for (let at = 0; at < N; at += 1_000) await store.writeMemories('ctx', writes.slice(at, at + 1_000));
      const counts = async () =>
        (
          await store.queryInContext(
            'ctx',
            `SELECT (SELECT count(*) FROM semantic_docs)::int AS docs, (SELECT count(*) FROM semantic_postings)::int
             AS postings, (SELECT count(*) FROM semantic_neighbours)::int AS pairs`,
          )
        )[0];

      // The event loop turns (setImmediate) while the documents are iterated: once per statement, where a
      // replace that drained them all first would iterate them in one turn.
      let turns = 0;
      let iterating = true;
      const tick = () => {
        turns++;
        if (iterating) setImmediate(tick);
      };
      setImmediate(tick);
      const seen = new Set<number>();
      const docs = {
        *[Symbol.iterator]() {
          for (let i = 0; i < N; i++) {
            if (i % REPLACE_BATCH_DOCS === 0) seen.add(turns);
            yield doc(i);
          }
        },
      };
      await store.semantic.replaceAll('ctx', SNAPSHOT, docs);
      iterating = false;
      expect(seen.size).toBe(3);
      expect(await counts()).toEqual({ docs: N, postings: 2 * N, pairs: 2 * N });
      const [first] = await store.semantic.getDocs('ctx', ['m7']);
      expect(first?.neighbours.map((n) => n.memoryId)).toEqual(['m8', 'm9']);

      // The last statement names a memory that does not exist: the whole replace fails, the state above stays.
      const bad = Array.from({ length: N }, (_, i) => (i === N - 1 ? doc(i, 'nobody') : doc(i)));
      await expect(store.semantic.replaceAll('ctx', { ...SNAPSHOT, k: 3 }, bad)).rejects.toMatchObject({
        code: 'INVALID_INPUT',
      });
      expect(await counts()).toEqual({ docs: N, postings: 2 * N, pairs: 2 * N });
      expect((await store.semantic.getSnapshot('ctx'))?.k).toBe(2);
    } finally {
      await store.close();
    }
  }, 120_000);
});
