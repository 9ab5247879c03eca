/** Query-independent relations built at digest time from metadata (schema) or similarity (semantic). */
export type SchemaRelationType =
  | 'same_round'
  | 'consecutive_turn'
  | 'event_bridge'
  | 'same_record'
  | 'record_grounding'
  | 'supersedes';
export type RelationType = SchemaRelationType | 'semantic_knn';

export const SCHEMA_RELATION_TYPES: readonly SchemaRelationType[] = [
  'same_round',
  'consecutive_turn',
  'event_bridge',
  'same_record',
  'record_grounding',
  'supersedes',
];
export const RELATION_TYPES: readonly RelationType[] = [...SCHEMA_RELATION_TYPES, 'semantic_knn'];

/** Reliability ceiling of every schema relation (method notes section 1: w_schema = 0.99). */
export const SCHEMA_EDGE_STRENGTH = 0.99;

export function hasSchemaType(types: readonly RelationType[]): boolean {
  return types.some((type) => type !== 'semantic_knn');
}

/**
 * The strength of an edge with these types: the schema strength when any schema type holds, else the
 * mutual-kNN similarity. The one rule for the digest's full rebuild and every store's edge diff.
 */
export function edgeStrength(types: readonly RelationType[], similarity: number | undefined): number {
  return hasSchemaType(types) ? SCHEMA_EDGE_STRENGTH : (similarity ?? 0);
}

/**
 * One undirected pair of memories in one context, with every relation type that holds between them.
 * Invariant: a < b (string order), so each pair is stored once.
 */
export interface MemoryEdge {
  contextId: string;
  a: string;
  b: string;
  types: RelationType[];
  /** Expansion strength: 0.99 when any schema type holds, else the mutual-kNN similarity. */
  strength: number;
  /** Mutual-kNN similarity (mean of the two directed cosines) when semantic_knn holds. */
  similarity?: number;
}
