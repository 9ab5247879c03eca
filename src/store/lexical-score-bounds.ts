import type { LexicalAccumulators } from './lexical-accumulators.ts';

/**
 * The bound tests of a lexical search (search-lexical-index.ts): a document's score ceiling from the lists it
 * was not read from, how many documents may still rank, and the k-th best lower bound.
 */

/** Relative safety margin of every bound test against rounding (scores are sums of a few doubles). */
export const BOUND_MARGIN = 1e-9;

/** What a bound needs of a term's postings cursor: the most it can still add to a document not read from it. */
export interface BoundedList {
  readonly bound: number;
}

/** A list's bit in LexicalAccumulators.mask; lists past 30 get none, so their frontier always counts in a ceiling. */
export function bitOf(index: number): number {
  return index < 30 ? 1 << index : 0;
}

/** Upper bound of a document's final score: what it got, plus the frontier of every list it was not read from. */
export function ceiling(
  accumulators: LexicalAccumulators,
  at: number,
  cursors: readonly BoundedList[],
): number {
  let high = accumulators.high[at]!;
  const mask = accumulators.mask[at]!;
  for (let i = 0; i < cursors.length; i++) if ((mask & bitOf(i)) === 0) high += cursors[i]!.bound;
  return high;
}

/** Whether at most `cap` documents could still rank (stops counting past the cap). */
export function fewCandidates(
  accumulators: LexicalAccumulators,
  cursors: readonly BoundedList[],
  threshold: number,
  cap: number,
): boolean {
  let count = 0;
  for (let at = 0; at < accumulators.size; at++) {
    if (ceiling(accumulators, at, cursors) * (1 + BOUND_MARGIN) >= threshold && ++count > cap) return false;
  }
  return true;
}

/** The k-th largest lower bound (-Infinity with fewer than k accumulators): the final k-th score is above it. */
export function kthLargest(accumulators: LexicalAccumulators, k: number): number {
  if (accumulators.size < k) return Number.NEGATIVE_INFINITY;
  const values = accumulators.low.slice(0, accumulators.size);
  return quickselect(values, values.length - k);
}

/** The value of rank `rank` (0-based, ascending) of `values`, reordering it in place. */
function quickselect(values: Float64Array, rank: number): number {
  let lo = 0;
  let hi = values.length - 1;
  while (lo < hi) {
    const pivot = values[(lo + hi) >> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (values[i]! < pivot) i++;
      while (values[j]! > pivot) j--;
      if (i <= j) {
        const t = values[i]!;
        values[i] = values[j]!;
        values[j] = t;
        i++;
        j--;
      }
    }
    if (rank <= j) hi = j;
    else if (rank >= i) lo = i;
    else break;
  }
  // One exit: a second `return values[rank]` that the optimised code had never run made V8 deoptimise
  // this function again and again (--trace-deopt: "insufficient type feedback", ~20 times in 300 questions).
  return values[rank]!;
}
