/**
 * A per-request work bound asked for (tests pass smaller ones): the default when absent or not finite, else
 * floored into 1..bound, so a caller can lower a store's bound but never raise it. Filtered pages
 * (FILTER_PAGE_WORK) and lexical searches (lexical-work-bounds.ts) share it.
 */
export function workWithin(asked: number | undefined, bound: number): number {
  return asked === undefined || !Number.isFinite(asked)
    ? bound
    : Math.max(1, Math.min(bound, Math.floor(asked)));
}
