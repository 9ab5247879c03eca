import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  compactDense,
  type DenseRecordVector,
  updateDenseKnn,
} from '../../../src/digest/incremental/update-dense-knn.ts';
import { mulberry32 } from '../../../src/digest/semantic/seeded-random.ts';
import type { ArchiveStore } from '../../../src/store/archive-store-spec.ts';
import { openStore } from '../../../src/store/open-store.ts';

const dir = mkdtempSync(join(tmpdir(), 'graphmemix-dense-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const SPACE = 'embedding:test';

const BACKENDS: Array<[string, () => Promise<ArchiveStore>]> = [
  ['memory', () => openStore('memory:')],
  ['sqlite', () => openStore(join(dir, `dense-${files++}.db`))],
];

function unit(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const v of vector) norm += v * v;
  const length = Math.sqrt(norm);
  return vector.map((v) => (length > 0 ? v / length : 0));
}

/** Memories with no views (the kNN reads only their vectors), sequences from `first`. */
async function writeBare(store: ArchiveStore, ids: readonly string[], first: number): Promise<void> {
  await store.writeMemories(
    'ctx',
    ids.map((id, i) => ({
      record: { id, contextId: 'ctx', kind: 'message', sequence: first + i, text: id, assets: [] },
      views: [],
      contentHash: id,
    })),
  );
}

/** Brute-force top-k by cosine (ties by id), ids only. */
function bruteLists(vectors: Map<string, Float32Array>, k: number): Map<string, string[]> {
  const units = new Map([...vectors].map(([id, v]) => [id, unit(v)]));
  const out = new Map<string, string[]>();
  for (const [id, x] of units) {
    const scored = [...units]
      .filter(([other]) => other !== id)
      .map(([other, y]) => {
        let dot = 0;
        for (let d = 0; d < x.length; d++) dot += x[d]! * y[d]!;
        return { other, score: Math.round(dot * 1e9) / 1e9 };
      })
      .filter((n) => n.score > 0)
      .sort((p, q) => q.score - p.score || (p.other < q.other ? -1 : 1));
    out.set(
      id,
      scored.slice(0, k).map((n) => n.other),
    );
  }
  return out;
}

describe.each(BACKENDS)('incremental dense kNN (%s store)', (_name, open) => {
  it("reverse 'exact': adds, re-embeddings and deletes equal an exact kNN over the record vectors; edges are the mutual pairs", async () => {
    for (let seed = 1; seed <= 4; seed++) {
      const random = mulberry32(seed);
      const k = 2 + (seed % 4);
      const vector = () => Float32Array.from({ length: 6 }, () => random() * 2 - 1);
      const store = await open();
      const live = new Map<string, Float32Array>();
      let next = 0;
      const add = async (count: number): Promise<DenseRecordVector[]> => {
        const out: DenseRecordVector[] = [];
        const ids = Array.from({ length: count }, () => `v${String(next++).padStart(3, '0')}`);
        await writeBare(store, ids, next);
        for (const id of ids) {
          const v = vector();
          live.set(id, v);
          out.push({ memoryId: id, vector: v });
        }
        return out;
      };
      const first = await add(15);
      expect(
        (await updateDenseKnn(store, 'ctx', SPACE, { upserted: first, removed: [] }, { k, reverse: 'exact' }))
          .mode,
      ).toBe('compacted');
      const exact = { reverse: 'exact' } as const;
      for (let step = 0; step < 10; step++) {
        const roll = random();
        const ids = [...live.keys()];
        if (roll < 0.5) {
          await updateDenseKnn(
            store,
            'ctx',
            SPACE,
            { upserted: await add(1 + Math.floor(random() * 3)), removed: [] },
            exact,
          );
        } else if (roll < 0.75) {
          const id = ids[Math.floor(random() * ids.length)]!;
          const v = vector();
          live.set(id, v);
          await updateDenseKnn(
            store,
            'ctx',
            SPACE,
            { upserted: [{ memoryId: id, vector: v }], removed: [] },
            exact,
          );
        } else {
          const id = ids[Math.floor(random() * ids.length)]!;
          live.delete(id);
          await store.deleteMemory('ctx', id);
          await updateDenseKnn(store, 'ctx', SPACE, { upserted: [], removed: [id] }, exact);
        }
        const expected = bruteLists(live, k);
        const docs = await store.semantic.getDocs('ctx', [...live.keys()]);
        expect(docs.length).toBe(live.size);
        for (const doc of docs)
          expect(doc.neighbours.map((n) => n.memoryId)).toEqual(expected.get(doc.memoryId));
        const mutual: string[] = [];
        for (const [id, list] of expected) {
          for (const other of list)
            if (id < other && expected.get(other)!.includes(id)) mutual.push(`${id}|${other}`);
        }
        const edges = (await store.neighbors('ctx', [...live.keys()]))
          .filter((e) => e.types.includes('semantic_knn'))
          .map((e) => `${e.a}|${e.b}`);
        expect(edges.sort()).toEqual(mutual.sort());
      }
      // Compaction rebuilds the same graph (denseMutualKnn is exact at this size).
      const before = (await store.neighbors('ctx', [...live.keys()])).map((e) => `${e.a}|${e.b}`).sort();
      await compactDense(store, 'ctx', SPACE);
      const after = (await store.neighbors('ctx', [...live.keys()])).map((e) => `${e.a}|${e.b}`).sort();
      expect(after).toEqual(before);
      await store.close();
    }
  });
  it("reverse 'neighbourhood' (default): each newcomer's list is exact, edges are the lists' mutual pairs, and no call reads the whole space", async () => {
    const random = mulberry32(41);
    const k = 4;
    const vector = () => Float32Array.from({ length: 8 }, () => random() * 2 - 1);
    const inner = await open();
    // Counts the calls whose cost grows with the context: reads of every vector or every list bound, and
    // searches asking for more hits than the pool.
    const calls = { wholeSpace: 0, thresholds: 0, largestLimit: 0 };
    const semantic = new Proxy(inner.semantic, {
      get(target, name, receiver) {
        if (name === 'thresholds') calls.thresholds++;
        const value = Reflect.get(target, name, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const store = new Proxy(inner, {
      get(target, name, receiver) {
        if (name === 'semantic') return semantic;
        if (name === 'getVectors')
          return (contextId: string, space: string, ids?: readonly string[]) => {
            if (ids === undefined) calls.wholeSpace++;
            return target.getVectors(contextId, space, ids);
          };
        if (name === 'searchVectors')
          return (contextId: string, space: string, query: Float32Array, options: { limit: number }) => {
            calls.largestLimit = Math.max(calls.largestLimit, options.limit);
            return target.searchVectors(contextId, space, query, options);
          };
        const value = Reflect.get(target, name, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as ArchiveStore;
    const live = new Map<string, Float32Array>();
    let next = 0;
    const add = async (count: number): Promise<DenseRecordVector[]> => {
      const ids = Array.from({ length: count }, () => `n${String(next++).padStart(3, '0')}`);
      await writeBare(inner, ids, next);
      return ids.map((id) => {
        const v = vector();
        live.set(id, v);
        return { memoryId: id, vector: v };
      });
    };
    await updateDenseKnn(store, 'ctx', SPACE, { upserted: await add(120), removed: [] }, { k });
    calls.wholeSpace = 0; // the first call compacts (maintenance reads every vector)
    const lists = async () =>
      new Map(
        (await inner.semantic.getDocs('ctx', [...live.keys()])).map((doc) => [
          doc.memoryId,
          doc.neighbours.map((n) => n.memoryId),
        ]),
      );
    for (let step = 0; step < 30; step++) {
      const roll = random();
      let newcomers: string[] = [];
      if (roll < 0.6) {
        const added = await add(1 + Math.floor(random() * 3));
        newcomers = added.map((u) => u.memoryId);
        await updateDenseKnn(store, 'ctx', SPACE, { upserted: added, removed: [] });
      } else if (roll < 0.8) {
        const ids = [...live.keys()];
        const id = ids[Math.floor(random() * ids.length)]!;
        const v = vector();
        live.set(id, v);
        newcomers = [id];
        await updateDenseKnn(store, 'ctx', SPACE, { upserted: [{ memoryId: id, vector: v }], removed: [] });
      } else {
        const ids = [...live.keys()];
        const id = ids[Math.floor(random() * ids.length)]!;
        live.delete(id);
        await inner.deleteMemory('ctx', id);
        await updateDenseKnn(store, 'ctx', SPACE, { upserted: [], removed: [id] });
      }
      const expected = bruteLists(live, k);
      const stored = await lists();
      expect(stored.size).toBe(live.size);
      for (const id of newcomers) expect(stored.get(id)).toEqual(expected.get(id));
      const mutual: string[] = [];
      for (const [id, list] of stored) {
        for (const other of list)
          if (id < other && stored.get(other)?.includes(id)) mutual.push(`${id}|${other}`);
      }
      const edges = (await inner.neighbors('ctx', [...live.keys()]))
        .filter((e) => e.types.includes('semantic_knn'))
        .map((e) => `${e.a}|${e.b}`);
      expect(edges.sort()).toEqual(mutual.sort());
    }
    expect(calls).toEqual({ wholeSpace: 0, thresholds: 0, largestLimit: 4 * k + k + 1 });
    await inner.close();
  });
});
