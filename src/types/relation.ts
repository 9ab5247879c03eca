/** Query-independent relations built at digest time from metadata (schema) or similarity (semantic). */
export type SchemaRelationType =
  | 'same_round'
  | 'consecutive_turn'
  | 'event_bridge'
  | 'same_record'
  | 'record_grounding';
export type RelationType = SchemaRelationType | 'semantic_knn';

export const SCHEMA_RELATION_TYPES: readonly SchemaRelationType[] = [
  'same_round',
  'consecutive_turn',
  'event_bridge',
  'same_record',
  'record_grounding',
];
export const RELATION_TYPES: readonly RelationType[] = [...SCHEMA_RELATION_TYPES, 'semantic_knn'];

/** Reliability ceiling of every schema relation (method notes section 1: w_schema = 0.99). */
export const SCHEMA_EDGE_STRENGTH = 0.99;

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
