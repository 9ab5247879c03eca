import { afterAll, describe, expect, it } from 'vitest';
import { compactSemantic } from '../../src/digest/incremental/compact-semantic.ts';
import { updateRelations } from '../../src/digest/update-relations.ts';
import { openStore } from '../../src/store/open-store.ts';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { countRoundTrips, createTestDatabase, dropTestDatabases, PG_SKIP } from './postgres-test-db.ts';
import { SHARED_WORD_TEXTS as TEXTS, write } from './store-conformance.ts';

/**
 * A unit of work reads ahead with its BEGIN (postgres-unit-prefetch.ts) and queues its last writes for its
 * COMMIT (PostgresSession.deferInUnit); writes send their first read with BEGIN and their counters with
 * COMMIT (docs/postgres.md, "Round trips of an add"). What the unit serves from the read-ahead must be what
 * the database says at that point, queued writes must be seen by every later statement, and a failure must
 * take them back with the rest.
 */
afterAll(dropTestDatabases);
if (PG_SKIP) console.warn(`[postgres unit read-ahead skipped] ${PG_SKIP}`);

/** Round trips of this process's pg clients. */
const roundTrips = countRoundTrips();

describe.skipIf(PG_SKIP !== undefined)('PostgreSQL unit of work: read-ahead and queued writes', () => {
  it('serves the read-ahead exactly, sees its own queued writes, and learns meta keys for the next unit', async () => {
    const store = await openPostgresStore({ url: await createTestDatabase() });
    try {
      await store.writeMemories(
        'ctx',
        TEXTS.map((text, i) => write('ctx', `m${i}`, text, i)),
      );
      await compactSemantic(store, 'ctx', { k: 2 });
      const journal = await store.pendingRelationWork('ctx', 100);
      expect(journal.length).toBe(TEXTS.length);
      const snapshot = await store.semantic!.getSnapshot('ctx');
      await store.setMeta('probe:ctx', { n: 1 });

      // First unit: reads the meta key with a statement (and learns it); the rest comes from the read-ahead.
      roundTrips.reset();
      await store.unitOfWork!('ctx', async () => {
        expect(await store.relationWorkStatus('ctx')).toEqual({
          pending: TEXTS.length,
          lastSeq: journal.at(-1)!.seq,
        });
        expect(await store.countMemories('ctx')).toBe(TEXTS.length);
        expect(await store.getMeta('probe:ctx')).toEqual({ n: 1 });
        expect(await store.semantic!.getSnapshot('ctx')).toEqual(snapshot);
        expect(await store.pendingRelationWork('ctx', 100)).toEqual(journal);
        expect((await store.getMemories('ctx', ['m1', 'm0'])).map((r) => r.id)).toEqual(['m1', 'm0']);
      });
      // BEGIN with the read-ahead, the meta read, COMMIT.
      expect(roundTrips.count).toBe(3);

      // Second unit: the learned key comes with BEGIN; queued writes are seen by later statements.
      roundTrips.reset();
      await store.unitOfWork!('ctx', async () => {
        expect(await store.getMeta('probe:ctx')).toEqual({ n: 1 });
        await store.setMeta('probe:ctx', { n: 2 });
        expect(await store.getMeta('probe:ctx')).toEqual({ n: 2 });
        await store.clearRelationWork(
          'ctx',
          journal.slice(0, 2).map((entry) => entry.seq),
        );
        expect(roundTrips.count).toBe(1); // BEGIN only: the meta write and the journal delete are queued
        // A statement after queued writes sees them (they go out first, in order).
        expect((await store.pendingRelationWork('ctx', 100)).length).toBe(TEXTS.length - 2);
        expect(await store.relationWorkStatus('ctx')).toMatchObject({ pending: TEXTS.length - 2 });
        // A write of memories in the unit invalidates the count and the records read ahead.
        await store.writeMemories('ctx', [write('ctx', 'm9', 'a new memory', 9)]);
        expect(await store.countMemories('ctx')).toBe(TEXTS.length + 1);
        expect((await store.getMemories('ctx', ['m9'])).map((r) => r.id)).toEqual(['m9']);
      });
      expect(await store.getMeta('probe:ctx')).toEqual({ n: 2 });
      expect(await store.relationWorkStatus('ctx')).toMatchObject({ pending: TEXTS.length - 1 });

      // Queued writes still pending at the end ride with COMMIT, and are committed.
      await store.unitOfWork!('ctx', async () => {
        await store.setMeta('probe:ctx', undefined);
        await store.clearRelationWork(
          'ctx',
          (await store.pendingRelationWork('ctx', 100)).map((entry) => entry.seq),
        );
      });
      expect(await store.getMeta('probe:ctx')).toBeUndefined();
      expect(await store.relationWorkStatus('ctx')).toEqual({ pending: 0 });
    } finally {
      await store.close();
    }
  });

  it('hostile ids and keys in the statements built with literals are data, and a NUL is INVALID_INPUT', async () => {
    const store = await openPostgresStore({ url: await createTestDatabase() });
    try {
      const hostile = "m'); DROP TABLE memories; --\\";
      await store.writeMemories('ctx', [write('ctx', hostile, 'quoted words', 0)]);
      expect((await store.getMemories('ctx', [hostile])).map((r) => r.id)).toEqual([hostile]);
      await store.setMeta(`k'\\${hostile}`, { v: "it's" });
      await store.unitOfWork!('ctx', async () => {
        await store.setMeta(`u'${hostile}`, 'x');
      });
      expect(await store.getMeta(`k'\\${hostile}`)).toEqual({ v: "it's" });
      expect(await store.getMeta(`u'${hostile}`)).toBe('x');
      await expect(store.writeMemories('ctx', [write('ctx', 'a\u0000b', 'nul', 1)])).rejects.toMatchObject({
        code: 'INVALID_INPUT',
      });
      await expect(store.setMeta('a\u0000b', 1)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      // A refused key read inside a unit is not learned: the next unit of the context still opens.
      await expect(store.unitOfWork!('ctx', () => store.getMeta('a\u0000b'))).rejects.toMatchObject({
        code: 'INVALID_INPUT',
      });
      await store.unitOfWork!('ctx', () => store.countMemories('ctx'));
      expect(await store.countMemories('ctx')).toBe(1);
    } finally {
      await store.close();
    }
  });

  it('a failing unit takes its queued writes back with the rest', async () => {
    const store = await openPostgresStore({ url: await createTestDatabase() });
    try {
      await store.writeMemories('ctx', [write('ctx', 'm0', 'one', 0), write('ctx', 'm1', 'two', 1)]);
      const journal = await store.pendingRelationWork('ctx', 10);
      await expect(
        store.unitOfWork!('ctx', async () => {
          await store.setMeta('probe:ctx', 'set');
          await store.clearRelationWork(
            'ctx',
            journal.map((entry) => entry.seq),
          );
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect(await store.getMeta('probe:ctx')).toBeUndefined();
      expect(await store.pendingRelationWork('ctx', 10)).toEqual(journal);
      // A store error after a queued write (an edge to an unknown memory) takes the queued write back too.
      await expect(
        store.unitOfWork!('ctx', async () => {
          await store.clearRelationWork(
            'ctx',
            journal.map((entry) => entry.seq),
          );
          await store.changeEdges('ctx', [{ a: 'm0', b: 'nope', add: ['same_round'] }]);
        }),
      ).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      expect(await store.pendingRelationWork('ctx', 10)).toEqual(journal);
    } finally {
      await store.close();
    }
  });

  it('adds and a delete through updateRelations give the edges of SQLite and settle the journal', async () => {
    const url = await createTestDatabase();
    const pgStore = await openPostgresStore({ url });
    const sqlite = await openStore(':memory:');
    try {
      for (const store of [pgStore, sqlite]) {
        await store.writeMemories(
          'ctx',
          TEXTS.map((text, i) => write('ctx', `m${i}`, text, i)),
        );
        await updateRelations(store, 'ctx', { k: 2 });
        for (let i = 0; i < 3; i++) {
          await store.writeMemories('ctx', [write('ctx', `n${i}`, `${TEXTS[i]} again at dawn`, 10 + i)]);
          await updateRelations(store, 'ctx', { k: 2 });
        }
        await store.deleteMemory('ctx', 'm1');
        await updateRelations(store, 'ctx', { k: 2 });
      }
      const ids = [...TEXTS.keys()].map((i) => `m${i}`).concat(['n0', 'n1', 'n2']);
      const edges = async (store: typeof sqlite) =>
        (await store.neighbors('ctx', ids))
          .map((e) => `${e.a}-${e.b}:${[...e.types].sort().join(',')}`)
          .sort();
      const expected = await edges(sqlite);
      expect(expected.length).toBeGreaterThan(0);
      expect(await edges(pgStore)).toEqual(expected);
      expect(await pgStore.relationWorkStatus('ctx')).toEqual({ pending: 0 });
      expect(await pgStore.getMeta('relations-inflight:ctx')).toBeUndefined();
      expect((await pgStore.integrityCheck()).problems).toEqual([]);
    } finally {
      await pgStore.close();
      await sqlite.close();
    }
  });
});
