import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { boundedKnnLists } from '../../../src/digest/incremental/bounded-knn-lists.ts';
import { exactKnnLists, INDEX_SLICE } from '../../../src/digest/incremental/exact-knn-lists.ts';
import {
  defaultKnnThreads,
  helperBytes,
  KNN_HELPER_MEMORY_BYTES,
  PAUSED_KNN_CHUNK,
  parallelKnnLists,
} from '../../../src/digest/incremental/parallel-knn-lists.ts';
import { mulberry32 } from '../../../src/digest/semantic/seeded-random.ts';
import { type KnnSpace, TfidfSpace } from '../../../src/digest/semantic/tfidf-space.ts';
import type { TopKLists } from '../../../src/digest/semantic/top-k-lists.ts';
import { openGraphmemix } from '../../../src/graphmemix.ts';

/** Chat-like documents over a Zipfian vocabulary of 3,000 words: long lists for common words, ties, empties. */
function zipfSpace(n: number, seed: number): TfidfSpace {
  const random = mulberry32(seed);
  const vocabulary = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}x`);
  const texts = Array.from({ length: n }, (_, d) => {
    if (d % 97 === 0) return '';
    const words = 3 + Math.floor(random() * 14);
    return Array.from({ length: words }, () => vocabulary[Math.floor(3000 * random() ** 2.5)]!).join(' ');
  });
  return new TfidfSpace(texts.map((text, i) => ({ id: `m${String(i).padStart(5, '0')}`, text })));
}

const all = (lists: TopKLists, n: number) => Array.from({ length: n }, (_, i) => lists.neighbours(i));

describe('parallelKnnLists: the all-pairs pass on several threads', () => {
  const space = zipfSpace(1500, 7);

  it('gives the exact lists of one thread, whatever the chunks and threads', async () => {
    const one = all(exactKnnLists(space, 8, { commonDf: 40 }), space.size);
    for (const [threads, chunk] of [
      [3, 37],
      [2, 500],
    ] as const) {
      const result = await parallelKnnLists(
        space,
        8,
        { kind: 'exact', tuning: { commonDf: 40 } },
        { threads, chunk, parallelFrom: 0, waitForHelpers: true },
      );
      expect(result.helperFailure).toBeUndefined();
      expect(result.threads).toBeGreaterThanOrEqual(1);
      expect(all(result.lists, space.size)).toEqual(one);
    }
  });

  it('with a pause, builds its index in slices and searches in 64-document chunks: the same lists', async () => {
    // More documents than one slice of the index build, so the build yields to the pause.
    const big = zipfSpace(INDEX_SLICE + 500, 11);
    const one = all(exactKnnLists(big, 8, { commonDf: 40 }), big.size);
    let pauses = 0;
    const result = await parallelKnnLists(
      big,
      8,
      { kind: 'exact', tuning: { commonDf: 40 } },
      { threads: 1, pause: async () => void pauses++ },
    );
    expect(all(result.lists, big.size)).toEqual(one);
    // Two in the index build (after its first slice of documents, before its last sort), one after it, then
    // one after each of the ceil(n / 64) chunks.
    expect(pauses).toBe(3 + Math.ceil(big.size / PAUSED_KNN_CHUNK));
  });

  it('gives the bounded lists of one thread when posting lists are cut and candidates capped', async () => {
    const tuning = { maxPostingsPerTerm: 16, rescore: 6 };
    const one = all(boundedKnnLists(space, 5, tuning), space.size);
    const result = await parallelKnnLists(
      space,
      5,
      { kind: 'bounded', tuning },
      { threads: 3, chunk: 29, parallelFrom: 0, waitForHelpers: true },
    );
    expect(all(result.lists, space.size)).toEqual(one);
  });

  it('searches with helper threads when the pass is long enough to share', async () => {
    const big = zipfSpace(6000, 11);
    const options = { threads: 2, chunk: 64, parallelFrom: 0, waitForHelpers: true };
    const result = await parallelKnnLists(big, 8, { kind: 'exact' }, options);
    expect(result.threads).toBe(2);
    expect(all(result.lists, big.size)).toEqual(all(exactKnnLists(big, 8), big.size));
  });

  it('cancels a helper that has not started when this thread has searched every chunk, without waiting for it', async () => {
    const small = zipfSpace(200, 3);
    // Two chunks of a few documents: done here long before a thread could load (tens of milliseconds at best).
    const result = await parallelKnnLists(
      small,
      8,
      { kind: 'exact' },
      { threads: 2, chunk: 100, parallelFrom: 0 },
    );
    expect(result.threads).toBe(1);
    expect(result.helperFailure).toBeUndefined();
    expect(all(result.lists, small.size)).toEqual(all(exactKnnLists(small, 8), small.size));
  });

  it('starts no more helpers than the memory bound allows (each holds lists for every document)', async () => {
    const one = helperBytes(space.size, 8, space.df.length);
    const options = { threads: 4, chunk: 37, parallelFrom: 0, waitForHelpers: true };
    const none = await parallelKnnLists(
      space,
      8,
      { kind: 'exact' },
      { ...options, helperMemoryBytes: one - 1 },
    );
    expect(none.threads).toBe(1);
    const two = await parallelKnnLists(
      space,
      8,
      { kind: 'exact' },
      { ...options, helperMemoryBytes: 2 * one },
    );
    expect(two.threads).toBeLessThanOrEqual(3);
    expect(all(two.lists, space.size)).toEqual(all(none.lists, space.size));
    // 1M memories, k = 8: ~114 MB a helper, so one helper under the default bound.
    expect(1 + Math.floor(KNN_HELPER_MEMORY_BYTES / helperBytes(1_000_000, 8, 500_000))).toBe(2);
  });

  it('copies a space whose arrays are not shared, and runs alone below the size threshold', async () => {
    const plain: KnnSpace = {
      size: space.size,
      docStart: Uint32Array.from(space.docStart),
      docTerm: Uint32Array.from(space.docTerm),
      docWeight: Float32Array.from(space.docWeight),
      df: Uint32Array.from(space.df),
    };
    const one = all(exactKnnLists(space, 4), space.size);
    const shared = await parallelKnnLists(
      plain,
      4,
      { kind: 'exact' },
      { threads: 2, chunk: 50, parallelFrom: 0, waitForHelpers: true },
    );
    expect(all(shared.lists, space.size)).toEqual(one);
    const alone = await parallelKnnLists(plain, 4, { kind: 'exact' }, { threads: 4 });
    expect(alone.threads).toBe(1);
    expect(all(alone.lists, space.size)).toEqual(one);
  });

  it('runs the pass again on this thread when a helper fails after claiming documents, and says so', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gm-knn-helper-'));
    // A helper that starts (as knn-worker-main does), claims a chunk and dies: its chunk is lost.
    const claims = join(dir, 'claims-then-breaks.mjs');
    writeFileSync(
      claims,
      [
        "import { parentPort, workerData } from 'node:worker_threads';",
        'Atomics.compareExchange(workerData.control, 1 + workerData.slot, 0, 1);',
        "parentPort.postMessage({ type: 'started' });",
        'Atomics.add(workerData.control, 0, 1);',
        "throw new Error('helper broke');",
      ].join('\n'),
    );
    const expected = all(exactKnnLists(space, 8), space.size);
    const options = { threads: 2, chunk: 10, parallelFrom: 0, waitForHelpers: true };
    const rerun = await parallelKnnLists(
      space,
      8,
      { kind: 'exact' },
      { ...options, helperEntry: pathToFileURL(claims) },
    );
    expect(rerun.helperFailure).toContain('helper broke');
    expect(rerun.threads).toBe(1);
    expect(all(rerun.lists, space.size)).toEqual(expected);
    // One that fails before it starts claimed nothing: reported, and the lists are this thread's, complete.
    const early = join(dir, 'breaks-at-once.mjs');
    writeFileSync(early, "throw new Error('helper could not load');\n");
    const reported = await parallelKnnLists(
      space,
      8,
      { kind: 'exact' },
      { ...options, helperEntry: pathToFileURL(early) },
    );
    expect(reported.helperFailure).toContain('helper could not load');
    expect(all(reported.lists, space.size)).toEqual(expected);
  });

  it('takes its thread count from GRAPHMEMIX_KNN_THREADS and refuses a bad one', () => {
    expect(defaultKnnThreads({ GRAPHMEMIX_KNN_THREADS: '3' })).toBe(3);
    expect(defaultKnnThreads({})).toBeGreaterThanOrEqual(1);
    expect(() => defaultKnnThreads({ GRAPHMEMIX_KNN_THREADS: '0' })).toThrow(/GRAPHMEMIX_KNN_THREADS/);
    expect(() => defaultKnnThreads({ GRAPHMEMIX_KNN_THREADS: 'lots' })).toThrow(/GRAPHMEMIX_KNN_THREADS/);
  });

  it('refuses to open a writable archive with a bad GRAPHMEMIX_KNN_THREADS (not an import half-way)', async () => {
    const before = process.env.GRAPHMEMIX_KNN_THREADS;
    process.env.GRAPHMEMIX_KNN_THREADS = '-2';
    try {
      await expect(openGraphmemix({ db: 'memory:' })).rejects.toMatchObject({
        code: 'INVALID_INPUT',
        message: expect.stringContaining('GRAPHMEMIX_KNN_THREADS'),
      });
    } finally {
      if (before === undefined) delete process.env.GRAPHMEMIX_KNN_THREADS;
      else process.env.GRAPHMEMIX_KNN_THREADS = before;
    }
    const gm = await openGraphmemix({ db: 'memory:' });
    await gm.close();
  });
});
