import type { ArchiveStore } from '../store/archive-store-spec.ts';

/** Contexts remembered per store handle and generation: one boolean each, cleared past this many. */
const MAX_CONTEXTS = 4096;

interface Known {
  generation: string;
  byContext: Map<string, boolean>;
}

const known = new WeakMap<ArchiveStore, Known>();

/**
 * Whether the context may hold a `supersedes` edge. The packet's version links read every edge of the
 * non-seed evidence only to keep the supersedes ones, and most contexts have none: the edge counts (kept by
 * the store on every edge write) say so in one small read, remembered while `store.readGeneration()` stays
 * (any write by this handle or commit by another moves it). Exact: false only when the count is 0 in the
 * current generation; a backend without a generation (or a read inside a transaction) always gets true,
 * i.e. the full read as before, so no round trip is added there.
 */
export async function mayHaveSupersedes(store: ArchiveStore, contextId: string): Promise<boolean> {
  const generation = store.readGeneration?.();
  if (generation === undefined) return true;
  let entry = known.get(store);
  if (!entry || entry.generation !== generation || entry.byContext.size >= MAX_CONTEXTS) {
    entry = { generation, byContext: new Map() };
    known.set(store, entry);
  }
  const cached = entry.byContext.get(contextId);
  if (cached !== undefined) return cached;
  const counts = await store.countEdges(contextId);
  const answer = counts.supersedes !== 0;
  // A write during the read moves the generation: the next call reads again.
  entry.byContext.set(contextId, answer);
  return answer;
}
