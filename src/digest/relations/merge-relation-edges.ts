import {
  RELATION_TYPES,
  type MemoryEdge,
  type RelationType,
  SCHEMA_EDGE_STRENGTH,
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
  const byPair = new Map<string, { a: string; b: string; types: Set<RelationType>; similarity?: number }>();
  const entry = (x: string, y: string) => {
    const [a, b] = orderedPair(x, y);
    const key = `${a}\u0000${b}`;
    let found = byPair.get(key);
    if (!found) {
      found = { a, b, types: new Set() };
      byPair.set(key, found);
    }
    return found;
  };
  for (const [type, pairs] of Object.entries(schema) as Array<[SchemaRelationType, readonly RecordPair[]]>) {
    for (const [x, y] of pairs) if (x !== y) entry(x, y).types.add(type);
  }
  for (const pair of semantic) {
    if (pair.a === pair.b) continue;
    const found = entry(pair.a, pair.b);
    found.types.add('semantic_knn');
    found.similarity = pair.similarity;
  }
  const edges: MemoryEdge[] = [];
  for (const found of byPair.values()) {
    const types = RELATION_TYPES.filter((type) => found.types.has(type));
    const schemaHolds = types.some((type) => type !== 'semantic_knn');
    const edge: MemoryEdge = {
      contextId,
      a: found.a,
      b: found.b,
      types,
      strength: schemaHolds ? SCHEMA_EDGE_STRENGTH : (found.similarity ?? 0),
    };
    if (found.similarity !== undefined) edge.similarity = found.similarity;
    edges.push(edge);
  }
  return edges.sort((x, y) => (x.a < y.a ? -1 : x.a > y.a ? 1 : x.b < y.b ? -1 : x.b > y.b ? 1 : 0));
}

/** Pairs carrying each relation type. */
export function countRelationTypes(edges: readonly MemoryEdge[]): Record<RelationType, number> {
  const counts = Object.fromEntries(RELATION_TYPES.map((type) => [type, 0])) as Record<RelationType, number>;
  for (const edge of edges) for (const type of edge.types) counts[type]++;
  return counts;
}
