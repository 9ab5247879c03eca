import type { ArchiveStore, MemoryFilter } from '../store/archive-store-spec.ts';
import type { ViewHit } from '../types/view.ts';

/**
 * How a filtered search restricts the lexical and vector searches BEFORE ranking (never a post-filter of a
 * fixed top-k), with no cost proportional to the archive:
 * - selective filter (at most SELECTIVE_FILTER_LIMIT matching memories, found through the store's indexed
 *   scope tags and event-time index within CANDIDATE_READ_PAGES filtered pages): the searches score exactly those memories (`memoryIds`), with the
 *   context's statistics, so the pool fills from matching memories only;
 * - broad filter (more matches, or more work than those pages to find them all): the unrestricted indexed search is read ever deeper (limit x4 per round, up
 *   to MAX_FILTER_DEPTH hits per kind) and each round's hits are checked against the filter by id
 *   (`matchMemories` with ids, cost per hit), until every view kind has `limit` matching hits or is drained.
 *   When a broad filter matches, on average, at least one in MAX_FILTER_DEPTH / limit memories, this is
 *   the same top list as a restricted search.
 */
export const SELECTIVE_FILTER_LIMIT = 4096;
/**
 * Filtered pages (each at most FILTER_PAGE_WORK rows or seeks) the candidate read may take before a filter
 * whose matches it could not all find is searched as broad: a filter no index answers (tags that interleave
 * finely) is enumerated up to 16 x 16,384 units (13 such pages took 0.32-0.48 s on SQLite and 1.4-2.3 s on
 * PostgreSQL at 200k memories, bench/filter-pages-probe.ts), since a broad search that finds no match goes to
 * MAX_FILTER_DEPTH (10.9 s at 200k on SQLite for that empty interleaved filter when the first stop went broad).
 */
export const CANDIDATE_READ_PAGES = 16;
export const MAX_FILTER_DEPTH = 65_536;

export type Restriction =
  | { kind: 'none' }
  | { kind: 'ids'; ids: string[] }
  | { kind: 'broad'; filter: MemoryFilter };

export async function restrictionOf(
  store: ArchiveStore,
  contextId: string,
  filter: MemoryFilter | undefined,
): Promise<Restriction> {
  if (filter === undefined || isEmptyFilter(filter)) return { kind: 'none' };
  const ids: string[] = [];
  let after: { afterSequence: number; afterId: string } | undefined;
  for (let page = 0; page < CANDIDATE_READ_PAGES; page++) {
    const read = await store.matchFiltered(contextId, filter, {
      limit: SELECTIVE_FILTER_LIMIT + 1 - ids.length,
      ...after,
    });
    ids.push(...read.items);
    if (ids.length > SELECTIVE_FILTER_LIMIT) break;
    if (read.stoppedAfter === undefined) return { kind: 'ids', ids };
    after = { afterSequence: read.stoppedAfter.sequence, afterId: read.stoppedAfter.id };
  }
  return { kind: 'broad', filter };
}

export function isEmptyFilter(filter: MemoryFilter): boolean {
  return (
    filter.agentId === undefined &&
    filter.runId === undefined &&
    filter.from === undefined &&
    filter.to === undefined &&
    Object.keys(filter.metadata ?? {}).length === 0
  );
}

/**
 * Runs `search` (lexical or vector, `limit` hits per view kind) under a restriction and returns only hits
 * of memories the restriction allows.
 */
export async function restrictedSearch(
  store: ArchiveStore,
  contextId: string,
  restriction: Restriction,
  limit: number,
  search: (options: { limit: number; memoryIds?: readonly string[] }) => Promise<ViewHit[]>,
): Promise<ViewHit[]> {
  if (restriction.kind === 'none') return search({ limit });
  if (restriction.kind === 'ids') return search({ limit, memoryIds: restriction.ids });
  let depth = limit;
  for (;;) {
    const hits = await search({ limit: depth });
    const allowed = new Set(
      await store.matchMemories(contextId, restriction.filter, {
        ids: [...new Set(hits.map((hit) => hit.memoryId))],
      }),
    );
    const returned = new Map<string, number>();
    const kept = new Map<string, number>();
    const out: ViewHit[] = [];
    for (const hit of hits) {
      returned.set(hit.kind, (returned.get(hit.kind) ?? 0) + 1);
      if (!allowed.has(hit.memoryId) || (kept.get(hit.kind) ?? 0) >= limit) continue;
      kept.set(hit.kind, (kept.get(hit.kind) ?? 0) + 1);
      out.push(hit);
    }
    const done = [...returned].every(([kind, n]) => n < depth || (kept.get(kind) ?? 0) >= limit);
    if (done || depth >= MAX_FILTER_DEPTH) return out;
    depth = Math.min(MAX_FILTER_DEPTH, depth * 4);
  }
}
