import type { ContextData } from './memory-store-context-data.ts';

/** The in-memory store's integrityCheck: every edge ordered and between memories, every vector of a memory. */
export function memoryStoreIntegrityCheck(contexts: ReadonlyMap<string, ContextData>): {
  ok: boolean;
  problems: string[];
} {
  const problems: string[] = [];
  for (const [contextId, data] of contexts) {
    for (const edge of data.edges.values()) {
      if (!(edge.a < edge.b)) problems.push(`${contextId}: edge ${edge.a}-${edge.b} not ordered`);
      for (const id of [edge.a, edge.b]) {
        if (!data.memories.has(id)) problems.push(`${contextId}: edge ${edge.a}-${edge.b} dangles at ${id}`);
      }
    }
    for (const [space, rows] of data.vectors) {
      for (const row of rows.values()) {
        if (!data.memories.has(row.memoryId))
          problems.push(`${contextId}: vector ${space} dangles at ${row.memoryId}`);
      }
    }
  }
  return { ok: problems.length === 0, problems };
}
