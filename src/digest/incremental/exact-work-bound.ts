/**
 * A bound on the work of an exact all-pairs kNN pass (exact-knn-lists.ts), shared by every thread of the pass
 * (parallel-knn-lists.ts): four Int32 on a SharedArrayBuffer. Work is candidates visited: postings read and
 * documents scanned. Why: the exact pass is quadratic on text whose memories share only common words
 * (templated or repeated lines: 50k of them 25 s against 1.7 s for the bounded pass), and an automatic
 * rebuild must not stall its writer for minutes (compact-semantic.ts, docs/semantic-knn.md "The exact pass's
 * work bound").
 */

/**
 * An automatic exact pass's work bound, in candidates visited per posting the bounded pass would read in all
 * (boundedKnnReads). Ratios of a whole exact pass's visits to those reads (docs/semantic-knn.md): chat text
 * 0.12 (20k memories), 0.19 (100k), 0.30 (199k, both chat shapes); templated lines 0.62 (20k), 1.5 (50k),
 * 3.0 (100k); repeated lines 2.3 (20k), 6.1 (50k). 4 keeps every exact pass measured on text a person
 * writes, and those a few times dearer than the bounded one, and stops the quadratic ones (with the early
 * projection below, after ~1/16 of their cost).
 */
export const EXACT_VISITS_PER_BOUNDED_READ = 4;

/** Candidates visited between two additions to the shared counters (the spent count is in these units). */
export const WORK_UNIT = 1 << 16;
const SPENT = 0;
const LIMIT = 1;
const PASSED = 2;
const DOCUMENTS = 3;
/**
 * The share of documents after which the pass is also stopped when its visits so far, scaled to every
 * document, pass PROJECTED_SLACK times the limit: a pass far over it (a quadratic one) stops after ~1/16 of
 * its cost instead of at the limit. Why the slack: documents are searched in ascending order and an early one
 * reads more of a term's list (the documents after it) than a late one, up to twice the average, so a
 * projection can be up to twice the whole pass; on repeated lines every document scans the others, evenly.
 */
const PROJECT_AFTER = 1 / 16;
const PROJECTED_SLACK = 2;

/** A bound of `visits` candidates (rounded up to whole WORK_UNITs). */
export function exactWorkBound(visits: number): Int32Array {
  const work = new Int32Array(new SharedArrayBuffer(16));
  work[LIMIT] = Math.min(0x7fffffff, Math.ceil(visits / WORK_UNIT));
  return work;
}

/** True once the searches sharing `work` passed it (their lists are incomplete and must not be used). */
export function workBoundPassed(work: Int32Array): boolean {
  return Atomics.load(work, PASSED) === 1;
}

/** Candidates the searches sharing `work` have reported so far (a multiple of WORK_UNIT). */
export function workSpent(work: Int32Array): number {
  return Atomics.load(work, SPENT) * WORK_UNIT;
}

/**
 * Adds a thread's whole units of `visits` and the `documents` it searched since its last report; returns the
 * visits left unreported. Marks the bound passed when the visits so far exceed the limit, or, once
 * PROJECT_AFTER of the `total` documents are searched, when they would exceed PROJECTED_SLACK times it at
 * this rate.
 */
export function reportWork(work: Int32Array, visits: number, documents: number, total: number): number {
  const units = Math.floor(visits / WORK_UNIT);
  const spent = Atomics.add(work, SPENT, units) + units;
  const searched = Atomics.add(work, DOCUMENTS, documents) + documents;
  const limit = work[LIMIT]!;
  if (
    spent > limit ||
    (searched >= total * PROJECT_AFTER && (spent * total) / searched > PROJECTED_SLACK * limit)
  ) {
    Atomics.store(work, PASSED, 1);
  }
  return visits - units * WORK_UNIT;
}
