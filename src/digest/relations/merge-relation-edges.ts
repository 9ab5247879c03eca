import {
  edgeStrength,
  type MemoryEdge,
  RELATION_TYPES,
  type SchemaRelationType,
} from '../../types/relation.ts';
import { orderedPair, type RecordPair } from './record-pair.ts';

/** One mutual-kNN pair by memory id, with its similarity (mean of the two directed cosines). */
export interface SemanticPair {
  a: string;
  b: string;
  similarity: number;
}

/**
 * Merges the relations into one edge per unordered pair (a < b) carrying all its types (in RELATION_TYPES
 * order). Strength: 0.99 when any schema type holds, else the kNN similarity; `similarity` is set exactly
 * when semantic_knn holds. Edges come out sorted by (a, b), so a rebuild writes the same list.
 */
export function mergeRelationEdges(
  contextId: string,
  schema: Partial<Record<SchemaRelationType, readonly RecordPair[]>>,
  semantic: readonly SemanticPair[],
): MemoryEdge[] {
  // Types as a bit mask (bit = index in RELATION_TYPES): cheap to merge for hundreds of thousands of pairs.
  const byPair = new Map<string, { a: string; b: string; mask: number; similarity?: number }>();
  const entry = (x: string, y: string) => {
    const [a, b] = orderedPair(x, y);
    const key = `${a}\u0000${b}`;
    let found = byPair.get(key);
    if (!found) {
      found = { a, b, mask: 0 };
      byPair.set(key, found);
    }
    return found;
  };
  for (const [type, pairs] of Object.entries(schema) as Array<[SchemaRelationType, readonly RecordPair[]]>) {
    const bit = 1 << RELATION_TYPES.indexOf(type);
    for (const [x, y] of pairs) if (x !== y) entry(x, y).mask |= bit;
  }
  const semanticBit = 1 << RELATION_TYPES.indexOf('semantic_knn');
  for (const pair of semantic) {
    if (pair.a === pair.b) continue;
    const found = entry(pair.a, pair.b);
    found.mask |= semanticBit;
    found.similarity = pair.similarity;
  }
  const edges: MemoryEdge[] = [];
  for (const found of byPair.values()) {
    const types = RELATION_TYPES.filter((_, bit) => found.mask & (1 << bit));
    const edge: MemoryEdge = {
      contextId,
      a: found.a,
      b: found.b,
      types,
      strength: edgeStrength(types, found.similarity),
    };
    if (found.similarity !== undefined) edge.similarity = found.similarity;
    edges.push(edge);
  }
  return edges.sort((x, y) => (x.a < y.a ? -1 : x.a > y.a ? 1 : x.b < y.b ? -1 : x.b > y.b ? 1 : 0));
}
