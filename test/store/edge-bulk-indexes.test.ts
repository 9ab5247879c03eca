import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { ArchiveStore } from '../../src/store/archive-store-spec.ts';
import { createSqliteStore } from '../../src/store/sqlite-store.ts';
import type { MemoryEdge } from '../../src/types/relation.ts';
import { write } from './store-conformance.ts';

const dir = mkdtempSync(join(tmpdir(), 'graphmemix-edgeidx-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A low threshold, so the tests stay small (the default is for archives of ~500k memories and more). */
const BULK_EDGE_INDEX_FROM = 200;
const openStore = async (file: string) =>
  createSqliteStore(file, { bulkEdgeIndexFrom: BULK_EDGE_INDEX_FROM });

const id = (contextId: string, i: number) => `${contextId}-${String(i).padStart(5, '0')}`;

/** `count` memories and the chain of consecutive_turn edges between them (count - 1 edges). */
async function chain(store: ArchiveStore, contextId: string, count: number): Promise<MemoryEdge[]> {
  const writes = Array.from({ length: count }, (_, i) => write(contextId, id(contextId, i), `turn ${i}`, i));
  for (let at = 0; at < writes.length; at += 1000)
    await store.writeMemories(contextId, writes.slice(at, at + 1000));
  return Array.from({ length: count - 1 }, (_, i) => ({
    contextId,
    a: id(contextId, i),
    b: id(contextId, i + 1),
    types: ['consecutive_turn'],
    strength: 0.99,
  }));
}

/** The schema cookie (every CREATE / DROP moves it) and the edge indexes' SQL. */
function schema(file: string): { version: number; indexes: string[]; integrity: string } {
  const db = new Database(file, { readonly: true });
  try {
    return {
      version: db.pragma('schema_version', { simple: true }) as number,
      indexes: db
        .prepare(
          "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'edges' AND sql IS NOT NULL",
        )
        .pluck()
        .all() as string[],
      integrity: db.pragma('integrity_check', { simple: true }) as string,
    };
  } finally {
    db.close();
  }
}

/** Each sampled memory's edges by neighbors(), which reads edges_by_b for the ends named as b. */
async function expectChainNeighbours(store: ArchiveStore, contextId: string, count: number): Promise<void> {
  for (const i of [0, 1, Math.floor(count / 2), count - 1]) {
    const found = (await store.neighbors(contextId, [id(contextId, i)])).map((edge) => [edge.a, edge.b]);
    const want = [i - 1, i]
      .filter((j) => j >= 0 && j + 1 < count)
      .map((j) => [id(contextId, j), id(contextId, j + 1)]);
    expect(found).toEqual(want);
  }
}

describe('SQLite replaceEdges: the edge indexes of a bulk replacement', () => {
  it('rebuilds them by one sort when the context holds most edges of the file, and keeps them otherwise', async () => {
    const file = join(dir, 'bulk.db');
    const store = await openStore(file);
    const count = 2 * BULK_EDGE_INDEX_FROM + 1;
    const edges = await chain(store, 'big', count);
    const before = schema(file);
    await store.replaceEdges('big', ['consecutive_turn'], edges);
    const after = schema(file);
    expect(after.version).toBeGreaterThan(before.version);
    expect(after.indexes).toEqual(before.indexes);
    expect(after.integrity).toBe('ok');
    await expectChainNeighbours(store, 'big', count);
    expect((await store.countEdges('big')).consecutive_turn).toBe(count - 1);

    // A large replacement (over the threshold) that the other contexts' edges outnumber: row by row.
    const small = await chain(store, 'small', BULK_EDGE_INDEX_FROM + 1);
    const beforeSmall = schema(file);
    await store.replaceEdges('small', ['consecutive_turn'], small);
    expect(schema(file).version).toBe(beforeSmall.version);
    await expectChainNeighbours(store, 'small', BULK_EDGE_INDEX_FROM + 1);
    await store.close();
  });

  it('replaces a context under the size threshold row by row, even alone in its file', async () => {
    const file = join(dir, 'few.db');
    const store = await openStore(file);
    const few = await chain(store, 'few', 50);
    const before = schema(file);
    await store.replaceEdges('few', ['consecutive_turn'], few);
    expect(schema(file).version).toBe(before.version);
    await expectChainNeighbours(store, 'few', 50);
    await store.close();
  });

  it('a refused bulk replacement takes the dropped index back with its rows', async () => {
    const file = join(dir, 'refused.db');
    const store = await openStore(file);
    const count = BULK_EDGE_INDEX_FROM + 1;
    const edges = await chain(store, 'big', count);
    const before = schema(file);
    const stranger: MemoryEdge = { ...edges[0]!, a: id('big', 0), b: 'zz-unknown' };
    await expect(store.replaceEdges('big', ['consecutive_turn'], [...edges, stranger])).rejects.toMatchObject(
      {
        code: 'INVALID_INPUT',
      },
    );
    const after = schema(file);
    expect(after).toEqual(before);
    expect((await store.countEdges('big')).consecutive_turn ?? 0).toBe(0);
    // The store goes on with the index in place.
    await store.replaceEdges('big', ['consecutive_turn'], edges);
    await expectChainNeighbours(store, 'big', count);
    await store.close();
  });
});
