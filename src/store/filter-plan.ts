import type { MemoryFilter } from './archive-store-spec.ts';
import { type ScopeTag, upperBound } from './memory-scope-tags.ts';

/**
 * A filtered read's access paths are counted up to this many memories; one held by fewer drives the read.
 * Counting reads at most this many index entries per path, the price a page pays to pick its plan.
 */
export const FILTER_DRIVEN_BELOW = 4096;

/**
 * What a filtered page (listMemories with a filter, matchMemories without ids) walks, on every backend that
 * plans its own SQL:
 * - `tag`: one scope tag's index rows, which are kept in (sequence, id) order (SQLite migration 13,
 *   PostgreSQL 11), so a page reads its LIMIT rows from the keyset position on, wherever in the context the
 *   tag's memories sit; the filter's other conditions are checked on those rows;
 * - `window`: the event-time range (memories_by_time) sorted into (sequence, id) order: at most
 *   FILTER_DRIVEN_BELOW rows;
 * - `order`: the memories in (sequence, id) order (a filter with no tag: the backend's own plan).
 * Before tags carried their sequence, a tag held by many memories that all sit late in the order made the
 * first page walk the context up to them (a new agent's first memories after a year of another's).
 */
export type FilterDriver = { kind: 'order' } | { kind: 'window' } | { kind: 'tag'; tag: ScopeTag };

/**
 * True when picking a driver needs counts: a tag and a window, or (for a backend that walks one tag and probes
 * the others) two tags. A backend that intersects the tags' ordered rows (SQLite: sqlite-tag-intersection.ts)
 * has no tag to pick among them.
 */
export function driverNeedsCounts(
  tags: readonly ScopeTag[],
  hasWindow: boolean,
  options: { intersectsTags?: boolean } = {},
): boolean {
  if (tags.length === 0) return false;
  return hasWindow || (options.intersectsTags !== true && tags.length > 1);
}

/**
 * The driver of a filter with these tags and (when `counts.window` is given) time bounds. Counts are the
 * paths' memories up to FILTER_DRIVEN_BELOW (a count at the bound means "at least"); a tag's may stop at one
 * more than the window's, which already says the window is smaller. They may be omitted when
 * driverNeedsCounts is false. The smallest path below the bound drives (a tag over the window on a tie: its
 * rows need no sort); when every path is at the bound, the first tag does: its walk stops at the page's
 * LIMIT, where sorting a large window would read all of it. Paths that intersect sparsely (two common tags,
 * a common tag and a wide window) still walk until the page fills: no single index answers them.
 */
export function filterDriver(
  tags: readonly ScopeTag[],
  counts?: { tags: readonly number[]; window?: number },
): FilterDriver {
  if (tags.length === 0) return { kind: 'order' };
  if (counts === undefined) return { kind: 'tag', tag: tags[0]! };
  let best = 0;
  for (let i = 1; i < tags.length; i++) if (counts.tags[i]! < counts.tags[best]!) best = i;
  const tagCount = counts.tags[best]!;
  if (counts.window !== undefined && counts.window < FILTER_DRIVEN_BELOW && counts.window < tagCount) {
    return { kind: 'window' };
  }
  return { kind: 'tag', tag: tags[best]! };
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
  if (filter.from !== undefined) bounds.push({ op: '>=', value: filter.from });
  if (filter.to !== undefined) bounds.push({ op: '<=', value: upperBound(filter.to) });
  return bounds;
}
