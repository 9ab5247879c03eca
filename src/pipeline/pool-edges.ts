import type { ArchiveStore } from '../store/archive-store-spec.ts';
import type { MemoryEdge } from '../types/relation.ts';

/**
 * Edge reads of a question after expansion, reusing what expansion already read. Expansion reads every edge
 * touching a seed (`seedEdges`); the pool's inner relations and the packet's version links need edges of
 * other pool members too, but only those the seeds' read did not cover. Reading them again for all 48 pool
 * members was a third of a warm retrieve's SQL time at 10k (each seed has dozens of edges). Results equal
 * a fresh `neighbors` read, in its order (sorted by pair).
 */
export interface SeedEdges {
  /** Every edge touching one of `seedIds` (as `neighbors` returns them; with a filter, those inside it). */
  edges: readonly MemoryEdge[];
  seedIds: ReadonlySet<string>;
}

/** Every edge with both ends among `ids`: the seeds' edges plus one read among the other members. */
export async function edgesAmongIds(
  store: ArchiveStore,
  contextId: string,
  ids: readonly string[],
  seeds: SeedEdges,
): Promise<MemoryEdge[]> {
  const inSet = new Set(ids);
  const others = ids.filter((id) => !seeds.seedIds.has(id));
  const known = seeds.edges.filter((edge) => inSet.has(edge.a) && inSet.has(edge.b));
  if (others.length < 2) return sortedUnique(known);
  const otherSet = new Set(others);
  const read = store.edgesAmong
    ? await store.edgesAmong(contextId, others)
    : (await store.neighbors(contextId, others)).filter((e) => otherSet.has(e.a) && otherSet.has(e.b));
  return sortedUnique([...known, ...read]);
}

/** Every edge touching one of `ids`: the seeds' edges for seeds, one `neighbors` read for the rest. */
export async function edgesTouchingIds(
  store: ArchiveStore,
  contextId: string,
  ids: readonly string[],
  seeds: SeedEdges,
): Promise<MemoryEdge[]> {
  const inSet = new Set(ids);
  const others = [...new Set(ids.filter((id) => !seeds.seedIds.has(id)))];
  const known = seeds.edges.filter(
    (edge) =>
      (inSet.has(edge.a) && seeds.seedIds.has(edge.a)) || (inSet.has(edge.b) && seeds.seedIds.has(edge.b)),
  );
  if (others.length === 0) return sortedUnique(known);
  return sortedUnique([...known, ...(await store.neighbors(contextId, others))]);
}

function sortedUnique(edges: readonly MemoryEdge[]): MemoryEdge[] {
  const byPair = new Map<string, MemoryEdge>();
  for (const edge of edges) byPair.set(`${edge.a}\u0000${edge.b}`, edge);
  return [...byPair.keys()].sort().map((key) => byPair.get(key)!);
}
