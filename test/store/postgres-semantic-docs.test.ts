import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { compactSemantic } from '../../src/digest/incremental/compact-semantic.ts';
import { updateSemanticKnn } from '../../src/digest/incremental/update-semantic-knn.ts';
import { openStore } from '../../src/store/open-store.ts';
import { POSTGRES_SCHEMA_VERSION } from '../../src/store/postgres/postgres-schema.ts';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { createTestDatabase, dropTestDatabases, PG_SKIP } from './postgres-test-db.ts';
import { write } from './store-conformance.ts';

/**
 * PostgreSQL migration 6 (docs/postgres.md, "Semantic kNN state"): documents keep their vector and list in
 * their own row, ratios are computed from the thresholds, and weight-ordered posting reads issued together
 * run as one statement. A database taken back to the schema-5 shape is backfilled and reads the same
 * documents; the exact reverse search (ratio reads) and the default one give SQLite's lists.
 */
afterAll(dropTestDatabases);
if (PG_SKIP) console.warn(`[postgres semantic documents skipped] ${PG_SKIP}`);

const TEXTS = [
  'sunset over the harbour',
  'harbour photos at sunset, sunset again',
  'grocery list milk eggs',
  'milk and eggs for the harbour picnic',
  'a long walk along the harbour wall at dawn with the dog',
  'the dog at dawn again',
  'picnic by the harbour wall with milk',
  'dawn photos of the dog by the sunset wall',
];

describe.skipIf(PG_SKIP !== undefined)('PostgreSQL semantic documents (migration 6)', () => {
  it('backfills vectors and lists when migrating a schema-5 database, and reads them back the same', async () => {
    const url = await createTestDatabase();
    const store = await openPostgresStore({ url });
    const ids = TEXTS.map((_, i) => `m${i}`);
    try {
      await store.writeMemories(
        'ctx',
        TEXTS.map((text, i) => write('ctx', `m${i}`, text, i)),
      );
      await compactSemantic(store, 'ctx', { k: 2 });
    } finally {
      await store.close();
    }
    const before = await readDocs(url, ids);
    expect(before.length).toBe(TEXTS.length);
    expect(before.every((doc) => doc.terms.length > 0 && doc.neighbours.length > 0)).toBe(true);

    // Back to the schema-5 shape: no document columns, ratios maintained per posting with their index.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      // The list rows keyed by rank with their scores (the shape before migration 9), from the lists.
      await admin.query(`
        ALTER TABLE semantic_neighbours DROP CONSTRAINT semantic_neighbours_pkey;
        ALTER TABLE semantic_neighbours ADD COLUMN rank integer, ADD COLUMN score double precision;
        UPDATE semantic_neighbours n SET rank = e.ord - 1, score = (d.list::json -> 1 ->> (e.ord::int - 1))::float8
          FROM semantic_docs d, json_array_elements_text(d.list::json -> 0) WITH ORDINALITY AS e(id, ord)
          WHERE d.context_id = n.context_id AND d.memory_id = n.memory_id AND e.id = n.neighbour_id;
        ALTER TABLE semantic_neighbours ALTER COLUMN rank SET NOT NULL, ALTER COLUMN score SET NOT NULL,
          ADD PRIMARY KEY (context_id, memory_id, rank);`);
      await admin.query(`
        ALTER TABLE semantic_docs DROP COLUMN vector, DROP COLUMN list;
        UPDATE semantic_postings p SET ratio = CASE WHEN d.threshold > 0 THEN p.weight / d.threshold ELSE 1e308 END
          FROM semantic_docs d WHERE d.context_id = p.context_id AND d.memory_id = p.memory_id;
        CREATE INDEX semantic_postings_by_ratio ON semantic_postings (context_id, term, ratio, weight);
        DROP TRIGGER edges_count_insert ON edges;
        DROP TRIGGER edges_count_delete ON edges;
        DROP TRIGGER edges_count_update ON edges;
        CREATE FUNCTION graphmemix_edge_counts() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF TG_OP IN ('DELETE', 'UPDATE') THEN
            UPDATE edge_counts SET n = n - 1 WHERE context_id = OLD.context_id AND type = ANY (OLD.types);
          END IF;
          IF TG_OP IN ('INSERT', 'UPDATE') THEN
            INSERT INTO edge_counts (context_id, type, n)
              SELECT NEW.context_id, t, 1 FROM unnest(NEW.types) AS t ORDER BY t
              ON CONFLICT (context_id, type) DO UPDATE SET n = edge_counts.n + 1;
          END IF;
          RETURN NULL;
        END $$;
        CREATE TRIGGER edges_count AFTER INSERT OR DELETE OR UPDATE OF types ON edges
          FOR EACH ROW EXECUTE FUNCTION graphmemix_edge_counts();
        DELETE FROM schema_migrations WHERE version > 5;`);
    } finally {
      await admin.end();
    }
    expect(await readDocs(url, ids)).toEqual(before);
    // Edge counts by statement triggers (migration 7): adds, changes and cascaded deletes stay exact.
    const migrated = await openPostgresStore({ url });
    try {
      const counted = await migrated.countEdges('ctx');
      await migrated.changeEdges('ctx', [
        { a: 'm0', b: 'm2', add: ['consecutive_turn', 'same_round'] },
        { a: 'm1', b: 'm3', add: ['same_round'] },
      ]);
      await migrated.changeEdges('ctx', [{ a: 'm0', b: 'm2', remove: ['consecutive_turn'] }]);
      await migrated.deleteMemory('ctx', 'm3');
      expect((await migrated.integrityCheck()).ok).toBe(true);
      expect((await migrated.countEdges('ctx')).same_round).toBe(counted.same_round + 1);
    } finally {
      await migrated.close();
    }
    const check = new pg.Client({ connectionString: url });
    await check.connect();
    try {
      const shape = await check.query(
        `SELECT (SELECT count(*) FROM semantic_docs WHERE vector IS NULL OR list IS NULL)::int AS nulls,
           (SELECT count(*) FROM pg_indexes WHERE indexname = 'semantic_postings_by_ratio')::int AS ratio_index,
           (SELECT max(version) FROM schema_migrations) AS version`,
      );
      expect(shape.rows[0]).toEqual({ nulls: 0, ratio_index: 0, version: POSTGRES_SCHEMA_VERSION });
      // Migration 9: the reverse index is the set of (list owner, neighbour) pairs, one per list entry.
      const pairs = await check.query(
        `SELECT (SELECT string_agg(column_name, ',' ORDER BY ordinal_position) FROM information_schema.columns
             WHERE table_name = 'semantic_neighbours') AS columns,
           (SELECT count(*) FROM semantic_neighbours)::int AS rows,
           (SELECT sum(json_array_length(list::json -> 0)) FROM semantic_docs)::int AS entries`,
      );
      expect(pairs.rows[0]).toMatchObject({ columns: 'context_id,memory_id,neighbour_id' });
      expect(pairs.rows[0].rows).toBe(pairs.rows[0].entries);
      // The policies are back after the migration lifted FORCE on semantic_docs.
      const forced = await check.query(
        "SELECT relforcerowsecurity AS forced FROM pg_class WHERE relname = 'semantic_docs'",
      );
      expect(forced.rows[0]).toEqual({ forced: true });
    } finally {
      await check.end();
    }
  });

  it('incremental adds give the lists of SQLite, by both reverse searches', async () => {
    for (const reverse of ['neighbourhood', 'exact'] as const) {
      const lists: unknown[] = [];
      for (const open of [
        async () => openStore(':memory:'),
        async () => openPostgresStore({ url: await createTestDatabase() }),
      ]) {
        const store = await open();
        try {
          const first = TEXTS.slice(0, 5).map((text, i) => write('ctx', `m${i}`, text, i));
          await store.writeMemories('ctx', first);
          await compactSemantic(store, 'ctx', { k: 2 });
          for (let i = 5; i < TEXTS.length; i++) {
            const added = write('ctx', `m${i}`, TEXTS[i]!, i);
            await store.writeMemories('ctx', [added]);
            await updateSemanticKnn(
              store,
              'ctx',
              { upserted: [{ after: added.record }], removed: [] },
              { reverse, compactBulk: false },
            );
          }
          const docs = await store.semantic.getDocs(
            'ctx',
            TEXTS.map((_, i) => `m${i}`),
          );
          lists.push(docs.map((doc) => [doc.memoryId, doc.neighbours]));
          expect((await store.integrityCheck()).ok).toBe(true);
        } finally {
          await store.close();
        }
      }
      expect(lists[1], reverse).toEqual(lists[0]);
    }
  });

  it('posting reads issued together are one statement with the answers of separate ones', async () => {
    const url = await createTestDatabase();
    // Before the store opens: its pooled clients bind pg.Client.prototype.query when first used.
    const statements = countStatements();
    const store = await openPostgresStore({ url });
    try {
      await store.writeMemories(
        'ctx',
        TEXTS.map((text, i) => write('ctx', `m${i}`, text, i)),
      );
      await compactSemantic(store, 'ctx', { k: 2 });
      const requests = [
        { term: 'harbour', filter: { top: 2 } },
        { term: 'harbour', filter: { minWeight: 0 } },
        { term: 'dog', filter: { minWeight: 0.1, below: 0.9 } },
        { term: 'nosuchterm', filter: { top: 3 } },
        { term: 'sunset', filter: { minWeight: 0 } },
      ] as const;
      const separate = [];
      for (const r of requests) separate.push(await store.semantic.postings('ctx', r.term, r.filter));
      expect(separate[0]!.length).toBe(2);
      expect(separate[1]!.length).toBeGreaterThan(2);
      expect(separate[3]).toEqual([]);
      const sent = statements.count();
      const together = await Promise.all(
        requests.map((r) => store.semantic.postings('ctx', r.term, r.filter)),
      );
      expect(statements.count() - sent).toBe(3); // BEGIN (with the context), the reads, COMMIT
      expect(together).toEqual(separate);
    } finally {
      statements.stop();
      await store.close();
    }
  });
});

describe.skipIf(PG_SKIP !== undefined)('PostgreSQL key chain walks', () => {
  it('adjacentRunByKey equals adjacentByKey stepped on SQLite, and runs issued together are one statement', async () => {
    const writes = Array.from({ length: 12 }, (_, i) => {
      const w = write('ctx', `r${String(i).padStart(2, '0')}`, `text ${i}`, Math.floor(i / 2));
      // Pairs share a sequence (ties broken by id); every third record is off the chain.
      return { ...w, keys: i % 3 === 2 ? ['other'] : ['chain', `solo${i}`] };
    });
    const sqlite = await openStore(':memory:');
    const statements = countStatements();
    const store = await openPostgresStore({ url: await createTestDatabase() });
    try {
      await sqlite.writeMemories('ctx', writes);
      await store.writeMemories('ctx', writes);
      const step = async (
        position: { sequence: number; id: string },
        direction: 'before' | 'after',
        n: number,
      ) => {
        const out: string[] = [];
        let cursor = position;
        while (out.length < n) {
          const next = await sqlite.adjacentByKey('ctx', 'chain', cursor, direction);
          if (!next) break;
          out.push(next.id);
          cursor = { sequence: next.sequence, id: next.id };
        }
        return out;
      };
      const places = [
        { sequence: -1, id: '' },
        { sequence: 2, id: 'r04' },
        { sequence: 2, id: 'r045' }, // not a stored record
        { sequence: 9, id: 'z' },
      ];
      for (const place of places) {
        for (const direction of ['before', 'after'] as const) {
          for (const n of [1, 3, 20]) {
            const run = await store.adjacentRunByKey!('ctx', 'chain', place, direction, n);
            expect(
              run.map((r) => r.id),
              `${place.id} ${direction} ${n}`,
            ).toEqual(await step(place, direction, n));
          }
        }
      }
      expect(await store.adjacentRunByKey!('ctx', 'chain', places[1]!, 'after', 0)).toEqual([]);
      await expect(store.adjacentRunByKey!('ctx', 'chain', places[1]!, 'after', 1.5)).rejects.toMatchObject({
        code: 'INVALID_INPUT',
      });
      const sent = statements.count();
      const [back, forward, one] = await Promise.all([
        store.adjacentRunByKey!('ctx', 'chain', places[1]!, 'before', 3),
        store.adjacentRunByKey!('ctx', 'chain', places[1]!, 'after', 3),
        store.adjacentByKey('ctx', 'chain', places[1]!, 'after'),
      ]);
      expect(statements.count() - sent).toBe(3);
      expect(back.map((r) => r.id)).toEqual(await step(places[1]!, 'before', 3));
      expect(forward.map((r) => r.id)).toEqual(await step(places[1]!, 'after', 3));
      expect(one?.id).toBe(forward[0]!.id);
    } finally {
      statements.stop();
      await store.close();
      await sqlite.close();
    }
  });
});

async function readDocs(url: string, ids: string[]) {
  const store = await openPostgresStore({ url });
  try {
    return await store.semantic.getDocs('ctx', ids);
  } finally {
    await store.close();
  }
}

/** Statements sent by the pg clients of this process from now until stop(). */
function countStatements(): { count(): number; stop(): void } {
  const original = pg.Client.prototype.query;
  let n = 0;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    n++;
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  return {
    count: () => n,
    stop() {
      pg.Client.prototype.query = original;
    },
  };
}
