import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import {
  edgeStrength,
  type MemoryEdge,
  RELATION_TYPES,
  type RelationType,
  type SchemaRelationType,
} from '../../types/relation.ts';
import type { RecordPair } from './record-pair.ts';

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
  // Each id gets a dense number and a pair is ONE number (smaller id's number * 2^26 + larger id's), its types
  // a bit mask (bit = index in RELATION_TYPES): no key string and no entry object per pair, ~50 bytes a pair
  // instead of ~150 (a 1M-memory rebuild merges ~1M schema pairs).
  private readonly index = new Map<string, number>();
  private readonly names: string[] = [];
  private readonly masks = new Map<number, number>();
  private readonly similarities = new Map<number, number>();

  addSchema(type: SchemaRelationType, pairs: readonly RecordPair[]): void {
    const bit = 1 << RELATION_TYPES.indexOf(type);
    for (const [x, y] of pairs) {
      if (x === y) continue;
      const key = this.key(x, y);
      this.masks.set(key, (this.masks.get(key) ?? 0) | bit);
    }
  }

  addSemantic(semantic: readonly SemanticPair[]): void {
    const semanticBit = 1 << RELATION_TYPES.indexOf('semantic_knn');
    for (const pair of semantic) {
      if (pair.a === pair.b) continue;
      const key = this.key(pair.a, pair.b);
      this.masks.set(key, (this.masks.get(key) ?? 0) | semanticBit);
      this.similarities.set(key, pair.similarity);
    }
  }

  /** The merged edges sorted by (a, b); the merger is empty afterwards. */
  edges(contextId: string): MemoryEdge[] {
    const edges: MemoryEdge[] = [];
    // One types array per distinct mask, shared by its edges (~60 bytes per edge less; nothing mutates them).
    const typesOf = new Map<number, RelationType[]>();
    for (const [key, mask] of this.masks) {
      let types = typesOf.get(mask);
      if (types === undefined) {
        types = RELATION_TYPES.filter((_, bit) => mask & (1 << bit));
        typesOf.set(mask, types);
      }
      const a = Math.floor(key / ID_SPAN);
      const similarity = this.similarities.get(key);
      const edge: MemoryEdge = {
        contextId,
        a: this.names[a]!,
        b: this.names[key - a * ID_SPAN]!,
        types,
        strength: edgeStrength(types, similarity),
      };
      if (similarity !== undefined) edge.similarity = similarity;
      edges.push(edge);
    }
    this.masks.clear();
    this.similarities.clear();
    this.index.clear();
    this.names.length = 0;
    return edges.sort((x, y) => (x.a < y.a ? -1 : x.a > y.a ? 1 : x.b < y.b ? -1 : x.b > y.b ? 1 : 0));
  }

  /** The pair's number, its ends ordered as `orderedPair` orders them (a < b). */
  private key(x: string, y: string): number {
    return x < y ? this.number(x) * ID_SPAN + this.number(y) : this.number(y) * ID_SPAN + this.number(x);
  }

  private number(id: string): number {
    let found = this.index.get(id);
    if (found === undefined) {
      found = this.names.length;
      if (found >= ID_SPAN) {
        throw new GraphmemixError('INVALID_INPUT', `one merge holds at most ${ID_SPAN} distinct memory ids`);
      }
      this.index.set(id, found);
      this.names.push(id);
    }
    return found;
  }
}

/** Distinct ids per merger: 2^26 keeps a pair's number (< 2^52) an exact double. */
const ID_SPAN = 2 ** 26;
