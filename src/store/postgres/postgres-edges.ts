import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import type { MemoryEdge, RelationType } from '../../types/relation.ts';
import type { EdgeChange } from '../archive-store-spec.ts';
import { diffEdgeChanges, pairKey } from '../edge-merge.ts';
import type { Sql } from './postgres-session.ts';
import type { UnitEdges } from './postgres-unit-edges.ts';

interface EdgeRow {
  a: string;
  b: string;
  types: RelationType[];
  strength: number;
  similarity: number | null;
}

/**
 * Edge rows of the PostgreSQL store; callers run these inside their scoped (write) transaction. The diff
 * semantics are the shared ones of src/store/edge-merge.ts; per-type counts follow by trigger.
 */
export class PostgresEdges {
  async all(sql: Sql, contextId: string): Promise<MemoryEdge[]> {
    const rows = await sql.query<EdgeRow>(
      'SELECT a, b, types, strength, similarity FROM edges WHERE context_id = $1',
      [contextId],
    );
    return rows.rows.map((row) => toEdge(contextId, row));
  }

  /**
   * changeEdges (the semantics of diffEdgeChanges) in the caller's write transaction. When `known` (the
   * unit's edge knowledge) holds every changed pair's stored edge, the diff is computed from it and written by
   * ONE statement that also checks the endpoints are memories and writes nothing when one is not (then the
   * diff is redone with that answer, which throws what diffEdgeChanges throws); otherwise the stored edges and
   * endpoints are read first (two round trips). `known` takes the diff written.
   */
  async change(
    sql: Sql,
    contextId: string,
    changes: readonly EdgeChange[],
    known?: UnitEdges,
  ): Promise<void> {
    const stored = known?.storedFor(changes);
    const fast = stored && tryDiff(contextId, changes, stored);
    if (stored && fast) {
      const ids = [...new Set(changes.flatMap((change) => [change.a, change.b]))];
      known?.writing();
      // Upserts of pairs with no stored edge are plain inserts (no update trigger, no conflict check).
      const updates = fast.upserts.some((edge) => stored.has(pairKey(edge.a, edge.b)));
      const memories = await this.writeChecked(sql, contextId, fast, ids, updates);
      if (memories.size < ids.length) {
        // Nothing was written; this throws INVALID_INPUT for the first endpoint that is not a memory.
        diffEdgeChanges(
          contextId,
          changes,
          (id) => memories.has(id),
          (a, b) => stored.get(pairKey(a, b)),
        );
        throw new GraphmemixError('INVALID_INPUT', `an edge endpoint is not a memory of "${contextId}"`);
      }
      known?.apply(fast);
      return;
    }
    // A diff that throws on the known edges (a caller bug) takes the read path, which throws in
    // diffEdgeChanges' own order (endpoint checks first).
    const around = await this.around(sql, contextId, changes);
    const diff = diffEdgeChanges(
      contextId,
      changes,
      (id) => around.memories.has(id),
      (a, b) => around.stored.get(pairKey(a, b)),
    );
    known?.writing();
    await this.write(sql, contextId, diff);
    known?.apply(diff);
  }

  /** The endpoints that are memories of the context and the stored edges of the changed pairs. */
  async around(
    sql: Sql,
    contextId: string,
    changes: readonly EdgeChange[],
  ): Promise<{ memories: Set<string>; stored: Map<string, MemoryEdge> }> {
    const ids = [...new Set(changes.flatMap((change) => [change.a, change.b]))];
    const as: string[] = [];
    const bs: string[] = [];
    for (const change of changes) {
      const [a, b] = change.a < change.b ? [change.a, change.b] : [change.b, change.a];
      as.push(a);
      bs.push(b);
    }
    // One round trip: the endpoints that are memories (rows with b NULL), then the stored edges.
    const rows = await sql.query<EdgeRow & { memory: boolean }>(
      `SELECT true AS memory, m.id AS a, NULL AS b, NULL::text[] AS types, NULL::float8 AS strength,
         NULL::float8 AS similarity
       FROM memories m WHERE m.context_id = $1 AND m.id = ANY($2::text[])
       UNION ALL
       SELECT false, e.a, e.b, e.types, e.strength, e.similarity FROM edges e
       JOIN unnest($3::text[], $4::text[]) AS p(a, b) ON e.a = p.a AND e.b = p.b WHERE e.context_id = $1`,
      [contextId, ids, as, bs],
    );
    const memories = new Set<string>();
    const stored = new Map<string, MemoryEdge>();
    for (const row of rows.rows) {
      if (row.memory) memories.add(row.a);
      else stored.set(pairKey(row.a, row.b), toEdge(contextId, row));
    }
    return { memories, stored };
  }

  /**
   * Applies a diff in one statement: the deletes (a CTE) and the upserts touch different pairs (a diff names
   * a pair once), so their order does not matter.
   */
  async write(
    sql: Sql,
    contextId: string,
    diff: { upserts: readonly MemoryEdge[]; deletes: readonly MemoryEdge[] },
  ): Promise<void> {
    if (diff.deletes.length === 0 && diff.upserts.length === 0) return;
    // Types travel as JSON arrays (a text[][] parameter cannot hold rows of different lengths).
    await sql.query(
      `WITH gone AS (DELETE FROM edges e USING unnest($3::text[], $4::text[]) AS p(a, b)
         WHERE e.context_id = $1 AND e.a = p.a AND e.b = p.b)
       INSERT INTO edges (context_id, a, b, types, strength, similarity)
       SELECT $1, e.a, e.b, ARRAY(SELECT jsonb_array_elements_text(e.types)), e.strength, e.similarity
       FROM jsonb_to_recordset($2::jsonb) AS e(a text, b text, types jsonb, strength float8, similarity float8)
       ORDER BY e.a, e.b
       ON CONFLICT (context_id, a, b) DO UPDATE SET types = excluded.types, strength = excluded.strength,
         similarity = excluded.similarity`,
      diffParams(contextId, diff),
    );
  }

  /**
   * write() guarded by the endpoint check, as ONE statement: nothing is written unless every id in `ids`
   * (distinct) is a memory of the context. Returns the ids that are. Only the parts the diff needs are in the
   * statement: each data-modifying part fires its statement-level edge_counts trigger even when it changes
   * no row (~30 us each), and an add's edge writes rarely update a stored pair (none of ~130 in 60 adds-1
   * at 10k: inserts, with deletes in half of them), so without `updates` the upserts are plain inserts, not
   * ON CONFLICT DO UPDATE (which fires the insert and the update triggers and checks each row for a
   * conflict). Four statement texts at most, each prepared once per connection.
   */
  private async writeChecked(
    sql: Sql,
    contextId: string,
    diff: { upserts: readonly MemoryEdge[]; deletes: readonly MemoryEdge[] },
    ids: readonly string[],
    /** Some upsert names a pair with a stored edge (else every upsert inserts a new row). */
    updates: boolean,
  ): Promise<Set<string>> {
    const [, upserts, deleteA, deleteB] = diffParams(contextId, diff);
    const values: unknown[] = [contextId, ids, ids.length];
    const parts = [
      'found AS (SELECT id FROM memories WHERE context_id = $1 AND id = ANY($2::text[]))',
      'ok AS (SELECT count(*) = $3 AS ok FROM found)',
    ];
    if (diff.deletes.length > 0) {
      values.push(deleteA, deleteB);
      parts.push(`gone AS (DELETE FROM edges e USING unnest($${values.length - 1}::text[], $${values.length}::text[]) AS p(a, b)
         WHERE e.context_id = $1 AND e.a = p.a AND e.b = p.b AND (SELECT ok FROM ok))`);
    }
    if (diff.upserts.length > 0) {
      values.push(upserts);
      parts.push(`put AS (INSERT INTO edges (context_id, a, b, types, strength, similarity)
         SELECT $1, e.a, e.b, ARRAY(SELECT jsonb_array_elements_text(e.types)), e.strength, e.similarity
         FROM jsonb_to_recordset($${values.length}::jsonb)
           AS e(a text, b text, types jsonb, strength float8, similarity float8)
         WHERE (SELECT ok FROM ok)
         ORDER BY e.a, e.b${
           updates
             ? `
         ON CONFLICT (context_id, a, b) DO UPDATE SET types = excluded.types, strength = excluded.strength,
           similarity = excluded.similarity`
             : ''
         })`);
    }
    const rows = await sql.query<{ id: string }>(
      `WITH ${parts.join(',\n       ')}\n       SELECT id FROM found`,
      values,
    );
    return new Set(rows.rows.map((row) => row.id));
  }

  /** Every edge touching any of the ids, each pair once, ordered by pair. */
  async touching(sql: Sql, contextId: string, memoryIds: readonly string[]): Promise<MemoryEdge[]> {
    return edgesByPair(contextId, await this.touchingTuples(sql, contextId, memoryIds));
  }

  /** The edges touching any of the ids as sent (an edge between two of them comes twice). */
  async touchingTuples(sql: Sql, contextId: string, memoryIds: readonly string[]): Promise<EdgeTuple[]> {
    const ids = [...new Set(memoryIds)];
    postgresEdgeReads.statements++;
    // UNION ALL: an edge between two of the ids comes twice and the caller keeps one (a UNION hashed every
    // row's five columns in the server to do the same).
    const rows = await sql.query<{ edges: string | null }>(
      `SELECT ${EDGE_TUPLES} FROM (
         SELECT a, b, types, strength, similarity FROM edges WHERE context_id = $1 AND a = ANY($2::text[])
         UNION ALL SELECT a, b, types, strength, similarity FROM edges WHERE context_id = $1 AND b = ANY($2::text[])) e`,
      [contextId, ids],
    );
    return parseEdgeTuples(rows.rows[0]?.edges);
  }

  /**
   * Every edge with both ends among the ids, ordered by pair: one walk of the primary key by `a`, filtered
   * on `b` in the server. A question's pool (24 ids at 10k) has ~150 touching edges and ~20 inner ones; the
   * touching read sent all of them (with a UNION's sort) for the caller to filter.
   */
  async among(sql: Sql, contextId: string, memoryIds: readonly string[]): Promise<MemoryEdge[]> {
    return edgesByPair(contextId, await this.amongTuples(sql, contextId, memoryIds));
  }

  async amongTuples(sql: Sql, contextId: string, memoryIds: readonly string[]): Promise<EdgeTuple[]> {
    const ids = [...new Set(memoryIds)];
    if (ids.length < 2) return [];
    postgresEdgeReads.statements++;
    const rows = await sql.query<{ edges: string | null }>(
      `SELECT ${EDGE_TUPLES} FROM edges e
       WHERE context_id = $1 AND a = ANY($2::text[]) AND b = ANY($2::text[])`,
      [contextId, ids],
    );
    return parseEdgeTuples(rows.rows[0]?.edges);
  }
}

/** Edge statements of the question path this process ran (never reset here; tests read differences). */
export const postgresEdgeReads = { statements: 0 };

/**
 * A question's edge reads send their rows as ONE JSON array of [a, b, types, strength, similarity]: the driver
 * parsed ~150 rows per question field by field (the types through its array parser), several times what
 * JSON.parse of the same values costs. Built by concatenation (json_build_array looked up its arguments'
 * types on every row); ids go through to_json (escaping any character), and so do the doubles (a non-finite
 * one becomes a JSON string, turned back by Number). Doubles are exact: the read unit sets extra_float_digits
 * (shortest round-trip output).
 */
const EDGE_TUPLES = `'[' || string_agg('[' || to_json(e.a) || ',' || to_json(e.b) || ',' || array_to_json(e.types) || ','
  || to_json(e.strength) || ',' || coalesce(to_json(e.similarity)::text, 'null') || ']', ',') || ']' AS edges`;

function parseEdgeTuples(text: string | null | undefined): EdgeTuple[] {
  if (!text) return [];
  const tuples = JSON.parse(text) as EdgeTuple[];
  for (const tuple of tuples) {
    if (typeof tuple[3] !== 'number') tuple[3] = Number(tuple[3]);
    if (tuple[4] !== null && typeof tuple[4] !== 'number') tuple[4] = Number(tuple[4]);
  }
  return tuples;
}

/** An edge as the question path's reads send it; shared by cached lists (postgres-edge-lists.ts): never mutated. */
export type EdgeTuple = [
  a: string,
  b: string,
  types: RelationType[],
  strength: number,
  similarity: number | null,
];

/** The tuples' edges, each pair once, ordered by pair (as `neighbors` returns them); fresh objects. */
export function edgesByPair(contextId: string, tuples: readonly EdgeTuple[]): MemoryEdge[] {
  const found = new Map<string, EdgeTuple>();
  for (const tuple of tuples) found.set(pairKey(tuple[0], tuple[1]), tuple);
  return [...found.keys()].sort().map((key) => {
    const [a, b, types, strength, similarity] = found.get(key)!;
    return toEdge(contextId, { a, b, types: [...types], strength, similarity });
  });
}

function toEdge(contextId: string, row: EdgeRow): MemoryEdge {
  const edge: MemoryEdge = { contextId, a: row.a, b: row.b, types: row.types, strength: row.strength };
  if (row.similarity !== null) edge.similarity = row.similarity;
  return edge;
}

/** $1 context, $2 the upserts as JSON (types of different lengths), $3 / $4 the deleted pairs. */
function diffParams(
  contextId: string,
  diff: { upserts: readonly MemoryEdge[]; deletes: readonly MemoryEdge[] },
): unknown[] {
  return [
    contextId,
    JSON.stringify(
      diff.upserts.map((edge) => ({
        a: edge.a,
        b: edge.b,
        types: edge.types,
        strength: edge.strength,
        similarity: edge.similarity ?? null,
      })),
    ),
    diff.deletes.map((edge) => edge.a),
    diff.deletes.map((edge) => edge.b),
  ];
}

/** diffEdgeChanges with every endpoint taken as a memory (checked by the write), or undefined when it throws. */
function tryDiff(
  contextId: string,
  changes: readonly EdgeChange[],
  stored: ReadonlyMap<string, MemoryEdge>,
): { upserts: MemoryEdge[]; deletes: MemoryEdge[] } | undefined {
  try {
    return diffEdgeChanges(
      contextId,
      changes,
      () => true,
      (a, b) => stored.get(pairKey(a, b)),
    );
  } catch {
    return undefined;
  }
}
