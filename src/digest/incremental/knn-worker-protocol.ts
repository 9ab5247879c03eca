import type { TopKListArrays, TopKLists } from '../semantic/top-k-lists.ts';
import { type BoundedKnnIndex, boundedKnnSearcher } from './bounded-knn-lists.ts';
import { type ExactKnnIndex, exactKnnSearcher } from './exact-knn-lists.ts';

/** The search of a pass's index into `lists` (documents [from, to), ranges in ascending order). */
export function knnSearcher(
  index: ExactKnnIndex | BoundedKnnIndex,
  lists: TopKLists,
  /** An exact pass's shared work bound (exactWorkBound), if any. */
  work?: Int32Array,
): (from: number, to: number) => void {
  return index.kind === 'exact' ? exactKnnSearcher(index, lists, work) : boundedKnnSearcher(index, lists);
}

/** Data a helper thread gets: the index (typed arrays on SharedArrayBuffers: shared, not copied). */
export interface KnnWorkerData {
  index: ExactKnnIndex | BoundedKnnIndex;
  k: number;
  chunk: number;
  /** [0]: next chunk to claim; [1 + slot]: the helper's state (HELPER_*). */
  control: Int32Array;
  slot: number;
  /** The exact pass's work bound, shared by every thread (exactWorkBound); absent: unbounded. */
  work?: Int32Array;
}

/** A helper's messages: started (it will claim chunks), then its lists (null when it claimed none) or why it failed. */
export type KnnWorkerReply =
  | { type: 'started' }
  | { type: 'done'; arrays: TopKListArrays | null }
  | { type: 'failed'; error: string };

export const HELPER_WAITING = 0;
export const HELPER_STARTED = 1;
export const HELPER_CANCELLED = 2;
