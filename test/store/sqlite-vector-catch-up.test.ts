import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/digest/semantic/seeded-random.ts';
import { createSqliteStore } from '../../src/store/sqlite-store.ts';
import { write } from './store-conformance.ts';

const dir = mkdtempSync(join(tmpdir(), 'graphmemix-vector-catch-up-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Counts executions of the statement that reads a whole (context, space) of vectors: a search after a write
 * must apply the rows written since its cached index, not read them all again (issue #10: a write costs what
 * it changes).
 */
const prototype = Database.prototype as unknown as { prepare: (sql: string) => Database.Statement };
const original = prototype.prepare;
let wholeSpaceReads = 0;
beforeEach(() => {
  wholeSpaceReads = 0;
  prototype.prepare = function (this: Database.Database, sql: string) {
    const statement = original.call(this, sql);
    const flat = sql.replace(/\s+/g, ' ');
    if (
      /^SELECT memory_id, kind, key, vector FROM vectors WHERE context_id = \? AND space = \? ORDER BY/.test(
        flat,
      )
    ) {
      const all = statement.all.bind(statement);
      (statement as unknown as { all: (...args: unknown[]) => unknown }).all = (...args: unknown[]) => {
        wholeSpaceReads++;
        return all(...args);
      };
    }
    return statement;
  };
});
afterEach(() => {
  prototype.prepare = original;
});

const vector = (memoryId: string, values: number[]) => ({
  memoryId,
  kind: 'text' as const,
  key: 'main',
  vector: new Float32Array(values),
});

describe('SQLite vector search after writes', () => {
  it('catches its cached index up with the rows written since, drops removed rows, reads the space once', async () => {
    const store = createSqliteStore(join(dir, 'catch-up.db'));
    const random = mulberry32(5);
    const values = () => Array.from({ length: 3 }, () => random() * 2 - 1);
    const ids = Array.from({ length: 30 }, (_, i) => `m${String(i).padStart(2, '0')}`);
    await store.writeMemories(
      'ctx',
      ids.map((id, i) => write('ctx', id, `text ${id}`, i)),
    );
    await store.putVectors(
      'ctx',
      'space',
      ids.map((id) => vector(id, values())),
    );
    const query = new Float32Array([1, 0.5, -0.25]);
    await store.searchVectors('ctx', 'space', query, { limit: 5 });
    expect(wholeSpaceReads).toBe(1);
    for (let step = 0; step < 12; step++) {
      const id = `n${step}`;
      await store.writeMemories('ctx', [write('ctx', id, `text ${id}`, 100 + step)]);
      // The newcomer points exactly where the query does: it must rank first.
      await store.putVectors('ctx', 'space', [vector(id, [1, 0.5, -0.25])]);
      const hits = await store.searchVectors('ctx', 'space', query, { limit: 3 });
      expect(hits[0]!.memoryId).toBe(id);
      // Deleted, it must not come back from the cached index.
      await store.deleteMemory('ctx', id);
      const after = await store.searchVectors('ctx', 'space', query, { limit: 3 });
      expect(after.map((hit) => hit.memoryId)).not.toContain(id);
      expect(after).toHaveLength(3);
    }
    expect(wholeSpaceReads).toBe(1);
    await store.close();
  });

  it('a rolled-back unit of work drops the index it caught up inside the unit', async () => {
    const store = createSqliteStore(join(dir, 'rollback.db'));
    await store.writeMemories('ctx', [write('ctx', 'a', 'alpha', 0), write('ctx', 'b', 'beta', 1)]);
    await store.putVectors('ctx', 'space', [vector('a', [1, 0]), vector('b', [0, 1])]);
    const query = new Float32Array([0.6, 0.8]);
    expect((await store.searchVectors('ctx', 'space', query, { limit: 1 }))[0]!.memoryId).toBe('b');
    await expect(
      store.unitOfWork!('ctx', async () => {
        await store.writeMemories('ctx', [write('ctx', 'c', 'gamma', 2)]);
        await store.putVectors('ctx', 'space', [vector('c', [0.6, 0.8])]);
        expect((await store.searchVectors('ctx', 'space', query, { limit: 1 }))[0]!.memoryId).toBe('c');
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    // The same version number is written again by another row: the rolled-back one must not survive.
    await store.writeMemories('ctx', [write('ctx', 'd', 'delta', 3)]);
    await store.putVectors('ctx', 'space', [vector('d', [0.8, 0.6])]);
    const hits = await store.searchVectors('ctx', 'space', query, { limit: 3 });
    expect(hits.map((hit) => hit.memoryId)).toEqual(['d', 'b', 'a']);
    await store.close();
  });
});
