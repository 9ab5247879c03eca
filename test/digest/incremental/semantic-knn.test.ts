import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compactSemantic } from '../../../src/digest/incremental/compact-semantic.ts';
import { pairScore } from '../../../src/digest/incremental/exact-top-k-search.ts';
import { frozenVector } from '../../../src/digest/incremental/frozen-tfidf.ts';
import { semanticNeedsCompaction } from '../../../src/digest/incremental/semantic-needs-compaction.ts';
import { updateSemanticKnn } from '../../../src/digest/incremental/update-semantic-knn.ts';
import { mulberry32 } from '../../../src/digest/semantic/seeded-random.ts';
import { semanticText } from '../../../src/digest/semantic/semantic-text.ts';
import { sparseMutualKnn } from '../../../src/digest/semantic/sparse-mutual-knn.ts';
import { buildTfidfSpace } from '../../../src/digest/semantic/tfidf-space.ts';
import type { ArchiveStore } from '../../../src/store/archive-store-spec.ts';
import { openStore } from '../../../src/store/open-store.ts';
import type { SemanticDoc, SemanticNeighbour } from '../../../src/store/semantic-index-spec.ts';
import type { MemoryRecord } from '../../../src/types/memory-record.ts';
import type { MemoryEdge, RelationType } from '../../../src/types/relation.ts';
import { put, record, skewedText } from './knn-test-fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'graphmemix-knn-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

const BACKENDS: Array<[string, () => Promise<ArchiveStore>]> = [
  ['memory', () => openStore('memory:')],
  ['sqlite', () => openStore(join(dir, `knn-${files++}.db`))],
];

const WORDS =
  'apple river stone cloud lamp violin garden harbor tiger pencil orange mirror bread salt piano'.split(' ');

const randomText = (random: () => number): string => skewedText(WORDS, random, 0, 9);

/** Sorted "a|b|similarity" of the stored semantic_knn edges. */
async function semanticEdges(store: ArchiveStore, ids: readonly string[]): Promise<string[]> {
  const edges = await store.neighbors('ctx', ids);
  return edges
    .filter((e) => e.types.includes('semantic_knn'))
    .map((e) => `${e.a}|${e.b}|${e.similarity!.toFixed(8)}`)
    .sort();
}

/** Brute-force top-k lists over given vectors (score desc, then id). */
function bruteLists(docs: readonly SemanticDoc[], k: number): Map<string, SemanticNeighbour[]> {
  const out = new Map<string, SemanticNeighbour[]>();
  for (const x of docs) {
    const scored = docs
      .filter((y) => y.memoryId !== x.memoryId)
      .map((y) => ({ memoryId: y.memoryId, score: pairScore(x, y) }))
      .filter((n) => n.score > 0)
      .sort((p, q) => q.score - p.score || (p.memoryId < q.memoryId ? -1 : 1));
    out.set(x.memoryId, scored.slice(0, k));
  }
  return out;
}

function mutualKeys(lists: Map<string, SemanticNeighbour[]>): string[] {
  const keys: string[] = [];
  for (const [id, list] of lists) {
    for (const n of list) {
      if (id < n.memoryId && lists.get(n.memoryId)?.some((m) => m.memoryId === id)) {
        keys.push(`${id}|${n.memoryId}|${n.score.toFixed(8)}`);
      }
    }
  }
  return keys.sort();
}

describe.each(BACKENDS)('incremental semantic kNN (%s store)', (_name, open) => {
  it('compaction equals the full exact rebuild (sparseMutualKnn, no cap) and keeps schema edges', async () => {
    for (let seed = 1; seed <= 12; seed++) {
      const random = mulberry32(seed);
      const k = 1 + (seed % 8);
      const records = Array.from({ length: 5 + Math.floor(random() * 40) }, (_, i) =>
        record(`m${String(Math.floor(random() * 1e6)).padStart(6, '0')}-${i}`, randomText(random), i),
      );
      const store = await open();
      await put(store, records);
      const [a, b] = [records[0]!.id, records[1]!.id];
      await store.changeEdges('ctx', [{ a, b, add: ['same_round'] }]);
      await compactSemantic(store, 'ctx', { k });

      const byId = [...records].sort((x, y) => (x.id < y.id ? -1 : 1));
      const space = buildTfidfSpace(byId);
      const exact = sparseMutualKnn(space, { k, maxPostings: Number.POSITIVE_INFINITY });
      const expected = exact.pairs
        .map((p) => `${space.ids[p.a]}|${space.ids[p.b]}|${p.similarity.toFixed(8)}`)
        .sort();
      expect(
        await semanticEdges(
          store,
          records.map((r) => r.id),
        ),
      ).toEqual(expected);
      const pair = (await store.neighbors('ctx', [a])).find((e) => e.b === b || e.a === b);
      expect(pair?.types).toContain('same_round');
      await store.close();
    }
  });

  it('compaction hands replaceEdges its semantic_knn edges in strictly increasing (a, b) order', async () => {
    // The order a store needs to stream them (streamEdgeReplacement) instead of diffing every stored edge.
    for (let seed = 1; seed <= 6; seed++) {
      const random = mulberry32(seed);
      const records = Array.from({ length: 20 + Math.floor(random() * 40) }, (_, i) =>
        record(`m${String(Math.floor(random() * 1e6)).padStart(6, '0')}-${i}`, randomText(random), i),
      );
      const store = await open();
      await put(store, records);
      const written: Array<readonly MemoryEdge[]> = [];
      const spy = new Proxy(store, {
        get(target, name, receiver) {
          if (name !== 'replaceEdges') return Reflect.get(target, name, receiver);
          return (contextId: string, types: readonly RelationType[], edges: readonly MemoryEdge[]) => {
            written.push(edges);
            return target.replaceEdges(contextId, types, edges);
          };
        },
      });
      await compactSemantic(spy, 'ctx', { k: 1 + (seed % 4) });
      expect(written).toHaveLength(1);
      const edges = written[0]!;
      expect(edges.length).toBeGreaterThan(1);
      for (let at = 1; at < edges.length; at++) {
        const [p, q] = [edges[at - 1]!, edges[at]!];
        expect(p.a < q.a || (p.a === q.a && p.b < q.b)).toBe(true);
      }
      await store.close();
    }
  });

  it('compaction from handed-over documents (id, semantic text) equals compaction from the records', async () => {
    for (let seed = 1; seed <= 6; seed++) {
      const random = mulberry32(seed);
      const records = Array.from({ length: 5 + Math.floor(random() * 40) }, (_, i) =>
        record(`m${String(Math.floor(random() * 1e6)).padStart(6, '0')}-${i}`, randomText(random), i),
      );
      const [fromRecords, fromDocuments] = [await open(), await open()];
      await put(fromRecords, records);
      await put(fromDocuments, records);
      await compactSemantic(fromRecords, 'ctx', { k: 3 });
      // In (sequence) order, not id order: compaction sorts what it is handed.
      const documents = records.map((r) => ({ id: r.id, text: semanticText(r) }));
      await compactSemantic(fromDocuments, 'ctx', { k: 3, documents: () => documents });
      const ids = records.map((r) => r.id);
      expect(await semanticEdges(fromDocuments, ids)).toEqual(await semanticEdges(fromRecords, ids));
      expect(await fromDocuments.semantic.getDocs('ctx', ids)).toEqual(
        await fromRecords.semantic.getDocs('ctx', ids),
      );
      await fromRecords.close();
      await fromDocuments.close();
    }
  });

  it('incremental adds, updates and deletes equal an exact kNN under the same frozen snapshot', async () => {
    for (let seed = 100; seed < 108; seed++) {
      const random = mulberry32(seed);
      const k = 1 + (seed % 5);
      const store = await open();
      let next = 0;
      const live = new Map<string, MemoryRecord>();
      const initial = Array.from({ length: 4 + Math.floor(random() * 20) }, () => {
        const r = record(`r${String(next++).padStart(3, '0')}`, randomText(random), next);
        live.set(r.id, r);
        return r;
      });
      await put(store, initial);
      await compactSemantic(store, 'ctx', { k });
      const snapshotDocs = await store.semantic.getDocs('ctx', [...live.keys()]);
      const compacted = new Map(snapshotDocs.map((d) => [d.memoryId, d]));
      const space = buildTfidfSpace([...initial].sort((x, y) => (x.id < y.id ? -1 : 1)));
      const df = new Map([...space.vocabulary].map(([term, id]) => [term, space.df[id]!]));
      const changed = new Set<string>();

      for (let step = 0; step < 12; step++) {
        const upserted: Array<{ before?: MemoryRecord; after: MemoryRecord }> = [];
        const removed: MemoryRecord[] = [];
        const ops = 1 + Math.floor(random() * 3);
        for (let op = 0; op < ops; op++) {
          const roll = random();
          const ids = [...live.keys()];
          if (roll < 0.5 || ids.length < 3) {
            const r = record(`r${String(next++).padStart(3, '0')}`, randomText(random), next);
            upserted.push({ after: r });
            live.set(r.id, r);
          } else if (roll < 0.75) {
            const id = ids[Math.floor(random() * ids.length)]!;
            const before = live.get(id)!;
            const after = { ...before, text: random() < 0.2 ? before.text : randomText(random) };
            upserted.push({ before, after });
            live.set(id, after);
          } else {
            const id = ids[Math.floor(random() * ids.length)]!;
            if (upserted.some((u) => u.after.id === id)) continue;
            removed.push(live.get(id)!);
            live.delete(id);
          }
        }
        for (const r of removed) await store.deleteMemory('ctx', r.id);
        await put(
          store,
          upserted.map((u) => u.after),
        );
        await updateSemanticKnn(store, 'ctx', { upserted, removed }, { reverse: 'exact' });
        // After an upsert the stored vector is frozenVector(current text) (or equal to it in value).
        for (const u of upserted) changed.add(u.after.id);

        // Expected vectors: compaction's for untouched memories, frozenVector for new/changed ones.
        const stored = await store.semantic.getDocs('ctx', [...live.keys()]);
        expect(stored.map((d) => d.memoryId)).toEqual([...live.keys()]);
        for (const doc of stored) {
          const want = changed.has(doc.memoryId)
            ? frozenVector(doc.memoryId, semanticText(live.get(doc.memoryId)!), space.size, df)
            : compacted.get(doc.memoryId)!;
          expect(doc.terms).toEqual(want.terms);
          expect(doc.weights).toEqual(want.weights);
        }
        const lists = bruteLists(stored, k);
        for (const doc of stored) expect(doc.neighbours).toEqual(lists.get(doc.memoryId));
        expect(await semanticEdges(store, [...live.keys()])).toEqual(mutualKeys(lists));
      }
      expect((await store.integrityCheck()).ok).toBe(true);
      await store.close();
    }
  });

  it('neighbourhood reverse search: a newcomer gets its exact list and every mutual edge it belongs to', async () => {
    for (let seed = 200; seed < 204; seed++) {
      const random = mulberry32(seed);
      const k = 2 + (seed % 3);
      const store = await open();
      const live: MemoryRecord[] = Array.from({ length: 60 }, (_, i) =>
        record(`r${String(i).padStart(3, '0')}`, randomText(random), i),
      );
      await put(store, live);
      await compactSemantic(store, 'ctx', { k });
      for (let step = 0; step < 25; step++) {
        const r = record(`r${String(live.length).padStart(3, '0')}`, randomText(random), live.length);
        live.push(r);
        await put(store, [r]);
        await updateSemanticKnn(
          store,
          'ctx',
          { upserted: [{ after: r }], removed: [] },
          { compactBulk: false },
        );
        const stored = await store.semantic.getDocs(
          'ctx',
          live.map((m) => m.id),
        );
        const byId = new Map(stored.map((d) => [d.memoryId, d]));
        const brute = bruteLists(stored, k);
        // Its own list is exact; every stored entry carries the pair's true score.
        expect(byId.get(r.id)!.neighbours).toEqual(brute.get(r.id));
        for (const doc of stored) {
          expect(doc.neighbours.length).toBeLessThanOrEqual(k);
          for (const n of doc.neighbours) expect(n.score).toBe(pairScore(doc, byId.get(n.memoryId)!));
        }
        // Every exact mutual pair of the newcomer is a stored edge (its partners are in its own top-k).
        const edges = await semanticEdges(store, [r.id]);
        const mine = mutualKeys(brute).filter((key) => key.split('|').slice(0, 2).includes(r.id));
        for (const key of mine) expect(edges).toContain(key);
      }
      expect((await store.integrityCheck()).ok).toBe(true);
      await store.close();
    }
  });

  it('a batch of newcomers (one chunk): each list is exact over the stored memories and the batch', async () => {
    for (let seed = 300; seed < 303; seed++) {
      const random = mulberry32(seed);
      const k = 2 + (seed % 3);
      const store = await open();
      const live: MemoryRecord[] = Array.from({ length: 60 }, (_, i) =>
        record(`r${String(i).padStart(3, '0')}`, randomText(random), i),
      );
      await put(store, live);
      await compactSemantic(store, 'ctx', { k });
      // Newcomers share words with each other, so some of their nearest are in the same batch.
      const batch = Array.from({ length: 12 }, (_, i) =>
        record(`n${String(i).padStart(3, '0')}`, `${randomText(random)} lantern harbour`, 100 + i),
      );
      live.push(...batch);
      await put(store, batch);
      const result = await updateSemanticKnn(
        store,
        'ctx',
        { upserted: batch.map((after) => ({ after })), removed: [] },
        { compactBulk: false },
      );
      expect(result.mode).toBe('incremental');
      expect(result.added).toBe(batch.length);
      const stored = await store.semantic.getDocs(
        'ctx',
        live.map((m) => m.id),
      );
      const byId = new Map(stored.map((d) => [d.memoryId, d]));
      const brute = bruteLists(stored, k);
      const batchIds = batch.map((r) => r.id);
      for (const id of batchIds) expect(byId.get(id)!.neighbours).toEqual(brute.get(id));
      for (const doc of stored) {
        for (const n of doc.neighbours) expect(n.score).toBe(pairScore(doc, byId.get(n.memoryId)!));
      }
      const edges = await semanticEdges(store, batchIds);
      const mine = mutualKeys(brute).filter((key) =>
        key
          .split('|')
          .slice(0, 2)
          .some((id) => batchIds.includes(id)),
      );
      expect(
        mine.some((key) =>
          key
            .split('|')
            .slice(0, 2)
            .every((id) => batchIds.includes(id)),
        ),
      ).toBe(true);
      for (const key of mine) expect(edges).toContain(key);
      expect((await store.integrityCheck()).ok).toBe(true);
      await store.close();
    }
  });

  it('recovers from an update interrupted after a removal: stale list entries are refilled', async () => {
    const store = await open();
    const random = mulberry32(7);
    const records = Array.from({ length: 30 }, (_, i) => record(`m${i}`, randomText(random), i));
    await put(store, records);
    await compactSemantic(store, 'ctx', { k: 3 });
    let at = 0;
    while ((await store.semantic.referrers('ctx', [records[at]!.id])).length === 0) at++;
    const target = records[at]!;
    const [victim] = await store.semantic.getDocs('ctx', [target.id]);
    await store.semantic.writeDocs('ctx', { remove: [target.id] }); // the crash: removed, lists not refilled
    const after = { ...target, text: `${victim!.terms.join(' ')} piano piano` };
    await put(store, [after]);
    await updateSemanticKnn(store, 'ctx', { upserted: [{ before: target, after }], removed: [] });
    const stored = await store.semantic.getDocs(
      'ctx',
      records.map((r) => r.id),
    );
    const lists = bruteLists(stored, 3);
    for (const doc of stored) expect(doc.neighbours).toEqual(lists.get(doc.memoryId));
    await store.close();
  });

  it('the first update of a context without a snapshot compacts it; the rule reports drift', async () => {
    const store = await open();
    const records = Array.from({ length: 10 }, (_, i) => record(`m${i}`, `apple river ${WORDS[i]}`, i));
    await put(store, records);
    expect((await semanticNeedsCompaction(store, 'ctx')).reason).toBe('no-snapshot');
    const first = await updateSemanticKnn(store, 'ctx', {
      upserted: records.map((after) => ({ after })),
      removed: [],
    });
    expect(first.mode).toBe('compacted');
    expect(await semanticNeedsCompaction(store, 'ctx')).toMatchObject({
      needed: false,
      changes: 0,
      limit: 16,
    });
    const more = Array.from({ length: 16 }, (_, i) =>
      record(`n${i}`, `river ${WORDS[i % WORDS.length]}`, 10 + i),
    );
    await put(store, more);
    const second = await updateSemanticKnn(store, 'ctx', {
      upserted: more.slice(0, 15).map((after) => ({ after })),
      removed: [],
    });
    expect(second).toMatchObject({ mode: 'incremental', added: 15, needsCompaction: false });
    const third = await updateSemanticKnn(store, 'ctx', { upserted: [{ after: more[15]! }], removed: [] });
    expect(third).toMatchObject({ mode: 'incremental', added: 1, needsCompaction: true });
    const again = await updateSemanticKnn(store, 'ctx', { upserted: [{ after: more[0]! }], removed: [] });
    expect(again).toMatchObject({ unchanged: 1, added: 0, edgeChanges: 0 });
    // A bulk delta that alone reaches the limit compacts instead (fresh IDF, one rebuild).
    const bulk = Array.from({ length: 20 }, (_, i) =>
      record(`b${i}`, `stone ${WORDS[i % WORDS.length]}`, 40 + i),
    );
    await put(store, bulk);
    const fourth = await updateSemanticKnn(store, 'ctx', {
      upserted: bulk.map((after) => ({ after })),
      removed: [],
    });
    expect(fourth.mode).toBe('compacted');
    expect((await store.semantic.getSnapshot('ctx'))?.documents).toBe(46);
    await expect(
      updateSemanticKnn(store, 'ctx', {
        upserted: [{ after: { ...more[0]!, contextId: 'x' } }],
        removed: [],
      }),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await store.close();
  });
});
