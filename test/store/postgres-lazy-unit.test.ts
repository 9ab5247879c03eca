import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ingestItems } from '../../src/digest/ingest.ts';
import { retrieveEvidence } from '../../src/pipeline/retrieve-evidence.ts';
import type { ArchiveStore } from '../../src/store/archive-store-spec.ts';
import { openStore } from '../../src/store/open-store.ts';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';
import { createTestDatabase, dropTestDatabases, PG_SKIP } from './postgres-test-db.ts';
import { SHARED_WORD_CHAT as TEXTS, write } from './store-conformance.ts';

/**
 * An add (a small ingest into one context) is ONE PostgreSQL transaction with its relation update: a lazy
 * unit of work (PostgresSession.unitOfWork `lazy`) sends its BEGIN with the write's first read and reads
 * ahead at its first read after the write; the report's edge counts are a read queued for the COMMIT
 * (UnitOfWork.queueRead). Results must be SQLite's; a failure takes the write back. A question's reads run in
 * one read-only transaction (a read unit, PostgresSession.readUnit).
 */
afterAll(dropTestDatabases);
if (PG_SKIP) console.warn(`[postgres lazy unit skipped] ${PG_SKIP}`);

/** Texts of this process's pg queries while a test runs (each `client.query` call is one round trip). */
const sent: string[] = [];
const original = pg.Client.prototype.query;
beforeEach(() => {
  sent.length = 0;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string })?.text;
    sent.push(text ?? '');
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
});
afterEach(() => {
  pg.Client.prototype.query = original;
});

const item = (id: string, text: string, sequence: number) => ({
  type: 'record' as const,
  record: { id, contextId: 'c', kind: 'message', sequence, text, assets: [], speaker: 'Ann' } as MemoryRecord,
  source: { file: 't' },
});

describe.skipIf(PG_SKIP !== undefined)('PostgreSQL add: one lazy unit of work', () => {
  it('an add is one transaction with its relation update, with the report and edges of SQLite', async () => {
    const pgStore = await openPostgresStore({ url: await createTestDatabase() });
    const sqlite = await openStore(':memory:');
    try {
      const base = TEXTS.map((text, i) => item(`m${i}`, text, i));
      const adds = [
        item('n0', 'the dog at the harbour at sunset', 10),
        item('n1', 'eggs and milk for the market', 11),
        item('n0', 'the dog at the harbour wall at dawn', 10), // an update
      ];
      const reports: Record<string, unknown[]> = { pg: [], sqlite: [] };
      const trips: number[] = [];
      for (const [name, store] of [
        ['pg', pgStore],
        ['sqlite', sqlite],
      ] as Array<[string, ArchiveStore]>) {
        await ingestItems(store, base, { contextId: 'c' });
        for (const add of adds) {
          sent.length = 0;
          const report = await ingestItems(store, [add], { contextId: 'c' });
          reports[name]!.push({ ...report, seconds: 0, stepSeconds: {} });
          if (name !== 'pg') continue;
          trips.push(sent.length);
          // One transaction: its BEGIN rides with the write's first read; the edge counts with COMMIT.
          expect(sent.filter((text) => text.includes('BEGIN'))).toHaveLength(1);
          expect(sent[0]).toContain('gmx_l_stored_hashes');
          const commit = sent.filter((text) => /COMMIT$/.test(text));
          expect(commit).toHaveLength(1);
          expect(commit[0]).toContain('gmx_l_edge_counts');
          // The read-ahead went out after the write, with the write's counters.
          const ahead = sent.findIndex((text) => text.includes('gmx_l_unit_prefetch'));
          expect(sent[ahead]).toContain('gmx_l_write_counters');
        }
      }
      expect(reports.pg).toEqual(reports.sqlite);
      // Round trips per add (13 for the second before the kNN sync's edge read went with the lists' write;
      // [18, 12, 36] before posting reads were kept across units and an add's unkept terms were read with
      // their frequencies: postgres-postings-cache.ts, postgres-semantic-reads.ts; [17, 11, 30] before the
      // schema and kNN steps ran together, sharing round trips: update-relations.ts; the update's 28 before its
      // refills shared one read cache: update-semantic-knn.ts).
      expect(trips).toEqual([17, 8, 27]);
      const ids = [...TEXTS.keys()].map((i) => `m${i}`).concat(['n0', 'n1']);
      const edges = async (store: ArchiveStore) =>
        (await store.neighbors('c', ids))
          .map((e) => `${e.a}-${e.b}:${[...e.types].sort().join(',')}:${e.similarity ?? ''}`)
          .sort();
      const expected = await edges(sqlite);
      expect(expected.length).toBeGreaterThan(0);
      expect(await edges(pgStore)).toEqual(expected);
      expect(await pgStore.relationWorkStatus('c')).toEqual({ pending: 0 });
      expect((await pgStore.integrityCheck()).problems).toEqual([]);
    } finally {
      await pgStore.close();
      await sqlite.close();
    }
  });

  it('a lazy unit reads ahead after its write, and a failure takes the write back', async () => {
    const store = await openPostgresStore({ url: await createTestDatabase() });
    try {
      await store.writeMemories('c', [write('c', 'm0', 'one', 0)]);
      const journal = await store.pendingRelationWork('c', 10);
      sent.length = 0;
      await store.unitOfWork!(
        'c',
        async () => {
          await store.writeMemories('c', [write('c', 'm1', 'two', 1)]);
          const status = await store.relationWorkStatus('c');
          expect(status.pending).toBe(2);
          const trips = sent.length;
          // Served from the read-ahead: no statement of their own.
          expect(await store.countMemories('c')).toBe(2);
          expect((await store.pendingRelationWork('c', 10)).map((entry) => entry.memoryId)).toEqual([
            'm0',
            'm1',
          ]);
          expect((await store.getMemories('c', ['m1'])).map((record) => record.text)).toEqual(['two']);
          expect(sent.length).toBe(trips);
        },
        { recordWrite: true },
      );
      // BEGIN with the stored hashes, the records and lexical writes, the counters with the read-ahead, COMMIT.
      expect(sent).toHaveLength(4);
      expect(await store.countMemories('c')).toBe(2);

      await expect(
        store.unitOfWork!(
          'c',
          async () => {
            await store.writeMemories('c', [write('c', 'm2', 'three', 2)]);
            expect(await store.countMemories('c')).toBe(3);
            throw new Error('boom');
          },
          { recordWrite: true },
        ),
      ).rejects.toThrow('boom');
      expect(await store.countMemories('c')).toBe(2);
      expect(await store.getMemory('c', 'm2')).toBeUndefined();
      expect((await store.pendingRelationWork('c', 10)).length).toBe(journal.length + 1);
      // A unit that fails before sending anything leaves the connection usable.
      await expect(
        store.unitOfWork!('c', async () => Promise.reject(new Error('early')), { recordWrite: true }),
      ).rejects.toThrow('early');
      expect(await store.countMemories('c')).toBe(2);
    } finally {
      await store.close();
    }
  });

  it('a read queued in a unit sees the state when it was queued; awaited inside, it goes alone', async () => {
    const store = await openPostgresStore({ url: await createTestDatabase() });
    try {
      await store.writeMemories('c', [write('c', 'a', 'one', 0), write('c', 'b', 'two', 1)]);
      let queued: Promise<Record<string, number>> | undefined;
      const inside = await store.unitOfWork!('c', async () => {
        queued = store.countEdges('c');
        await store.changeEdges('c', [{ a: 'a', b: 'b', add: ['same_round'] }]);
        // Awaited inside the unit with nothing else to send: it is sent on its own (no deadlock).
        return store.countEdges('c');
      });
      expect((await queued!).same_round).toBe(0);
      expect(inside.same_round).toBe(1);
      expect((await store.countEdges('c')).same_round).toBe(1);

      // A failing unit rejects the reads it still held.
      let lost: Promise<unknown> | undefined;
      await expect(
        store.unitOfWork!('c', async () => {
          lost = store.countEdges('c');
          lost.catch(() => {});
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      await expect(lost).rejects.toThrow('boom');
    } finally {
      await store.close();
    }
  });
});

describe.skipIf(PG_SKIP !== undefined)('PostgreSQL read unit: a question in one read transaction', () => {
  it('runs the reads of a unit in one transaction, writes in their own, and joins a write unit', async () => {
    const store = await openPostgresStore({ url: await createTestDatabase() });
    try {
      await store.writeMemories('c', [write('c', 'a', 'one', 0), write('c', 'b', 'two', 1)]);
      await store.changeEdges('c', [{ a: 'a', b: 'b', add: ['same_round'] }]);
      sent.length = 0;
      const read = await store.unitOfWork!(
        'c',
        async () => {
          const edges = await store.neighbors('c', ['a']);
          const records = await store.getMemories('c', ['a', 'b']);
          const meta = await store.getMeta('probe:c');
          // A write inside a read unit is its own transaction (the unit's is read-only) and commits.
          await store.setMeta('probe:c', 1);
          return { edges: edges.length, records: records.length, meta };
        },
        { read: true },
      );
      // One read transaction (its BEGIN, three reads, COMMIT) and the write's own.
      expect(sent.filter((text) => text.includes('READ ONLY'))).toHaveLength(1);
      expect(sent.filter((text) => text.startsWith('BEGIN'))).toHaveLength(2);
      expect(read).toEqual({ edges: 1, records: 2, meta: undefined });
      expect(await store.getMeta('probe:c')).toBe(1);

      // Inside a write unit of the context, a read unit joins it: its reads see the unit's writes.
      await store.unitOfWork!('c', async () => {
        await store.changeEdges('c', [{ a: 'a', b: 'b', remove: ['same_round'] }]);
        const inside = await store.unitOfWork!('c', () => store.neighbors('c', ['a']), { read: true });
        expect(inside).toEqual([]);
      });
      // With a model call inside (`remote`), the calls run as they are (no transaction held across it).
      sent.length = 0;
      await store.unitOfWork!(
        'c',
        async () => {
          await store.getMemories('c', ['a']);
          await store.getMemories('c', ['b']);
        },
        { read: true, remote: true },
      );
      expect(sent.filter((text) => text.includes('READ ONLY'))).toHaveLength(2);
    } finally {
      await store.close();
    }
  });

  it('a retrieve is one read transaction and returns what SQLite returns', async () => {
    const url = await createTestDatabase();
    const pgStore = await openPostgresStore({ url });
    const sqlite = await openStore(':memory:');
    try {
      const base = TEXTS.map((text, i) => item(`m${i}`, text, i));
      const results: unknown[] = [];
      for (const store of [pgStore, sqlite]) {
        await ingestItems(store, base, { contextId: 'c' });
        sent.length = 0;
        const result = await retrieveEvidence({ store, models: {} }, 'c', {
          prompt: 'where was the dog at sunset?',
        });
        if (store === pgStore) {
          expect(sent.filter((text) => text.startsWith('BEGIN'))).toHaveLength(1);
          // Once the connection has prepared the search's first statement, the BEGIN rides with it.
          sent.length = 0;
          await retrieveEvidence({ store, models: {} }, 'c', { prompt: 'where was the dog at sunset?' });
          expect(sent[0]).toMatch(
            /^BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;.*EXECUTE graphmemix_lex_plan\(/s,
          );
        }
        results.push({
          evidence: result.evidence.map((e) => e.memoryId),
          pool: result.pool.map((c) => [c.memoryId, c.retrievalScore, c.prize]),
        });
      }
      expect((results[1] as { evidence: string[] }).evidence.length).toBeGreaterThan(0);
      expect(results[0]).toEqual(results[1]);
    } finally {
      await pgStore.close();
      await sqlite.close();
    }
  });
});
