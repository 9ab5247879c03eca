import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { MemoryEdge, RelationType } from '../types/relation.ts';
import type { EdgeChange, RelationWork } from './archive-store-spec.ts';
import { countEdgeTypes, diffEdgeChanges, diffEdgeReplacement, pairKey } from './edge-merge.ts';
import type { ContextData } from './memory-store-context-data.ts';

/** The in-memory store's relations: the relation journal and the edges (indexed by memory for neighbors). */
export class MemoryStoreRelations {
  constructor(
    private readonly contexts: ReadonlyMap<string, ContextData>,
    private readonly assertOpen: () => void,
    private readonly context: (contextId: string, create: boolean) => ContextData,
  ) {}

  async pendingRelationWork(contextId: string, limit: number): Promise<RelationWork[]> {
    this.assertOpen();
    return structuredClone(this.contexts.get(contextId)?.journal.slice(0, limit) ?? []);
  }

  async clearRelationWork(contextId: string, seqs: readonly number[] | { through: number }): Promise<void> {
    this.assertOpen();
    const data = this.contexts.get(contextId);
    if (!data) return;
    if (!Array.isArray(seqs)) {
      const through = (seqs as { through: number }).through;
      data.journal = data.journal.filter((entry) => entry.seq > through);
      return;
    }
    const cleared = new Set(seqs);
    data.journal = data.journal.filter((entry) => !cleared.has(entry.seq));
  }

  async contextsWithRelationWork(): Promise<string[]> {
    this.assertOpen();
    return [...this.contexts]
      .filter(([, context]) => context.journal.length > 0)
      .map(([id]) => id)
      .sort();
  }

  async hasRelationWork(contextId: string): Promise<boolean> {
    this.assertOpen();
    return (this.contexts.get(contextId)?.journal.length ?? 0) > 0;
  }

  async relationWorkStatus(contextId: string): Promise<{ pending: number; lastSeq?: number }> {
    this.assertOpen();
    const journal = this.contexts.get(contextId)?.journal ?? [];
    const last = journal[journal.length - 1];
    return last === undefined ? { pending: 0 } : { pending: journal.length, lastSeq: last.seq };
  }

  async replaceEdges(
    contextId: string,
    types: readonly RelationType[],
    edges: readonly MemoryEdge[],
  ): Promise<void> {
    this.assertOpen();
    const data = this.context(contextId, edges.length > 0);
    const { upserts, deletes } = diffEdgeReplacement(contextId, data.edges.values(), types, edges);
    for (const edge of upserts) {
      for (const id of [edge.a, edge.b]) {
        if (!data.memories.has(id)) {
          throw new GraphmemixError(
            'INVALID_INPUT',
            `edge endpoint "${id}" is not a memory of "${contextId}"`,
          );
        }
      }
    }
    applyEdgeWrites(data, upserts, deletes);
  }

  async changeEdges(contextId: string, changes: readonly EdgeChange[]): Promise<void> {
    this.assertOpen();
    if (changes.length === 0) return;
    const data = this.context(contextId, true);
    // The whole diff (validation included) comes first, then the writes: all-or-nothing like a transaction.
    const { upserts, deletes } = diffEdgeChanges(
      contextId,
      changes,
      (id) => data.memories.has(id),
      (a, b) => data.edges.get(pairKey(a, b)),
    );
    applyEdgeWrites(data, upserts, deletes);
  }

  async neighbors(contextId: string, memoryIds: readonly string[]): Promise<MemoryEdge[]> {
    this.assertOpen();
    const data = this.contexts.get(contextId);
    if (!data) return [];
    const keys = new Set<string>();
    for (const id of memoryIds) for (const key of data.edgesByMemory.get(id) ?? []) keys.add(key);
    return [...keys].sort().map((key) => structuredClone(data.edges.get(key)!));
  }

  async edgesAmong(contextId: string, memoryIds: readonly string[]): Promise<MemoryEdge[]> {
    const inSet = new Set(memoryIds);
    return (await this.neighbors(contextId, memoryIds)).filter(
      (edge) => inSet.has(edge.a) && inSet.has(edge.b),
    );
  }

  async countEdges(contextId: string): Promise<Record<RelationType, number>> {
    this.assertOpen();
    return countEdgeTypes(this.contexts.get(contextId)?.edges.values() ?? []);
  }
}

function applyEdgeWrites(
  data: ContextData,
  upserts: readonly MemoryEdge[],
  deletes: readonly MemoryEdge[],
): void {
  for (const edge of deletes) {
    const key = pairKey(edge.a, edge.b);
    data.edges.delete(key);
    data.edgesByMemory.get(edge.a)?.delete(key);
    data.edgesByMemory.get(edge.b)?.delete(key);
  }
  for (const edge of upserts) {
    const key = pairKey(edge.a, edge.b);
    data.edges.set(key, structuredClone(edge));
    for (const id of [edge.a, edge.b]) {
      let keys = data.edgesByMemory.get(id);
      if (!keys) {
        keys = new Set();
        data.edgesByMemory.set(id, keys);
      }
      keys.add(key);
    }
  }
}
