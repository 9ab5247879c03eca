import type { MemoryEdge } from '../../types/relation.ts';
import { BoundedMap, generationGroup } from '../bounded-map.ts';
import { pairKey } from '../edge-merge.ts';
import { type EdgeTuple, edgesByPair, type PostgresEdges } from './postgres-edges.ts';
import type { Sql } from './postgres-session.ts';

/** Bytes of edge lists a store keeps (about 100k edges), as the SQLite store's read cache. */
const EDGE_BYTES = 16 * 1024 * 1024;

/**
 * Each memory's complete edge list, kept per store under the read generation it was read with: the question
 * path's `neighbors` (the seeds' edges) and `edgesAmong` (the pool's inner edges), as the SQLite store keeps
 * them per file generation (src/store/sqlite-read-cache.ts). Questions about one archive keep meeting the
 * same memories (about half of a run's pool members had been in an earlier pool at 10k); a question whose
 * seeds were all met before reads no edge at all.
 *
 * Exact: used only inside a read unit (one REPEATABLE READ snapshot), whose generation was read in that
 * snapshot (PostgresSession.readGeneration): the context's `generation` moves in the same transaction as any
 * write of its memories or edges (schema 10 triggers), so two snapshots with one generation hold the same
 * edges. Entries of older generations are never served again and age out (bounded in bytes, oldest first).
 * Writes and reads in write units never use it. Tuples are shared, never mutated; callers get fresh edges.
 */
export class PostgresEdgeLists {
  private readonly lists = new BoundedMap<readonly EdgeTuple[]>(EDGE_BYTES, listBytes);

  constructor(private readonly edges: PostgresEdges) {}

  /** Every edge touching any of the ids (PostgresEdges.touching): cached lists, one read for the rest. */
  async neighbors(
    sql: Sql,
    contextId: string,
    memoryIds: readonly string[],
    generation: string,
  ): Promise<MemoryEdge[]> {
    const found: EdgeTuple[] = [];
    const missing: string[] = [];
    const group = generationGroup(generation, contextId);
    const kept = this.lists.group(group);
    for (const id of new Set(memoryIds)) {
      const list = kept?.get(id)?.value;
      if (list === undefined) missing.push(id);
      else for (const tuple of list) found.push(tuple);
    }
    if (missing.length > 0) {
      const tuples = await this.edges.touchingTuples(sql, contextId, missing);
      for (const tuple of tuples) found.push(tuple);
      // Each missing id's complete list (empty ones too: a memory without edges is a fact worth keeping).
      for (const [id, list] of listsOf(missing, tuples)) this.lists.set(group, id, list);
    }
    return edgesByPair(contextId, found);
  }

  /**
   * Every edge with both ends among the ids (PostgresEdges.among): an edge with a cached end is in that end's
   * list; only edges between two uncached ends need the statement (which returns just those: reading the
   * uncached ends' whole lists to keep them sent ~7x the rows).
   */
  async among(
    sql: Sql,
    contextId: string,
    memoryIds: readonly string[],
    generation: string,
  ): Promise<MemoryEdge[]> {
    const inSet = new Set(memoryIds);
    const found: EdgeTuple[] = [];
    const uncached: string[] = [];
    const kept = this.lists.group(generationGroup(generation, contextId));
    for (const id of inSet) {
      const list = kept?.get(id)?.value;
      if (list === undefined) {
        uncached.push(id);
        continue;
      }
      for (const tuple of list) if (inSet.has(tuple[0]) && inSet.has(tuple[1])) found.push(tuple);
    }
    if (uncached.length >= 2) {
      for (const tuple of await this.edges.amongTuples(sql, contextId, uncached)) found.push(tuple);
    }
    return edgesByPair(contextId, found);
  }
}

/** A list's key: the generation first (its length first: unambiguous whatever characters it holds). */
/** Each id's edges among the tuples, each pair once per list. */
function listsOf(ids: readonly string[], tuples: readonly EdgeTuple[]): Map<string, EdgeTuple[]> {
  const lists = new Map<string, EdgeTuple[]>(ids.map((id) => [id, []]));
  const seen = new Set<string>();
  for (const tuple of tuples) {
    const key = pairKey(tuple[0], tuple[1]);
    if (seen.has(key)) continue;
    seen.add(key);
    lists.get(tuple[0])?.push(tuple);
    lists.get(tuple[1])?.push(tuple);
  }
  return lists;
}

function listBytes(tuples: readonly EdgeTuple[]): number {
  let bytes = 48;
  // A tuple held by both ends' lists is counted twice: the estimate stays an upper bound.
  for (const [a, b, types] of tuples) bytes += 2 * (a.length + b.length) + 24 * types.length + 120;
  return bytes;
}
