import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  describeApproximateMark,
  readApproximateMark,
} from '../../../src/digest/incremental/approximate-knn-mark.ts';
import { boundedKnnLists, boundedKnnReads } from '../../../src/digest/incremental/bounded-knn-lists.ts';
import { compactSemantic } from '../../../src/digest/incremental/compact-semantic.ts';
import {
  type CompactionTurn,
  compactSemanticInSteps,
} from '../../../src/digest/incremental/compact-semantic-steps.ts';
import {
  exactKnnIndex,
  exactKnnLists,
  exactKnnSearcher,
} from '../../../src/digest/incremental/exact-knn-lists.ts';
import {
  exactWorkBound,
  reportWork,
  WORK_UNIT,
  workBoundPassed,
  workSpent,
} from '../../../src/digest/incremental/exact-work-bound.ts';
import { parallelKnnLists } from '../../../src/digest/incremental/parallel-knn-lists.ts';
import {
  newCompactionMark,
  writeCompactionMark,
} from '../../../src/digest/incremental/semantic-compaction-mark.ts';
import { TfidfSpace } from '../../../src/digest/semantic/tfidf-space.ts';
import { TopKLists } from '../../../src/digest/semantic/top-k-lists.ts';
import { updateRelations } from '../../../src/digest/update-relations.ts';
import type { ArchiveStore } from '../../../src/store/archive-store-spec.ts';
import { dropTestDatabases } from '../../store/postgres-test-db.ts';
import { storeBackends } from '../../store/store-backends.ts';
import { put, record } from './knn-test-fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'graphmemix-work-bound-'));
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await dropTestDatabases();
});

/**
 * Templated lines: every memory shares its common words with every other one, the text that makes the exact
 * pass scan the whole context per memory (with commonDf 40 already at this size).
 */
const line = (i: number) => `turn ${i} about lake ${i % 7} and hill ${i % 11}`;
const N = 1200;
const space = new TfidfSpace(
  Array.from({ length: N }, (_, i) => ({ id: `m${String(i).padStart(5, '0')}`, text: line(i) })),
);
const TUNING = { commonDf: 40 };
const all = (lists: TopKLists, n: number) => Array.from({ length: n }, (_, i) => lists.neighbours(i));

describe('the exact pass under a work bound', () => {
  // Twice the store tests' size: ~16 units of visits, so a bound of 2 is passed early.
  const N = 2400;
  const space = new TfidfSpace(
    Array.from({ length: N }, (_, i) => ({ id: `m${String(i).padStart(5, '0')}`, text: line(i) })),
  );
  const exact = all(exactKnnLists(space, 8, TUNING), N);

  it('counts its visits and, under a bound it never reaches, gives the exact lists', () => {
    const work = exactWorkBound(Number.POSITIVE_INFINITY);
    const lists = new TopKLists(N, 8);
    exactKnnSearcher(exactKnnIndex(space, TUNING), lists, work)(0, N);
    expect(workBoundPassed(work)).toBe(false);
    // Every memory scans the others here: enough units for the next test's bound to be passed early.
    expect(workSpent(work)).toBeGreaterThan(8 * WORK_UNIT);
    expect(all(lists, N)).toEqual(exact);
  });

  it('stops at the first memory after the bound is passed, leaving lists incomplete', () => {
    const work = exactWorkBound(2 * WORK_UNIT);
    const lists = new TopKLists(N, 8);
    exactKnnSearcher(exactKnnIndex(space, TUNING), lists, work)(0, N);
    expect(workBoundPassed(work)).toBe(true);
    // Reported in units: it stopped within one memory's visits of the bound, far before the whole pass.
    expect(workSpent(work)).toBeLessThanOrEqual(3 * WORK_UNIT);
    expect(all(lists, N)).not.toEqual(exact);
  });

  it('parallelKnnLists says when its exact pass passed maxVisits, on one thread and on several', async () => {
    for (const threads of [1, 2]) {
      const options = { threads, chunk: 64, parallelFrom: 0, waitForHelpers: true };
      const stopped = await parallelKnnLists(
        space,
        8,
        { kind: 'exact', tuning: TUNING, maxVisits: 1 },
        options,
      );
      expect(stopped.workBoundPassed).toBe(true);
      const whole = await parallelKnnLists(
        space,
        8,
        { kind: 'exact', tuning: TUNING, maxVisits: 1e12 },
        options,
      );
      expect(whole.workBoundPassed).toBeUndefined();
      expect(all(whole.lists, N)).toEqual(exact);
    }
  });

  it('is passed by the visits so far, or after 1/16 of the documents by twice its limit at their rate', () => {
    const work = exactWorkBound(100 * WORK_UNIT);
    // 99 of 1,600 documents (under 1/16) at a rate that would pass it twice: not yet.
    expect(reportWork(work, 13 * WORK_UNIT + 5, 99, 1600)).toBe(5);
    expect(workBoundPassed(work)).toBe(false);
    // The 100th: 13 units over 100 of 1,600 documents projects 208 > 2 x 100.
    reportWork(work, 0, 1, 1600);
    expect(workBoundPassed(work)).toBe(true);
    const early = exactWorkBound(100 * WORK_UNIT);
    reportWork(early, 12 * WORK_UNIT, 100, 1600);
    expect(workBoundPassed(early)).toBe(false); // projects 192: an early document reads more than a late one
    reportWork(early, 89 * WORK_UNIT, 1400, 1600);
    expect(workBoundPassed(early)).toBe(true); // 101 spent
  });

  it('weighs the exact pass against the postings the bounded pass reads: min(df, cut) per entry', () => {
    const tiny = new TfidfSpace([
      { id: 'a', text: 'x y' },
      { id: 'b', text: 'x z' },
      { id: 'c', text: 'x' },
    ]);
    // x is in 3 documents (read 3 times, cut to 2), y and z in one each.
    expect(boundedKnnReads(tiny)).toBe(3 * 3 + 1 + 1);
    expect(boundedKnnReads(tiny, { maxPostingsPerTerm: 2 })).toBe(3 * 2 + 1 + 1);
  });
});

const BACKENDS = storeBackends(dir, 'work-bound');
const records = Array.from({ length: N }, (_, i) => record(`m${String(i).padStart(5, '0')}`, line(i), i));
const direct: CompactionTurn = (work) => work();

/** The stored lists, as "id: neighbour ids". */
async function storedLists(store: ArchiveStore): Promise<string[]> {
  const docs = await store.semantic.getDocs(
    'ctx',
    records.map((r) => r.id),
  );
  return docs.map((doc) => `${doc.memoryId}: ${doc.neighbours.map((n) => n.memoryId).join(' ')}`);
}

/** boundedKnnLists over the records, as storedLists writes them. */
function boundedLists(): string[] {
  const lists = boundedKnnLists(space, 8);
  return space.ids.map(
    (id, d) =>
      `${id}: ${lists
        .neighbours(d)
        .map((n) => space.ids[n.index])
        .join(' ')}`,
  );
}

describe.each(BACKENDS)('automatic rebuilds under the work bound (%s store)', (_name, open) => {
  it('an automatic rebuild whose exact pass passes the bound takes the bounded lists and is marked', async () => {
    const store = await open();
    await put(store, records);
    const result = await compactSemantic(store, 'ctx', { method: 'auto', exactWorkRatio: 0.01 });
    expect(result.approximate).toBe(true);
    const mark = await readApproximateMark(store, 'ctx');
    expect(mark?.reason).toBe('exact-work-bound');
    expect(mark?.documents).toBe(N);
    expect(describeApproximateMark(mark!)).toContain('the exact pass passed its work bound');
    expect(await storedLists(store)).toEqual(boundedLists());
    // Explicit maintenance is exact whatever it costs, and clears the mark.
    const exact = await compactSemantic(store, 'ctx');
    expect(exact.approximate).toBe(false);
    expect(await readApproximateMark(store, 'ctx')).toBeUndefined();
    await store.close();
  });

  it('under the default bound this text stays exact (its pass visits less than the bounded one reads)', async () => {
    const store = await open();
    await put(store, records);
    const result = await compactSemantic(store, 'ctx', { method: 'auto' });
    expect(result.approximate).toBe(false);
    expect(await readApproximateMark(store, 'ctx')).toBeUndefined();
    await store.close();
  });

  it('a bulk import and an automatic compaction in steps report and mark it', async () => {
    const store = await open();
    await put(store, records);
    const report = await updateRelations(store, 'ctx', { exactWorkRatio: 0.01 });
    expect(report.warnings.join('\n')).toContain('the exact pass passed its work bound');
    expect((await readApproximateMark(store, 'ctx'))?.reason).toBe('exact-work-bound');
    // A compaction in steps (the facade's 5% rule) marks what its bounded state starts from.
    await compactSemantic(store, 'ctx');
    expect(await readApproximateMark(store, 'ctx')).toBeUndefined();
    const run = newCompactionMark();
    await writeCompactionMark(store, 'ctx', run);
    const steps = await compactSemanticInSteps(store, 'ctx', run, direct, {
      exactWorkRatio: 0.01,
    });
    expect(steps.outcome).toBe('done');
    const mark = await readApproximateMark(store, 'ctx');
    expect(mark?.reason).toBe('exact-work-bound');
    expect(mark?.since).toBe((await store.semantic.getSnapshot('ctx'))?.createdAt);
    expect(await storedLists(store)).toEqual(boundedLists());
    await store.close();
  });
});
