import type { ArchiveStore } from '../store/archive-store-spec.ts';

/** Contexts remembered per store handle: one answer each, all dropped past this many. */
const MAX_CONTEXTS = 4096;

const known = new WeakMap<ArchiveStore, Map<string, { generation: string; answer: boolean }>>();

/**
 * Whether the context may hold a `supersedes` edge. The packet's version links read every edge of the
 * non-seed evidence only to keep the supersedes ones, and most contexts have none: the edge counts (kept by
 * the store on every edge write) say so in one small read, remembered with the context's
 * `store.readGeneration(contextId)` (any write of it by this handle or commit by another moves it). Exact:
 * false only when the count is 0 in the current generation; a backend without a generation (or a read
 * inside a transaction) always gets true, i.e. the full read as before, so no round trip is added there.
 */
export async function mayHaveSupersedes(store: ArchiveStore, contextId: string): Promise<boolean> {
  const generation = store.readGeneration?.(contextId);
  if (generation === undefined) return true;
  let byContext = known.get(store);
  if (!byContext || byContext.size >= MAX_CONTEXTS) {
    byContext = new Map();
    known.set(store, byContext);
  }
  const cached = byContext.get(contextId);
  if (cached?.generation === generation) return cached.answer;
  const counts = await store.countEdges(contextId);
  const answer = counts.supersedes !== 0;
  // A write during the read (SQLite, outside a transaction) moved the generation: the next call reads again.
  byContext.set(contextId, { generation, answer });
  return answer;
}
