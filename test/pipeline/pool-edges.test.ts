import { describe, expect, it } from 'vitest';
import { edgesAmongIds, edgesTouchingIds } from '../../src/pipeline/pool-edges.ts';
import type { ArchiveStore } from '../../src/store/archive-store-spec.ts';
import { openStore } from '../../src/store/open-store.ts';
import { write } from '../store/store-conformance.ts';

/**
 * The question path reuses the seeds' edges (expansion's read) for the pool's inner relations and the packet's
 * version links: what it returns must equal a fresh neighbors read, on every backend and without edgesAmong.
 */
describe.each(['memory:', ':memory:'])('pool edge reads (%s)', (path) => {
  it('equal a fresh neighbors read, filtered, in the same order', async () => {
    const store = await openStore(path);
    const ids = Array.from({ length: 40 }, (_, i) => `m${String(i).padStart(2, '0')}`);
    await store.writeMemories(
      'ctx',
      ids.map((id, i) => write('ctx', id, `text ${id}`, i)),
    );
    // A chain plus chords every 7, so seeds, pool members and outsiders are linked in every combination.
    const edges = [
      ...ids.slice(1).map((id, i) => [ids[i]!, id] as const),
      ...ids.slice(7).map((id, i) => [ids[i]!, id] as const),
    ];
    for (const type of ['consecutive_turn', 'semantic_knn'] as const) {
      await store.replaceEdges(
        'ctx',
        [type],
        edges
          .filter((_, i) => (type === 'semantic_knn') === (i % 3 === 0))
          .map(([a, b]) => ({ contextId: 'ctx', a, b, types: [type], strength: 0.5 })),
      );
    }
    const seeds = ['m03', 'm10', 'm21', 'm22'];
    const pool = [...seeds, 'm04', 'm11', 'm17', 'm28', 'm29', 'm35'];
    const seedEdges = { edges: await store.neighbors('ctx', seeds), seedIds: new Set(seeds) };
    const inPool = (e: { a: string; b: string }) => pool.includes(e.a) && pool.includes(e.b);
    const fresh = (await store.neighbors('ctx', pool)).filter(inPool);
    expect(fresh.length).toBeGreaterThan(4);
    expect(await edgesAmongIds(store, 'ctx', pool, seedEdges)).toEqual(fresh);
    // A backend without edgesAmong falls back to neighbors of the non-seed members.
    const plain = Object.assign(Object.create(store) as ArchiveStore, { edgesAmong: undefined });
    expect(await edgesAmongIds(plain, 'ctx', pool, seedEdges)).toEqual(fresh);
    const packet = ['m10', 'm29', 'm04', 'm22'];
    expect(await edgesTouchingIds(store, 'ctx', packet, seedEdges)).toEqual(
      await store.neighbors('ctx', packet),
    );
    expect(await edgesTouchingIds(store, 'ctx', ['m10'], seedEdges)).toEqual(
      await store.neighbors('ctx', ['m10']),
    );
    await store.close();
  });
});
