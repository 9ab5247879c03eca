import {
  edgeStrength,
  type MemoryEdge,
  RELATION_TYPES,
  type RelationType,
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
  const merger = new RelationEdgeMerger();
  for (const [type, pairs] of Object.entries(schema) as Array<[SchemaRelationType, readonly RecordPair[]]>) {
    merger.addSchema(type, pairs);
  }
  merger.addSemantic(semantic);
  return merger.edges(contextId);
}

/**
 * mergeRelationEdges one relation type at a time, so a caller can drop each type's pairs before computing
 * the next (buildRelations at 1M memories: the six types' pair lists together were ~1/4 of its peak).
 */
export class RelationEdgeMerger {
  // Types as a bit mask (bit = index in RELATION_TYPES): cheap to merge for millions of pairs.
  private readonly byPair = new Map<string, { a: string; b: string; mask: number; similarity?: number }>();

  addSchema(type: SchemaRelationType, pairs: readonly RecordPair[]): void {
    const bit = 1 << RELATION_TYPES.indexOf(type);
    for (const [x, y] of pairs) if (x !== y) this.entry(x, y).mask |= bit;
  }

  addSemantic(semantic: readonly SemanticPair[]): void {
    const semanticBit = 1 << RELATION_TYPES.indexOf('semantic_knn');
    for (const pair of semantic) {
      if (pair.a === pair.b) continue;
      const found = this.entry(pair.a, pair.b);
      found.mask |= semanticBit;
      found.similarity = pair.similarity;
    }
  }

  /** The merged edges sorted by (a, b); the merger is empty afterwards. */
  edges(contextId: string): MemoryEdge[] {
    const edges: MemoryEdge[] = [];
    // One types array per distinct mask, shared by its edges (~60 bytes per edge less; nothing mutates them).
    const typesOf = new Map<number, RelationType[]>();
    for (const found of this.byPair.values()) {
      let types = typesOf.get(found.mask);
      if (types === undefined) {
        types = RELATION_TYPES.filter((_, bit) => found.mask & (1 << bit));
        typesOf.set(found.mask, types);
      }
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
    this.byPair.clear();
    return edges.sort((x, y) => (x.a < y.a ? -1 : x.a > y.a ? 1 : x.b < y.b ? -1 : x.b > y.b ? 1 : 0));
  }

  private entry(x: string, y: string) {
    const [a, b] = orderedPair(x, y);
    const key = `${a}\u0000${b}`;
    let found = this.byPair.get(key);
    if (!found) {
      found = { a, b, mask: 0 };
      this.byPair.set(key, found);
    }
    return found;
  }
}
