import type Database from 'better-sqlite3';
import type { MemoryRecord } from '../types/memory-record.ts';
import type { MemoryEdge, RelationType } from '../types/relation.ts';
import type { EdgeChange, RelationWork } from './archive-store-spec.ts';
import {
  diffEdgeChanges,
  diffEdgeReplacement,
  emptyEdgeCounts,
  pairKey,
  streamEdgeReplacement,
} from './edge-merge.ts';
import { MULTI_ROW_MAX, multiRowInsert } from './multi-row-insert.ts';
import { explicitIndexes, type IndexDefinition, withIndexesRebuilt } from './sqlite-bulk-write-pragmas.ts';
import { type EdgeRow, type SqliteReadCache, sqliteReadWork } from './sqlite-read-cache.ts';
import type { SqliteStoreStatements } from './sqlite-store-statements.ts';

/**
 * Edges from which a whole-type replacement may rebuild the edge indexes by one sort (bulkEdgeIndexes). The
 * sort pays off only once random inserts into `edges_by_b` miss SQLite's page cache often: a 1M-memory
 * import's edge writes 27.3 -> 20.6 s of CPU with it, a 300k one's 4.6 -> 6.4 s when rebuilt from 200k
 * edges (bench/ingest-probe.ts, rounds shape; docs/living-archive.md "Round 44"). Set between the two, not
 * tuned further.
 */
export const BULK_EDGE_INDEX_FROM = 500_000;

/**
 * The SQLite store's relations: the relation journal (writes waiting to become edges) and the edges, which
 * the question path reads through the connection's read cache (sqlite-read-cache.ts).
 */
export class SqliteRelations {
  /**
   * Edge rows upserted up to MULTI_ROW_MAX a statement (multi-row-insert.ts): a 100k import's rebuild writes
   * ~240k edges, one statement each cost 1.6 s of its 7 s of edge and kNN state writes.
   */
  private readonly upsertEdges: (values: readonly unknown[], rows: number) => void;

  constructor(
    private readonly db: Database.Database,
    private readonly statements: SqliteStoreStatements,
    private readonly run: <T>(work: () => T) => T,
    private readonly withReadCache: <T>(read: (cache: SqliteReadCache | undefined) => T) => T,
    private readonly bulkEdgeIndexFrom = BULK_EDGE_INDEX_FROM,
  ) {
    this.upsertEdges = multiRowInsert(
      db,
      'INSERT INTO edges (context_id, a, b, types, strength, similarity)',
      '(?, ?, ?, ?, ?, ?)',
      `ON CONFLICT (context_id, a, b) DO UPDATE SET types = excluded.types, strength = excluded.strength,
        similarity = excluded.similarity`,
    );
  }

  async pendingRelationWork(contextId: string, limit: number): Promise<RelationWork[]> {
    const rows = this.run(() => this.statements.pendingWork.all(contextId, limit)) as {
      seq: number;
      memory_id: string;
      before: string | null;
    }[];
    return rows.map((row) =>
      row.before === null
        ? { seq: row.seq, memoryId: row.memory_id }
        : { seq: row.seq, memoryId: row.memory_id, before: JSON.parse(row.before) as MemoryRecord },
    );
  }

  async clearRelationWork(contextId: string, seqs: readonly number[] | { through: number }): Promise<void> {
    if (!Array.isArray(seqs)) {
      this.run(() => this.statements.clearWorkThrough.run(contextId, (seqs as { through: number }).through));
      return;
    }
    if (seqs.length === 0) return;
    this.run(() => this.statements.clearWork.run(contextId, JSON.stringify(seqs)));
  }

  async contextsWithRelationWork(): Promise<string[]> {
    const rows = this.run(() => this.statements.workContexts.all()) as { context_id: string }[];
    return rows.map((row) => row.context_id);
  }

  async hasRelationWork(contextId: string): Promise<boolean> {
    return (this.run(() => this.statements.hasWork.get(contextId)) as { pending: number }).pending === 1;
  }

  async relationWorkStatus(contextId: string): Promise<{ pending: number; lastSeq?: number }> {
    const row = this.run(() => this.statements.workStatus.get(contextId)) as {
      n: number;
      last: number | null;
    };
    return row.last === null ? { pending: row.n } : { pending: row.n, lastSeq: row.last };
  }

  async replaceEdges(
    contextId: string,
    types: readonly RelationType[],
    edges: readonly MemoryEdge[],
  ): Promise<void> {
    this.run(() =>
      this.db
        .transaction(() => {
          withIndexesRebuilt(this.db, this.bulkEdgeIndexes(contextId, edges.length), () =>
            this.replaceEdgeRows(contextId, types, edges),
          );
        })
        .immediate(),
    );
  }

  /**
   * The explicit indexes of `edges` that a replacement of `count` edges drops and builds again after its rows,
   * or none. Why: the rows arrive in (a, b) order but `edges_by_b` takes them in random order, one random
   * insert each into a large index; CREATE INDEX sorts once (a 1M-memory import's schema edges, 958k rows:
   * 11.9 -> 6.8 s). Only for a replacement of at least BULK_EDGE_INDEX_FROM edges that is also at least as
   * large as every other context's edges together: the build reads the whole table (as
   * sqlite-semantic-index.ts's bulkIndexes). The indexes hold the same rows either way, and a failed
   * replacement takes the drop back with everything else.
   */
  private bulkEdgeIndexes(contextId: string, count: number): IndexDefinition[] {
    if (count < this.bulkEdgeIndexFrom) return [];
    const others = (this.statements.otherEdges.get(contextId, count + 1) as { n: number }).n;
    return others > count ? [] : explicitIndexes(this.db, ['edges']);
  }

  /** Inside replaceEdges' transaction: the given types' edges of the context replaced by `edges`. */
  private replaceEdgeRows(
    contextId: string,
    types: readonly RelationType[],
    edges: readonly MemoryEdge[],
  ): void {
    const s = this.statements;
    // No stored edge has a replaced type (the kept per-type counts say so): a bulk import's rebuild
    // streams its edges, each merged with its pair's stored edge (none in a context without edges).
    const counts = s.countEdgeTypes.all(contextId) as { type: string; n: number }[];
    if (!counts.some((row) => row.n > 0 && (types as readonly string[]).includes(row.type))) {
      const empty = s.anyEdge.get(contextId) === undefined;
      const upserts = streamEdgeReplacement(contextId, types, edges, (a, b) => {
        if (empty) return undefined;
        const row = s.getEdge.get(contextId, a, b) as EdgeRow | undefined;
        return row ? toEdge(contextId, row) : undefined;
      });
      if (upserts !== undefined) {
        this.writeEdgeDiff(contextId, { upserts, deletes: [] });
        return;
      }
    }
    const existing = (s.listEdges.all(contextId) as EdgeRow[]).map((row) => toEdge(contextId, row));
    this.writeEdgeDiff(contextId, diffEdgeReplacement(contextId, existing, types, edges));
  }

  async changeEdges(contextId: string, changes: readonly EdgeChange[]): Promise<void> {
    if (changes.length === 0) return;
    const s = this.statements;
    this.run(() =>
      this.db
        .transaction(() => {
          const diff = diffEdgeChanges(
            contextId,
            changes,
            (id) => s.getHash.get(contextId, id) !== undefined,
            (a, b) => {
              const row = s.getEdge.get(contextId, a, b) as EdgeRow | undefined;
              return row ? toEdge(contextId, row) : undefined;
            },
          );
          this.writeEdgeDiff(contextId, diff);
        })
        .immediate(),
    );
  }

  /** Inside a write transaction: the edge rows a diff removes and upserts. */
  private writeEdgeDiff(
    contextId: string,
    diff: { upserts: Iterable<MemoryEdge>; deletes: readonly MemoryEdge[] },
  ): void {
    const s = this.statements;
    for (const edge of diff.deletes) s.deleteEdge.run(contextId, edge.a, edge.b);
    // MULTI_ROW_MAX edges a statement: the upsert applies to each row in turn, as one statement per edge did.
    const values: unknown[] = [];
    let rows = 0;
    for (const edge of diff.upserts) {
      values.push(
        contextId,
        edge.a,
        edge.b,
        JSON.stringify(edge.types),
        edge.strength,
        edge.similarity ?? null,
      );
      if (++rows < MULTI_ROW_MAX) continue;
      this.upsertEdges(values, rows);
      values.length = 0;
      rows = 0;
    }
    this.upsertEdges(values, rows);
  }

  async neighbors(contextId: string, memoryIds: readonly string[]): Promise<MemoryEdge[]> {
    const found = new Map<string, MemoryEdge>();
    // An edge between two of the ids is in both lists: one MemoryEdge for it (the rows are equal).
    const take = (row: EdgeRow) => {
      if (!found.has(row.key)) found.set(row.key, toEdge(contextId, row));
    };
    if (memoryIds.length === 0) return this.run(() => []);
    this.withReadCache((cache) => {
      const unique = [...new Set(memoryIds)];
      const missing: string[] = [];
      const kept = cache?.edges.group(contextId);
      for (const id of unique) {
        const rows = kept?.get(id)?.value;
        if (rows === undefined) missing.push(id);
        else for (const row of rows) take(row);
      }
      if (missing.length === 0) return;
      const ids = JSON.stringify(missing);
      sqliteReadWork.edgeStatements++;
      const rows = edgeRows(this.statements.edgesOf.all(contextId, ids, contextId, ids));
      for (const row of rows) take(row);
      // Each missing id's complete list (empty ones too: a memory without edges is a fact worth keeping).
      if (!cache) return;
      for (const [id, list] of edgeListsOf(missing, rows)) cache.edges.set(contextId, id, list);
    });
    return [...found.keys()].sort().map((key) => found.get(key)!);
  }

  async edgesAmong(contextId: string, memoryIds: readonly string[]): Promise<MemoryEdge[]> {
    if (memoryIds.length < 2) return [];
    const unique = [...new Set(memoryIds)];
    const byPair = this.withReadCache((cache) => {
      if (!cache) {
        const ids = JSON.stringify(unique);
        sqliteReadWork.edgeStatements++;
        const rows = edgeRows(this.statements.edgesAmong.all(contextId, ids, ids));
        return new Map(rows.map((row) => [row.key, row]));
      }
      // An edge with a cached end is in that end's complete list; only edges between two uncached ends
      // need the statement, which reads the uncached ends' complete lists (and keeps them): selecting only
      // the edges among them cost as much (measured: ~18 rows against ~144 for 24 ids, same CPU: the plan
      // walks every edge of each id either way), and a later question meeting these memories reads nothing.
      const inSet = new Set(unique);
      const byPair = new Map<string, EdgeRow>();
      const uncached: string[] = [];
      const kept = cache.edges.group(contextId);
      for (const id of unique) {
        const list = kept?.get(id)?.value;
        if (list === undefined) {
          uncached.push(id);
          continue;
        }
        for (const row of list) {
          if (inSet.has(row.a) && inSet.has(row.b)) byPair.set(row.key, row);
        }
      }
      if (uncached.length >= 2) {
        const ids = JSON.stringify(uncached);
        sqliteReadWork.edgeStatements++;
        const lists = edgeListsOf(
          uncached,
          edgeRows(this.statements.edgesOf.all(contextId, ids, contextId, ids)),
        );
        for (const [id, list] of lists) {
          for (const row of list) {
            if (inSet.has(row.a) && inSet.has(row.b)) byPair.set(row.key, row);
          }
          cache.edges.set(contextId, id, list);
        }
      }
      return byPair;
    });
    // Sorted like neighbors (pairKey order; each key built once, not in every comparison).
    return [...byPair.keys()].sort(compareKeys).map((key) => toEdge(contextId, byPair.get(key)!));
  }

  async countEdges(contextId: string): Promise<Record<RelationType, number>> {
    const rows = this.run(() => this.statements.countEdgeTypes.all(contextId)) as {
      type: RelationType;
      n: number;
    }[];
    const counts = emptyEdgeCounts();
    for (const row of rows) if (row.type in counts) counts[row.type] = row.n;
    return counts;
  }
}

/**
 * Parsed `types` columns by their JSON text: a context has a handful of distinct type lists, and a question
 * reads hundreds of edges. Each edge gets its own copy (callers may mutate what they receive).
 */
const parsedTypes = new Map<string, readonly RelationType[]>();

function edgeTypes(json: string): RelationType[] {
  let types = parsedTypes.get(json);
  if (types === undefined) {
    types = JSON.parse(json) as RelationType[];
    // Bounded: a pathological store cannot grow it past a few hundred lists.
    if (parsedTypes.size < 512) parsedTypes.set(json, types);
  }
  return [...types];
}

function compareKeys(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Raw edge rows (a, b, types, strength, similarity) as EdgeRow objects. */
function edgeRows(rows: unknown[]): EdgeRow[] {
  return (rows as [string, string, string, number, number | null][]).map((row) => ({
    a: row[0],
    b: row[1],
    key: pairKey(row[0], row[1]),
    types: row[2],
    strength: row[3],
    similarity: row[4],
  }));
}

/** Each id's edges among `rows` (every edge touching one of `ids`), empty lists included. */
function edgeListsOf(ids: readonly string[], rows: readonly EdgeRow[]): Map<string, EdgeRow[]> {
  const lists = new Map(ids.map((id) => [id, [] as EdgeRow[]]));
  const seen = new Set<string>();
  for (const row of rows) {
    // UNION ALL yields an edge between two of the ids twice.
    if (seen.has(row.key)) continue;
    seen.add(row.key);
    lists.get(row.a)?.push(row);
    if (row.b !== row.a) lists.get(row.b)?.push(row);
  }
  return lists;
}

function toEdge(contextId: string, row: EdgeRow): MemoryEdge {
  const edge: MemoryEdge = {
    contextId,
    a: row.a,
    b: row.b,
    types: edgeTypes(row.types),
    strength: row.strength,
  };
  if (row.similarity !== null) edge.similarity = row.similarity;
  return edge;
}
