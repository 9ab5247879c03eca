import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compactSemantic } from '../../../src/digest/incremental/compact-semantic.ts';
import { updateSemanticKnn } from '../../../src/digest/incremental/update-semantic-knn.ts';
import { mulberry32 } from '../../../src/digest/semantic/seeded-random.ts';
import type { ArchiveStore } from '../../../src/store/archive-store-spec.ts';
import { openStore } from '../../../src/store/open-store.ts';
import type { MemoryRecord } from '../../../src/types/memory-record.ts';
import { put, record, skewedText } from './knn-test-fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'graphmemix-edge-sync-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

const BACKENDS: Array<[string, () => Promise<ArchiveStore>]> = [
  ['memory', () => openStore('memory:')],
  ['sqlite', () => openStore(join(dir, `sync-${files++}.db`))],
];

const WORDS = 'apple river stone cloud lamp violin garden harbor tiger pencil orange mirror'.split(' ');

const randomText = (random: () => number): string => skewedText(WORDS, random, 1, 7);

/** "a|b|similarity" of every mutual pair of the stored lists (similarity = mean of the two scores). */
async function mutualPairs(store: ArchiveStore, ids: readonly string[]): Promise<string[]> {
  const lists = new Map(
    (await store.semantic.getDocs('ctx', ids)).map((doc) => [doc.memoryId, doc.neighbours]),
  );
  const out: string[] = [];
  for (const [id, list] of lists) {
    for (const n of list) {
      const back = lists.get(n.memoryId)?.find((m) => m.memoryId === id);
      if (id < n.memoryId && back) out.push(`${id}|${n.memoryId}|${((n.score + back.score) / 2).toFixed(8)}`);
    }
  }
  return out.sort();
}

async function storedPairs(store: ArchiveStore, ids: readonly string[]): Promise<string[]> {
  return (await store.neighbors('ctx', ids))
    .filter((edge) => edge.types.includes('semantic_knn'))
    .map((edge) => `${edge.a}|${edge.b}|${edge.similarity!.toFixed(8)}`)
    .sort();
}

/**
 * The edge sync after adds decides a pair with an untouched memory by its stored edge instead of reading
 * that memory's list (syncSemanticEdges' `refilled`): the stored semantic_knn edges must stay exactly the
 * mutual pairs of the stored lists through adds, batches, vector changes and deletes (which refill lists),
 * and an add without removals must not read an untouched memory's list.
 */
describe.each(BACKENDS)('semantic edge sync (%s store)', (_name, open) => {
  it('keeps the stored edges equal to the mutual pairs of the lists, reading only touched lists on adds', async () => {
    for (let seed = 500; seed < 503; seed++) {
      const random = mulberry32(seed);
      const store = await open();
      const live = new Map<string, MemoryRecord>();
      let next = 0;
      const fresh = () => {
        const id = `r${String(next).padStart(3, '0')}`;
        return record(id, randomText(random), next++);
      };
      const first = Array.from({ length: 50 }, fresh);
      await put(store, first);
      for (const r of first) live.set(r.id, r);
      await compactSemantic(store, 'ctx', { k: 3 });
      const getLists = store.semantic.getLists?.bind(store.semantic);
      const getDocs = store.semantic.getDocs.bind(store.semantic);
      const listed: string[] = [];
      if (getLists) {
        store.semantic.getLists = async (contextId, ids) => {
          listed.push(...ids);
          return getLists(contextId, ids);
        };
      }
      for (let step = 0; step < 20; step++) {
        const pick = random();
        const upserted: Array<{ before?: MemoryRecord; after: MemoryRecord }> = [];
        const removed: MemoryRecord[] = [];
        if (pick < 0.5) {
          for (let i = 0; i < 1 + Math.floor(random() * 4); i++) upserted.push({ after: fresh() });
        } else if (pick < 0.75) {
          const before = [...live.values()][Math.floor(random() * live.size)]!;
          upserted.push({ before, after: { ...before, text: randomText(random) } });
        } else {
          const gone = [...live.values()][Math.floor(random() * live.size)]!;
          removed.push(gone);
        }
        await put(
          store,
          upserted.map((u) => u.after),
        );
        for (const gone of removed) await store.deleteMemory('ctx', gone.id);
        for (const { after } of upserted) live.set(after.id, after);
        for (const gone of removed) live.delete(gone.id);
        listed.length = 0;
        await updateSemanticKnn(store, 'ctx', { upserted, removed }, { compactBulk: false });
        const ids = [...live.keys()];
        expect(await storedPairs(store, ids)).toEqual(await mutualPairs(store, ids));
        if (getLists && pick < 0.5) {
          // Only the newcomers and the lists they entered (touched) are read for the sync.
          const newcomers = new Set(upserted.map((u) => u.after.id));
          const entered = new Set<string>();
          for (const doc of await getDocs('ctx', ids)) {
            if (doc.neighbours.some((n) => newcomers.has(n.memoryId))) entered.add(doc.memoryId);
          }
          for (const id of listed) expect(newcomers.has(id) || entered.has(id)).toBe(true);
        }
      }
      expect((await store.integrityCheck()).ok).toBe(true);
      await store.close();
    }
  });
});
