/**
 * First position of `sorted` (ascending by `compare`) whose entry does not sort before `value`: where
 * `value` is inserted to keep the order, or where a range starting at `value` begins. Binary search.
 */
export function lowerBound<T>(sorted: readonly T[], value: T, compare: (a: T, b: T) => number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compare(sorted[mid]!, value) < 0) low = mid + 1;
    else high = mid;
  }
  return low;
}
