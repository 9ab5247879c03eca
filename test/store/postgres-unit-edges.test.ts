import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { ArchiveStore, EdgeChange } from '../../src/store/archive-store-spec.ts';
import { createMemoryStore } from '../../src/store/memory-store.ts';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { UnitEdges } from '../../src/store/postgres/postgres-unit-edges.ts';
import type { MemoryEdge } from '../../src/types/relation.ts';
import { countRoundTrips, createTestDatabase, dropTestDatabases, PG_SKIP } from './postgres-test-db.ts';
import { write } from './store-conformance.ts';

/**
 * Inside a unit of work, changeEdges of pairs touching memories whose neighbours the unit read takes the
 * stored edges from that read (postgres-unit-edges.ts): one statement, which also checks the endpoints. The
 * edges must come out as the in-memory store makes them, a bad endpoint must write nothing, and a write that
 * changes edges behind the knowledge's back must make the next change read them again.
 */
afterAll(dropTestDatabases);
if (PG_SKIP) console.warn(`[postgres unit edges skipped] ${PG_SKIP}`);

/** Round trips of this process's pg clients. */
const roundTrips = countRoundTrips();

const IDS = ['m0', 'm1', 'm2', 'm3', 'm4'];

async function seeded(store: ArchiveStore): Promise<void> {
  await store.writeMemories(
    'ctx',
    IDS.map((id, i) => write('ctx', id, `memory number ${i}`, i)),
  );
  await store.changeEdges('ctx', [
    { a: 'm0', b: 'm1', add: ['same_round', 'semantic_knn'], similarity: 0.5 },
    { a: 'm2', b: 'm0', add: ['same_round'] },
    { a: 'm3', b: 'm4', add: ['consecutive_turn'] },
  ]);
}

/** The steps of an update: neighbours of m0, then changes of pairs touching m0 (one named twice). */
const CHANGES: EdgeChange[] = [
  { a: 'm1', b: 'm0', remove: ['same_round'] },
  { a: 'm0', b: 'm2', add: ['consecutive_turn'], remove: ['same_round'] },
  { a: 'm0', b: 'm3', add: ['semantic_knn'], similarity: 0.25 },
  { a: 'm0', b: 'm3', add: ['same_round'] },
  { a: 'm0', b: 'm4', remove: ['supersedes'] },
];

describe.skipIf(PG_SKIP !== undefined)('PostgreSQL unit of work: edge changes from the edges it read', () => {
  it('writes what the in-memory store writes, in one statement per change', async () => {
    const reference = createMemoryStore();
    await seeded(reference);
    await reference.changeEdges('ctx', CHANGES);
    await reference.changeEdges('ctx', [{ a: 'm0', b: 'm3', remove: ['semantic_knn'] }]);

    const store = await openPostgresStore({ url: await createTestDatabase() });
    try {
      await seeded(store);
      await store.unitOfWork!('ctx', async () => {
        await store.neighbors('ctx', ['m0']);
        roundTrips.reset();
        await store.changeEdges('ctx', CHANGES);
        // The second change sees the first one's result (the knowledge took its diff).
        await store.changeEdges('ctx', [{ a: 'm0', b: 'm3', remove: ['semantic_knn'] }]);
        expect(roundTrips.count).toBe(2);
      });
      expect(await store.neighbors('ctx', IDS)).toEqual(await reference.neighbors('ctx', IDS));
      expect(await store.countEdges('ctx')).toEqual(await reference.countEdges('ctx'));
    } finally {
      await store.close();
    }
  });

  it('writes nothing when an endpoint is not a memory, and the unit goes on', async () => {
    const store = await openPostgresStore({ url: await createTestDatabase() });
    try {
      await seeded(store);
      const before = await store.neighbors('ctx', IDS);
      await store.unitOfWork!('ctx', async () => {
        await store.neighbors('ctx', ['m0']);
        roundTrips.reset();
        await expect(
          store.changeEdges('ctx', [
            { a: 'm0', b: 'm1', remove: ['same_round', 'semantic_knn'] },
            { a: 'm0', b: 'ghost', add: ['same_round'] },
          ]),
        ).rejects.toMatchObject({ code: 'INVALID_INPUT' });
        expect(roundTrips.count).toBe(1);
        // The transaction is intact (the statement did not fail) and the delete of m0-m1 did not happen.
        expect(await store.neighbors('ctx', IDS)).toEqual(before);
      });
      expect(await store.neighbors('ctx', IDS)).toEqual(before);
    } finally {
      await store.close();
    }
  });

  it('reads the stored edges again after another write of the unit, and for pairs it never read', async () => {
    const reference = createMemoryStore();
    await seeded(reference);
    await reference.replaceEdges('ctx', ['same_round'], []);
    await reference.changeEdges('ctx', [
      { a: 'm0', b: 'm2', add: ['consecutive_turn'] },
      { a: 'm3', b: 'm4', add: ['same_round'] },
    ]);

    const store = await openPostgresStore({ url: await createTestDatabase() });
    try {
      await seeded(store);
      await store.unitOfWork!('ctx', async () => {
        await store.neighbors('ctx', ['m0']);
        // Deletes m0-m2 (its only type): a change from stale knowledge would keep same_round on it.
        await store.replaceEdges('ctx', ['same_round'], []);
        await store.changeEdges('ctx', [{ a: 'm0', b: 'm2', add: ['consecutive_turn'] }]);
        await store.neighbors('ctx', ['m0']);
        roundTrips.reset();
        // m3-m4 touches no id whose neighbours were read: the stored edges are read (two statements).
        await store.changeEdges('ctx', [{ a: 'm3', b: 'm4', add: ['same_round'] }]);
        expect(roundTrips.count).toBe(2);
      });
      expect(await store.neighbors('ctx', IDS)).toEqual(await reference.neighbors('ctx', IDS));
    } finally {
      await store.close();
    }
  });
  it('applies edge writes issued together (concurrent calls of one unit) as one after the other', async () => {
    // The schema and kNN steps of an update run together: their changes of one pair must both land.
    const first: EdgeChange[] = [{ a: 'm0', b: 'm1', add: ['consecutive_turn'] }];
    const second: EdgeChange[] = [
      { a: 'm1', b: 'm0', remove: ['semantic_knn'] },
      { a: 'm0', b: 'm3', add: ['semantic_knn'], similarity: 0.25 },
    ];
    // m0-m2 has same_round only: the replacement deletes it, then the change adds it back with its type.
    const third: EdgeChange[] = [{ a: 'm0', b: 'm2', add: ['consecutive_turn'] }];
    const reference = createMemoryStore();
    await seeded(reference);
    await reference.changeEdges('ctx', first);
    await reference.changeEdges('ctx', second);
    const afterChanges = await reference.neighbors('ctx', IDS);
    await reference.replaceEdges('ctx', ['same_round'], []);
    await reference.changeEdges('ctx', third);

    const store = await openPostgresStore({ url: await createTestDatabase() });
    try {
      await seeded(store);
      await store.unitOfWork!('ctx', async () => {
        await store.neighbors('ctx', ['m0']);
        // Both from the same knowledge: at once, the second's row of m0-m1 would drop the first's type.
        await Promise.all([store.changeEdges('ctx', first), store.changeEdges('ctx', second)]);
        expect(await store.neighbors('ctx', IDS)).toEqual(afterChanges);
        // A replacement and a change issued together: at once, each would write rows the other changed.
        await Promise.all([store.replaceEdges('ctx', ['same_round'], []), store.changeEdges('ctx', third)]);
      });
      expect(await store.neighbors('ctx', IDS)).toEqual(await reference.neighbors('ctx', IDS));
      expect(await store.countEdges('ctx')).toEqual(await reference.countEdges('ctx'));
    } finally {
      await store.close();
    }
  });

  it('sends only the parts a diff needs (plain inserts for new pairs), with exact counts', async () => {
    // Each data-modifying part of the write fires its statement-level edge_counts trigger: a diff without
    // deletes has no delete part, and one whose pairs have no stored edge inserts without ON CONFLICT.
    const steps: EdgeChange[][] = [
      [{ a: 'm1', b: 'm3', add: ['same_round'] }],
      [{ a: 'm4', b: 'm3', remove: ['consecutive_turn'] }],
      [
        { a: 'm0', b: 'm1', add: ['consecutive_turn'] },
        { a: 'm2', b: 'm4', add: ['semantic_knn'], similarity: 0.75 },
        { a: 'm0', b: 'm2', remove: ['same_round'] },
      ],
    ];
    const reference = createMemoryStore();
    await seeded(reference);
    // The edge writes' statement texts (a statement's first use on a connection carries its text).
    const texts: string[] = [];
    const original = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const text = (args[0] as { text?: unknown } | undefined)?.text;
      if (typeof text === 'string' && /(INSERT INTO|DELETE FROM) edges /.test(text)) texts.push(text);
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof original;
    const store = await openPostgresStore({ url: await createTestDatabase() });
    try {
      await seeded(store);
      for (const step of steps) {
        await reference.changeEdges('ctx', step);
        texts.length = 0;
        await store.unitOfWork!('ctx', async () => {
          await store.neighbors('ctx', IDS);
          await store.changeEdges('ctx', step);
        });
        expect(await store.neighbors('ctx', IDS)).toEqual(await reference.neighbors('ctx', IDS));
        expect(await store.countEdges('ctx')).toEqual(await reference.countEdges('ctx'));
        expect(texts).toHaveLength(1);
        const [text] = texts as [string];
        const parts = [/DELETE FROM edges/, /INSERT INTO edges/, /ON CONFLICT/].map((part) =>
          part.test(text),
        );
        expect(parts).toEqual(
          [
            [false, true, false],
            [true, false, false],
            [true, true, true],
          ][steps.indexOf(step)],
        );
      }
    } finally {
      pg.Client.prototype.query = original;
      await store.close();
    }
  });

  it('learns nothing from a read issued before an edge write it may not see', async () => {
    const reference = createMemoryStore();
    await seeded(reference);
    await reference.changeEdges('ctx', [{ a: 'm0', b: 'm1', add: ['consecutive_turn'] }]);
    await reference.changeEdges('ctx', [{ a: 'm1', b: 'm0', remove: ['semantic_knn'] }]);

    const store = await openPostgresStore({ url: await createTestDatabase() });
    try {
      await seeded(store);
      await store.unitOfWork!('ctx', async () => {
        await store.neighbors('ctx', ['m0']);
        // The read of m1 goes first (it sees m0-m1 before the write) and may settle after the write's diff
        // was applied: learnt, it would put the old m0-m1 back and the next change would drop the new type.
        const [before] = await Promise.all([
          store.neighbors('ctx', ['m1']),
          store.changeEdges('ctx', [{ a: 'm0', b: 'm1', add: ['consecutive_turn'] }]),
        ]);
        expect(before.find((edge) => edge.b === 'm1')?.types).toEqual(['same_round', 'semantic_knn']);
        await store.changeEdges('ctx', [{ a: 'm1', b: 'm0', remove: ['semantic_knn'] }]);
      });
      expect(await store.neighbors('ctx', IDS)).toEqual(await reference.neighbors('ctx', IDS));
    } finally {
      await store.close();
    }
  });
});

describe('UnitEdges', () => {
  it('does not learn from a read issued before an edge write (its result may settle after the diff)', () => {
    const edge = (types: string[]) =>
      ({ contextId: 'ctx', a: 'm0', b: 'm1', types, strength: 0.9 }) as MemoryEdge;
    const known = new UnitEdges();
    known.learn(['m0'], [edge(['same_round'])], known.writeMark());
    const readIssued = known.writeMark();
    known.writing();
    known.apply({ upserts: [edge(['consecutive_turn', 'same_round'])], deletes: [] });
    // The read went out before the write: it still shows the old row.
    known.learn(['m1'], [edge(['same_round'])], readIssued);
    expect(known.storedFor([{ a: 'm1', b: 'm0' }])?.get('m0\u0000m1')?.types).toEqual([
      'consecutive_turn',
      'same_round',
    ]);
    // A read issued after the write is learnt.
    known.learn(['m1'], [edge(['supersedes'])], known.writeMark());
    expect(known.storedFor([{ a: 'm1', b: 'm0' }])?.get('m0\u0000m1')?.types).toEqual(['supersedes']);
  });
});
