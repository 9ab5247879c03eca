import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readApproximateMark } from '../../../src/digest/incremental/approximate-knn-mark.ts';
import { mulberry32 } from '../../../src/digest/semantic/seeded-random.ts';
import { sparseMutualKnn } from '../../../src/digest/semantic/sparse-mutual-knn.ts';
import { buildTfidfSpace } from '../../../src/digest/semantic/tfidf-space.ts';
import {
  compactRelations,
  FULL_REBUILD_RULE,
  updateRelations,
} from '../../../src/digest/update-relations.ts';
import { statsOf } from '../../../src/graphmemix-memory-verbs.ts';
import type { ArchiveStore } from '../../../src/store/archive-store-spec.ts';
import { openStore } from '../../../src/store/open-store.ts';
import type { MemoryRecord } from '../../../src/types/memory-record.ts';

const dir = mkdtempSync(join(tmpdir(), 'graphmemix-approx-knn-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

const BACKENDS: Array<[string, () => Promise<ArchiveStore>]> = [
  ['memory', () => openStore('memory:')],
  ['sqlite', () => openStore(join(dir, `approx-${files++}.db`))],
];

const WORDS = 'apple river stone cloud lamp violin garden harbor tiger pencil orange mirror'.split(' ');

function records(from: number, count: number, seed: number): MemoryRecord[] {
  const random = mulberry32(seed);
  return Array.from({ length: count }, (_, at) => {
    const i = from + at;
    const words = Array.from({ length: 2 + Math.floor(random() * 5) }, () =>
      random() < 0.5 ? WORDS[Math.floor(random() ** 2 * WORDS.length)]! : `w${Math.floor(random() * 400)}`,
    );
    return {
      id: `m${String(i).padStart(5, '0')}`,
      contextId: 'ctx',
      kind: 'message',
      sequence: i,
      text: words.join(' '),
      assets: [],
    };
  });
}

async function put(store: ArchiveStore, batch: readonly MemoryRecord[]): Promise<void> {
  await store.writeMemories(
    'ctx',
    batch.map((r) => ({ record: r, views: [], contentHash: `${r.id}:${r.text}` })),
  );
}

/** The exact rebuild's semantic_knn pairs over `all` (TfidfSpace in id order, no cap). */
function exactPairs(all: readonly MemoryRecord[]): string[] {
  const space = buildTfidfSpace([...all].sort((x, y) => (x.id < y.id ? -1 : 1)));
  return sparseMutualKnn(space, { k: 8, maxPostings: Number.POSITIVE_INFINITY })
    .pairs.map((p) => `${space.ids[p.a]}|${space.ids[p.b]}|${p.similarity.toFixed(8)}`)
    .sort();
}

async function storedPairs(store: ArchiveStore, all: readonly MemoryRecord[]): Promise<string[]> {
  const edges = await store.neighbors(
    'ctx',
    all.map((r) => r.id),
  );
  return [
    ...new Set(
      edges
        .filter((e) => e.types.includes('semantic_knn'))
        .map((e) => `${e.a}|${e.b}|${e.similarity!.toFixed(8)}`),
    ),
  ].sort();
}

describe.each(BACKENDS)('bounded bulk kNN above the size threshold (%s store)', (_name, open) => {
  it('marks a large bulk import approximate, defers its drift compaction, and compact makes it exact', async () => {
    const store = await open();
    const bulk = records(0, 2100, 1);
    await put(store, bulk);
    // A forced small threshold: this 2,100-memory import counts as a large context.
    const options = { approximateFrom: 1000 };
    const imported = await updateRelations(store, 'ctx', options);
    expect(imported.mode).toBe('rebuild');
    const mark = await readApproximateMark(store, 'ctx');
    expect(mark).toMatchObject({ reason: 'bulk-import', documents: 2100 });
    expect(mark?.since).toBe((await store.semantic.getSnapshot('ctx'))?.createdAt);
    expect(imported.warnings.some((w) => w.includes('approximate since'))).toBe(true);
    expect((await statsOf(store, 'ctx'))?.knnApproximate).toEqual(mark);

    // Growth past the 5% rule (limit 105) in two writes: the second would compact; it is deferred.
    const first = records(2100, 60, 2);
    await put(store, first);
    expect((await updateRelations(store, 'ctx', options)).warnings).toEqual([]);
    const second = records(2160, 60, 3);
    await put(store, second);
    const deferred = await updateRelations(store, 'ctx', options);
    expect(deferred.mode).toBe('incremental');
    expect(deferred.warnings.some((w) => w.includes('compaction deferred'))).toBe(true);
    const snapshot = await store.semantic.getSnapshot('ctx');
    expect(snapshot?.documents).toBe(2100);
    expect(snapshot?.changes).toBe(120);
    expect(await readApproximateMark(store, 'ctx')).toMatchObject({
      reason: 'compaction-deferred',
      since: snapshot?.createdAt,
    });
    // Marked once per snapshot: the next write does not repeat the warning.
    const third = records(2220, 5, 4);
    await put(store, third);
    expect((await updateRelations(store, 'ctx', options)).warnings).toEqual([]);

    // Explicit maintenance: the exact rebuild, mark cleared.
    await compactRelations(store, 'ctx');
    const all = [...bulk, ...first, ...second, ...third];
    expect(await storedPairs(store, all)).toEqual(exactPairs(all));
    expect(await readApproximateMark(store, 'ctx')).toBeUndefined();
    expect((await statsOf(store, 'ctx'))?.knnApproximate).toBeUndefined();
    await store.close();
  });

  it('a new context of FULL_REBUILD_RULE.minPending memories is rebuilt, one fewer goes incremental; both exact', async () => {
    const n = FULL_REBUILD_RULE.minPending;
    expect(n).toBe(1000);
    for (const [count, mode] of [
      [n, 'rebuild'],
      [n - 1, 'incremental'],
    ] as const) {
      const store = await open();
      const bulk = records(0, count, 6);
      await put(store, bulk);
      expect((await updateRelations(store, 'ctx')).mode).toBe(mode);
      expect(await storedPairs(store, bulk)).toEqual(exactPairs(bulk));
      expect((await store.relationWorkStatus('ctx')).pending).toBe(0);
      await store.close();
    }
  });

  it('below the threshold a bulk import is the exact rebuild and unmarked', async () => {
    const store = await open();
    const bulk = records(0, 2100, 5);
    await put(store, bulk);
    expect((await updateRelations(store, 'ctx')).mode).toBe('rebuild');
    expect(await storedPairs(store, bulk)).toEqual(exactPairs(bulk));
    expect(await readApproximateMark(store, 'ctx')).toBeUndefined();
    await store.close();
  });
});
