import type { MemoryEdge } from '../../types/relation.ts';
import type { EdgeChange } from '../archive-store-spec.ts';
import { pairKey } from '../edge-merge.ts';

/**
 * The stored edges a unit of work of one context has read: every edge touching `ids` (a `neighbors` call
 * returns them all), kept current by the unit's own edge writes. An incremental relation update reads the
 * neighbours of its dirty memories, then changes pairs that each touch one of them (the schema step and the
 * kNN step alike), so `changeEdges` finds every pair's stored edge here and skips its read of the stored
 * edges: one round trip instead of two, twice per add (issue #11).
 *
 * Exactness: the unit holds the context's write lock, and every edge writer of the context (edge changes,
 * replacements, deletes that cascade) is a scoped write that takes it, so no other transaction changes
 * these rows before the unit ends. Inside the unit, every scoped write other than an edge change drops this
 * knowledge (PostgresSession.scoped); an edge change applies its own diff to it. Calls of a unit may run
 * concurrently: its edge writes take turns (PostgresSession.serialEdgeWrite), each applying its diff when it
 * is done, and a read learns nothing when an edge write was issued after it (`learn`).
 */
export class UnitEdges {
  private readonly ids = new Set<string>();
  private readonly edges = new Map<string, MemoryEdge>();
  /** Edge writes issued so far (a read issued before one may miss it). */
  private writes = 0;

  /** What a read takes before it is issued and gives `learn` (writeMark). */
  writeMark(): number {
    return this.writes;
  }

  /** An edge write is issued now (before it is sent): reads issued earlier learn nothing. */
  writing(): void {
    this.writes++;
  }

  /**
   * `edges` are all the stored edges touching any of `ids`, read by a read issued at `mark`. When an edge
   * write was issued since (concurrent calls of one unit: updateRelations runs its updaters together), the
   * read may predate it and is not learnt; the pairs it would have told are read again when changed.
   */
  learn(ids: readonly string[], edges: readonly MemoryEdge[], mark: number): void {
    if (mark !== this.writes) return;
    for (const id of ids) this.ids.add(id);
    for (const edge of edges) this.edges.set(pairKey(edge.a, edge.b), copyEdge(edge));
  }

  /**
   * The stored edge of each changed pair (absent: no edge) when every pair touches a known id; undefined
   * when one does not (the caller reads them).
   */
  storedFor(changes: readonly EdgeChange[]): Map<string, MemoryEdge> | undefined {
    const stored = new Map<string, MemoryEdge>();
    for (const { a, b } of changes) {
      if (!this.ids.has(a) && !this.ids.has(b)) return undefined;
      const key = a < b ? pairKey(a, b) : pairKey(b, a);
      const edge = this.edges.get(key);
      if (edge) stored.set(key, copyEdge(edge));
    }
    return stored;
  }

  /** A diff the unit wrote (each pair's new stored form, or its delete). */
  apply(diff: { upserts: readonly MemoryEdge[]; deletes: readonly MemoryEdge[] }): void {
    for (const edge of diff.deletes) this.edges.delete(pairKey(edge.a, edge.b));
    for (const edge of diff.upserts) this.edges.set(pairKey(edge.a, edge.b), copyEdge(edge));
  }
}

/** Callers own what they are given (edges are plain objects they may change). */
function copyEdge(edge: MemoryEdge): MemoryEdge {
  return { ...edge, types: [...edge.types] };
}
