import { type MemoryEdge, SCHEMA_RELATION_TYPES, type SchemaRelationType } from '../types/relation.ts';
import type { EligibleRelation } from '../verify/edge-verifier-spec.ts';

const SCHEMA_TYPES: ReadonlySet<string> = new Set(SCHEMA_RELATION_TYPES);

/**
 * ECV eligibility (paper eq. 7, method notes 5): pairs (anchor a, candidate i) of the pool joined by a SCHEMA
 * edge; semantic_knn never counts. An anchor can be the candidate of another anchor. Result: candidate id ->
 * its eligible anchor relations, candidates in pool order, anchors in pool order.
 */
export function eligibleRelations(
  poolOrder: readonly string[],
  anchors: readonly string[],
  edges: readonly MemoryEdge[],
): Map<string, EligibleRelation[]> {
  const inPool = new Set(poolOrder);
  const anchorRank = new Map(anchors.map((id, rank) => [id, rank]));
  const byCandidate = new Map<string, EligibleRelation[]>();
  const relate = (anchor: string, candidate: string, types: SchemaRelationType[]): void => {
    if (!anchorRank.has(anchor) || !inPool.has(candidate) || anchor === candidate) return;
    const list = byCandidate.get(candidate);
    if (list === undefined) byCandidate.set(candidate, [{ anchorId: anchor, relationTypes: types }]);
    else if (!list.some((r) => r.anchorId === anchor)) list.push({ anchorId: anchor, relationTypes: types });
  };
  for (const edge of edges) {
    // Most edges touch no anchor: nothing to filter for them.
    if (!anchorRank.has(edge.a) && !anchorRank.has(edge.b)) continue;
    const types = edge.types.filter((t): t is SchemaRelationType => SCHEMA_TYPES.has(t));
    if (types.length === 0) continue;
    relate(edge.a, edge.b, types);
    relate(edge.b, edge.a, types);
  }
  const ordered = new Map<string, EligibleRelation[]>();
  for (const id of poolOrder) {
    const list = byCandidate.get(id);
    if (list)
      ordered.set(
        id,
        list.sort((x, y) => anchorRank.get(x.anchorId)! - anchorRank.get(y.anchorId)!),
      );
  }
  return ordered;
}
