import type { MemoryFilter } from './archive-store-spec.ts';
import { eventTimeKey } from './event-time-key.ts';
import { filterTags, type ScopeTag, upperBound } from './memory-scope-tags.ts';
import { workWithin } from './work-bound.ts';

/**
 * A filtered read's access paths are counted up to this many memories; one held by fewer drives the read.
 * Counting reads at most this many index entries per path, the price a page pays to pick its plan.
 */
export const FILTER_DRIVEN_BELOW = 4096;

/**
 * The most units of work one filtered page does: index rows of its driving walk (a tag's rows or the memories
 * in (sequence, id) order, each examined whether or not it passes), seeks of a tag intersection, or rows of a
 * time window read and sorted. A page that runs out before it is full returns what it found and where it
 * stopped (FilteredPage.stoppedAfter), so a client's filter costs at most this per request at any archive
 * size (tags that interleave finely, a window far from a tag's memories, a window-only filter late in the
 * order all walked the context: 331 ms a page at 200k memories for an empty interleaved intersection). Set
 * at 16,384: such a page takes ~28-46 ms on SQLite and ~0.12-0.18 s on PostgreSQL (bench/filter-pages-probe.ts
 * at 200k, docs/living-archive.md "Round 16").
 */
export const FILTER_PAGE_WORK = 16_384;

/**
 * A time window holding fewer memories than this is read and sorted rather than walking a tag held by
 * FILTER_DRIVEN_BELOW or more: the tag's walk has no bound when the window sits late in its order ("an agent's
 * memories of the last five days" walked the agent's whole history: 174 ms at 200k memories, where reading the
 * 5,000 memories of those days and sorting them takes 4-6 ms). The window is counted up to this many (index
 * entries only). A larger window leaves the tag's walk (or, with no tag, the order's), cut by FILTER_PAGE_WORK:
 * the same bound, so a window-driven page never reads more than a walking one may.
 */
export const WINDOW_SORTED_BELOW = FILTER_PAGE_WORK;

/**
 * What a filtered page (ArchiveStore.listFiltered, matchFiltered) walks, on every backend that
 * plans its own SQL:
 * - `tag`: one scope tag's index rows, which are kept in (sequence, id) order (SQLite migration 13,
 *   PostgreSQL 11), so a page reads its LIMIT rows from the keyset position on, wherever in the context the
 *   tag's memories sit; the filter's other conditions are checked on those rows; two or more tags are
 *   intersected by seeks in that order (a seek per run boundary, or per row of the smaller tag when they
 *   interleave finely);
 * - `window`: the event-time range (memories_by_time) sorted into (sequence, id) order: fewer than
 *   WINDOW_SORTED_BELOW rows;
 * - `order`: the memories in (sequence, id) order (a filter with no tag and no small window).
 * Every walk but the window's stops after FILTER_PAGE_WORK rows or seeks (FilteredPage.stoppedAfter).
 * Before tags carried their sequence, a tag held by many memories that all sit late in the order made the
 * first page walk the context up to them (a new agent's first memories after a year of another's).
 */
export type FilterDriver = { kind: 'order' } | { kind: 'window' } | { kind: 'tag'; tag: ScopeTag };

/**
 * The filter's tags, and whether picking its driver reads counts: only a filter with a window does (both
 * backends intersect two or more tags by their ordered rows, so there is no tag to pick among them).
 */
export function driverInput(filter: MemoryFilter): { tags: ScopeTag[]; needsCounts: boolean } {
  return { tags: filterTags(filter), needsCounts: filter.from !== undefined || filter.to !== undefined };
}

/**
 * The driver of a filter with these tags and (when `counts.window` is given) time bounds. Tag counts go up to
 * FILTER_DRIVEN_BELOW and may stop at one more than the window's (which already says the window is smaller),
 * the window's up to WINDOW_SORTED_BELOW; a count at its bound means "at least". They are omitted when
 * driverInput says none are needed. A tag below FILTER_DRIVEN_BELOW drives unless the window is smaller still
 * (the tag on a tie: its rows need no sort); when every tag (or no tag) is at the bound, a window below
 * WINDOW_SORTED_BELOW drives, else the first tag (or the order). A page's `work` below WINDOW_SORTED_BELOW
 * lowers that bound to it. What no single index answers (a tag and a
 * window both that large whose common memories sit late in the tag's order, tags that intersect sparsely) is
 * walked in page order under FILTER_PAGE_WORK.
 */
export function filterDriver(
  tags: readonly ScopeTag[],
  counts?: { tags: readonly number[]; window?: number },
  work = FILTER_PAGE_WORK,
): FilterDriver {
  // A sorted window is read whole: never more rows than the page may work on.
  const sortBelow = Math.min(WINDOW_SORTED_BELOW, work);
  const window = counts?.window;
  if (tags.length === 0)
    return window !== undefined && window < sortBelow ? { kind: 'window' } : { kind: 'order' };
  if (counts === undefined) return { kind: 'tag', tag: tags[0]! };
  let best = 0;
  for (let i = 1; i < tags.length; i++) if (counts.tags[i]! < counts.tags[best]!) best = i;
  const tagCount = counts.tags[best]!;
  if (window !== undefined && window < sortBelow && (tagCount >= FILTER_DRIVEN_BELOW || window < tagCount)) {
    return { kind: 'window' };
  }
  return { kind: 'tag', tag: tags[best]! };
}

/**
 * A filtered page's bounds: `limit` (Infinity when absent or negative) and `work` clamped to
 * 1..FILTER_PAGE_WORK (FILTER_PAGE_WORK when absent).
 */
export function pageBounds(page: { limit?: number | undefined; work?: number | undefined }): {
  limit: number;
  work: number;
} {
  const limit = page.limit === undefined || page.limit < 0 ? Number.POSITIVE_INFINITY : page.limit;
  return { limit, work: workWithin(page.work, FILTER_PAGE_WORK) };
}

/**
 * A filter compiled to SQL over `memories m` by a backend: what it reads, its conditions (parameters in
 * `params`) and the (sequence, id) columns of the walked rows, which the ORDER BY and the keyset compare.
 */
export interface FilterSql {
  from: string;
  where: string;
  params: unknown[];
  sequence: string;
  id: string;
  /** Two or more tags and no small window: the page is their rows intersected in order. */
  intersect?: readonly ScopeTag[];
}

/** The filter's event-time bounds as (operator, value); a date-only `to` covers its whole day (upperBound). */
export function windowBounds(filter: MemoryFilter): { op: '>=' | '<='; value: string }[] {
  const bounds: { op: '>=' | '<='; value: string }[] = [];
  if (filter.from !== undefined) bounds.push({ op: '>=', value: eventTimeKey(filter.from) });
  if (filter.to !== undefined) bounds.push({ op: '<=', value: upperBound(filter.to) });
  return bounds;
}
