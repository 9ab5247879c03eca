import { afterAll, describe, expect, it } from 'vitest';
import { compactSemantic } from '../../src/digest/incremental/compact-semantic.ts';
import { ingestItems } from '../../src/digest/ingest.ts';
import type { ArchiveStore } from '../../src/store/archive-store-spec.ts';
import { openStore } from '../../src/store/open-store.ts';
import { PostgresPostingsCache } from '../../src/store/postgres/postgres-postings-cache.ts';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { UnitPrefetch } from '../../src/store/postgres/postgres-unit-prefetch.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';
import { countRoundTrips, createTestDatabase, dropTestDatabases, PG_SKIP } from './postgres-test-db.ts';
import { SHARED_WORD_CHAT, SHARED_WORD_TEXTS as TEXTS, write } from './store-conformance.ts';

/**
 * The PostgreSQL semantic index keeps posting reads, term bounds and document frequencies across units of
 * work (postgres-postings-cache.ts). What a unit reads through them must be what the database says at that
 * point, whoever wrote in between: another process (a second store on the same database), a deleteMemory,
 * a rolled-back unit, the unit's own writes.
 */
afterAll(dropTestDatabases);
if (PG_SKIP) console.warn(`[postgres kept postings skipped] ${PG_SKIP}`);

const roundTrips = countRoundTrips();

const doc = (memoryId: string, weight: number) => ({
  memoryId,
  terms: ['harbour', 'zebra'],
  weights: [weight, Math.sqrt(1 - weight * weight)],
  neighbours: [],
});

/** A unit's read-ahead with a snapshot at `version`. */
function unitAt(version: string): UnitPrefetch {
  const unit = new UnitPrefetch();
  unit.snapshot = { space: 'tfidf', documents: 3, k: 2, createdAt: 't', changes: 0 };
  unit.snapshotVersion = version;
  return unit;
}

const ALL = { min: Number.NEGATIVE_INFINITY, below: Number.POSITIVE_INFINITY };

describe('PostgresPostingsCache', () => {
  it('serves a read only from a kept read that holds all of it', () => {
    const cache = new PostgresPostingsCache();
    const unit = unitAt('v1');
    expect(cache.usable('c', unit)).toBe(true);
    const rows = [
      { memoryId: 'a', weight: 0.9 },
      { memoryId: 'b', weight: 0.5 },
      { memoryId: 'c', weight: 0.3 },
    ];
    cache.keep('c', unit, cache.epoch, { term: 't', ...ALL, top: 3 }, rows);
    expect(cache.get('c', { term: 't', ...ALL, top: 2 })).toEqual(rows.slice(0, 2));
    // Three kept of a top-3 read: a fourth may exist.
    expect(cache.get('c', { term: 't', ...ALL, top: 4 })).toBeUndefined();
    expect(cache.get('c', { term: 't', min: 0.4, below: 0.95, top: null })).toEqual(rows.slice(0, 2));
    // A posting of weight 0.3 may follow the kept ones (ties): not served.
    expect(cache.get('c', { term: 't', min: 0.3, below: 1, top: null })).toBeUndefined();
    expect(cache.maxWeight('c', 't')).toBe(0.9);
    // A whole list (read from 0) serves every window and top.
    cache.keep(
      'c',
      unit,
      cache.epoch,
      { term: 'u', min: 0, below: Number.POSITIVE_INFINITY, top: null },
      rows,
    );
    expect(cache.get('c', { term: 'u', ...ALL, top: 10 })).toEqual(rows);
    expect(cache.get('c', { term: 'u', min: 0.1, below: 0.5, top: null })).toEqual(rows.slice(2));
    cache.keep('c', unit, cache.epoch, { term: 'none', ...ALL, top: 5 }, []);
    expect(cache.maxWeight('c', 'none')).toBeNull();
    expect(cache.maxWeight('c', 'unread')).toBeUndefined();
    // A read issued before a write started is not kept.
    const epoch = cache.epoch;
    cache.writing('c', unit)({ put: [], replaced: false });
    cache.keep('c', unit, epoch, { term: 'late', ...ALL, top: 5 }, rows);
    expect(cache.get('c', { term: 'late', ...ALL, top: 1 })).toBeUndefined();
  });

  it('keeps reads for the next unit only at the version its last owner committed', () => {
    const cache = new PostgresPostingsCache();
    const rows = [{ memoryId: 'a', weight: 0.9 }];
    const read = { term: 't', ...ALL, top: 1 };
    const first = unitAt('v1');
    cache.usable('c', first);
    cache.keep('c', first, cache.epoch, read, rows);
    first.ended(true);
    const same = unitAt('v1');
    expect(cache.usable('c', same)).toBe(true);
    expect(cache.get('c', read)).toEqual(rows);
    same.ended(true);
    // Another writer moved the version: dropped.
    const moved = unitAt('v2');
    expect(cache.usable('c', moved)).toBe(true);
    expect(cache.get('c', read)).toBeUndefined();
    cache.keep('c', moved, cache.epoch, read, rows);
    moved.ended(false);
    // Rolled back: dropped, even at the version it started from.
    expect(cache.usable('c', unitAt('v2'))).toBe(true);
    expect(cache.get('c', read)).toBeUndefined();
    // A unit taking over from an owner whose end was not seen yet drops them (that version is unknown).
    const open = unitAt('v4');
    cache.usable('c', open);
    cache.keep('c', open, cache.epoch, read, rows);
    expect(cache.usable('c', unitAt('v4'))).toBe(true);
    expect(cache.get('c', read)).toBeUndefined();
    // A unit whose read-ahead was invalidated (a write other than writeDocs) does not use them.
    const other = unitAt('v3');
    other.invalidateContext();
    expect(cache.usable('c', other)).toBe(false);
  });
});

describe.skipIf(PG_SKIP !== undefined)('PostgreSQL kept posting reads', () => {
  it('a unit reads what the database holds after other processes, deletes, rollbacks and its own writes', async () => {
    const url = await createTestDatabase();
    const a = await openPostgresStore({ url });
    const b = await openPostgresStore({ url });
    try {
      await a.writeMemories(
        'ctx',
        TEXTS.map((text, i) => write('ctx', `m${i}`, text, i)),
      );
      await compactSemantic(a, 'ctx', { k: 2 });
      const terms = ['harbour', 'zebra', 'sunset', 'nosuchterm'];
      const reads = (store: ArchiveStore) =>
        Promise.all([
          store.semantic!.postings('ctx', 'harbour', { minWeight: 0 }),
          store.semantic!.postings('ctx', 'harbour', { top: 1 }),
          store.semantic!.postings('ctx', 'sunset', { top: 5 }),
          store.semantic!.topPostings!('ctx', terms, 3),
          store.semantic!.termBounds('ctx', terms),
          store.semantic!.documentFrequencies('ctx', terms),
        ]);
      // Outside a unit nothing is kept: the database's answer.
      const truth = () => reads(b);
      const inUnit = async (store: ArchiveStore, work?: () => Promise<void>) =>
        store.unitOfWork!('ctx', async () => {
          await work?.();
          return reads(store);
        });

      expect(await inUnit(a)).toEqual(await truth());
      // Kept: the next unit reads them with no statement (BEGIN with the read-ahead, COMMIT).
      roundTrips.reset();
      const again = await inUnit(a);
      expect(roundTrips.count).toBe(2);
      expect(again).toEqual(await truth());

      // Another process adds a document with a kept term.
      await b.writeMemories('ctx', [write('ctx', 'n1', 'harbour zebra', 10)]);
      await b.semantic!.writeDocs('ctx', { put: [doc('n1', 0.8)] });
      const afterB = await inUnit(a);
      expect(afterB[0].map((p) => p.memoryId)).toContain('n1');
      expect(afterB).toEqual(await truth());

      // This unit's own write is seen by its later reads; a rollback takes it out of what is kept.
      await a.writeMemories('ctx', [write('ctx', 'n2', 'harbour zebra again', 11)]);
      await expect(
        a.unitOfWork!('ctx', async () => {
          await reads(a);
          await a.semantic!.writeDocs('ctx', { put: [doc('n2', 0.95)] });
          const seen = await reads(a);
          expect(seen[1]).toEqual([{ memoryId: 'n2', weight: 0.95 }]);
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect((await inUnit(a))[1]).not.toEqual([{ memoryId: 'n2', weight: 0.95 }]);
      expect(await inUnit(a)).toEqual(await truth());

      // A committed own write is kept and read without a statement in the next unit.
      await a.unitOfWork!('ctx', async () => {
        await reads(a);
        await a.semantic!.writeDocs('ctx', { put: [doc('n2', 0.9)] });
      });
      roundTrips.reset();
      const own = await inUnit(a);
      expect(roundTrips.count).toBe(2);
      expect(own[1]).toEqual([{ memoryId: 'n2', weight: 0.9 }]);
      expect(own).toEqual(await truth());

      // Another process deletes memories (their postings go without a writeDocs), then replaces one.
      await b.deleteMemory('ctx', 'n2');
      expect(await inUnit(a)).toEqual(await truth());
      await b.semantic!.writeDocs('ctx', { put: [doc('n1', 0.6)] });
      const replaced = await inUnit(a);
      expect(replaced[0].find((p) => p.memoryId === 'n1')?.weight).toBe(0.6);
      expect(replaced).toEqual(await truth());

      // A write of the unit other than writeDocs (deleteMemory): its later reads are the database's.
      const deleted = await inUnit(a, async () => {
        await reads(a);
        await a.deleteMemory('ctx', 'n1');
      });
      expect(deleted[0].map((p) => p.memoryId)).not.toContain('n1');
      expect(deleted).toEqual(await truth());
      expect(await inUnit(a)).toEqual(await truth());
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('two processes adding in turn give the lists and edges of SQLite', async () => {
    const url = await createTestDatabase();
    const a = await openPostgresStore({ url });
    const b = await openPostgresStore({ url });
    const sqlite = await openStore(':memory:');
    const item = (id: string, text: string, sequence: number) => ({
      type: 'record' as const,
      record: {
        id,
        contextId: 'c',
        kind: 'message',
        sequence,
        text,
        assets: [],
        speaker: 'Ann',
      } as MemoryRecord,
      source: { file: 't' },
    });
    try {
      const base = SHARED_WORD_CHAT.map((text, i) => item(`m${i}`, text, i));
      // Each add's words were read by a's earlier adds: a stale kept list would miss b's memories.
      const adds: Array<['a' | 'b', ReturnType<typeof item>]> = [
        ['a', item('z0', 'zebra quartz violin at the harbour', 10)],
        ['a', item('z1', 'zebra quartz violin lamp', 11)],
        ['b', item('z2', 'zebra quartz violin lamp harbour', 12)],
        ['a', item('z3', 'zebra quartz violin lamp', 13)],
        ['b', item('z0', 'a different text for the dog', 10)], // an update
        ['a', item('z4', 'zebra quartz violin at the harbour', 14)],
      ];
      for (const store of [a, sqlite]) await ingestItems(store, base, { contextId: 'c' });
      for (const [who, add] of adds) {
        await ingestItems(who === 'a' ? a : b, [add], { contextId: 'c' });
        await ingestItems(sqlite, [add], { contextId: 'c' });
      }
      await b.deleteMemory('c', 'z1');
      await sqlite.deleteMemory('c', 'z1');
      for (const store of [a, sqlite])
        await ingestItems(store, [item('z5', 'zebra quartz violin lamp', 15)], { contextId: 'c' });

      const ids = [...base.map((i) => i.record.id), 'z0', 'z2', 'z3', 'z4', 'z5'];
      const state = async (store: ArchiveStore) => ({
        lists: (await store.semantic!.getDocs('c', ids)).map((d) => [d.memoryId, d.neighbours]),
        edges: (await store.neighbors('c', ids))
          .map((e) => `${e.a}-${e.b}:${[...e.types].sort().join(',')}:${e.similarity ?? ''}`)
          .sort(),
      });
      const expected = await state(sqlite);
      expect(expected.lists.find(([id]) => id === 'z3')?.[1]).toContainEqual(
        expect.objectContaining({ memoryId: 'z2' }),
      );
      expect(await state(a)).toEqual(expected);
      expect((await a.integrityCheck()).problems).toEqual([]);
    } finally {
      await a.close();
      await b.close();
      await sqlite.close();
    }
  });
});
