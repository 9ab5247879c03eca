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

/**
 * The offline node verifier reads the pool's inner relations: expansion asks for them together with the pool's
 * records, so a backend with round trips (PostgreSQL) sends both in one. The answer stays what reading them
 * one after the other gives.
 */
describe('pool records and inner relations', () => {
  it('are read together, with the same result as one after the other', async () => {
    const { openGraphmemix } = await import('../../src/graphmemix.ts');
    const { retrieveEvidence } = await import('../../src/pipeline/retrieve-evidence.ts');
    const gm = await openGraphmemix({ db: 'memory:' });
    const store = gm.store;
    // The question's word is in more notes than the seeds: expansion adds their kNN neighbours to the pool.
    const topics = [
      'kayak',
      'pottery',
      'train',
      'tomatoes',
      'piano',
      'dentist',
      'bakery',
      'hiking',
      'taxes',
      'paint',
    ];
    await gm.addMemories(
      'ctx',
      Array.from({ length: 200 }, (_, i) => ({
        id: `n${i}`,
        text: `${topics[i % 10]} and ${topics[(i * 3) % 7]} note ${i}`,
        sessionId: `s${Math.floor(i / 4)}`,
        timestamp: new Date(Date.UTC(2024, 4, 1) + i * 3_600_000).toISOString(),
      })),
    );
    // Its kNN edges (after-write) are in before the question: expansion follows them.
    await gm.waitForCompactions();
    const events: string[] = [];
    const tick = () => new Promise((resolve) => setTimeout(resolve, 2));
    const watched = Object.assign(Object.create(store) as ArchiveStore, {
      getMemories: async (contextId: string, ids: readonly string[]) => {
        events.push('records:start');
        await tick();
        events.push('records:end');
        return store.getMemories(contextId, ids);
      },
      edgesAmong: async (contextId: string, ids: readonly string[]) => {
        events.push('among:start');
        await tick();
        return store.edgesAmong!(contextId, ids);
      },
    });
    const question = { prompt: 'what did the notes say about the kayak?' };
    const together = await retrieveEvidence({ store: watched, models: {} }, 'ctx', question);
    expect(events.indexOf('among:start')).toBeGreaterThan(-1);
    expect(events.indexOf('among:start')).toBeLessThan(events.indexOf('records:end'));
    const plain = await retrieveEvidence({ store, models: {} }, 'ctx', question);
    expect(together.pool).toEqual(plain.pool);
    expect(together.evidence).toEqual(plain.evidence);
    await gm.close();
  });
});
