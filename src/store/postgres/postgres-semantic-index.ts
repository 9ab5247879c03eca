import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import { noSnapshot } from '../memory-semantic-index.ts';
import {
  listThreshold,
  type SemanticDoc,
  type SemanticIndexStore,
  type SemanticNeighbour,
  type SemanticPosting,
  type SemanticSnapshot,
  type SemanticTermBound,
} from '../semantic-index-spec.ts';
import { compareStrings } from '../store-rules.ts';
import type { PostgresSession, Sql } from './postgres-session.ts';

/** The ratio stored for an open list (threshold 0), as in SQLite: read back as Infinity. */
const OPEN_RATIO = 1e308;

/**
 * The PostgreSQL semantic index: the tables and queries of the SQLite one (src/store/sqlite-semantic-index.ts)
 * with (term, weight desc) and (term, ratio) indexes, each method one scoped transaction (writes under the
 * context's write lock). Unknown memory ids fail their foreign key: INVALID_INPUT.
 */
export function createPostgresSemanticIndex(session: PostgresSession): SemanticIndexStore {
  const read = <T>(contextId: string, work: (sql: Sql) => Promise<T>) =>
    session.scoped(contextId, 'read', work);
  const write = <T>(contextId: string, work: (sql: Sql) => Promise<T>) =>
    session.scoped(contextId, 'write', work);

  return {
    async getSnapshot(contextId) {
      return read(contextId, (sql) => snapshotOf(sql, contextId));
    },

    async documentFrequencies(contextId, terms) {
      if (terms.length === 0) return new Map();
      return read(contextId, async (sql) => {
        const rows = await sql.query<{ term: string; df: number }>(
          'SELECT term, df FROM semantic_df WHERE context_id = $1 AND term = ANY($2::text[])',
          [contextId, [...new Set(terms)]],
        );
        const found = new Map(rows.rows.map((row) => [row.term, row.df]));
        const out = new Map<string, number>();
        for (const term of terms) if (found.has(term)) out.set(term, found.get(term)!);
        return out;
      });
    },

    async replaceAll(contextId, snapshot, docs) {
      await write(contextId, async (sql) => {
        for (const table of ['semantic_df', 'semantic_docs', 'semantic_postings', 'semantic_neighbours']) {
          await sql.query(`DELETE FROM ${table} WHERE context_id = $1`, [contextId]);
        }
        await sql.query(
          `INSERT INTO semantic_snapshots (context_id, space, documents, k, created_at, changes)
           VALUES ($1, $2, $3, $4, $5, 0) ON CONFLICT (context_id) DO UPDATE SET space = excluded.space,
           documents = excluded.documents, k = excluded.k, created_at = excluded.created_at, changes = 0`,
          [contextId, snapshot.space, snapshot.documents, snapshot.k, snapshot.createdAt],
        );
        if (snapshot.df.size > 0) {
          await sql.query(
            'INSERT INTO semantic_df (context_id, term, df) SELECT $1, * FROM unnest($2::text[], $3::bigint[])',
            [contextId, [...snapshot.df.keys()], [...snapshot.df.values()]],
          );
        }
        await insertDocs(sql, contextId, [...docs], snapshot.k);
      });
    },

    async getDocs(contextId, ids) {
      if (ids.length === 0) return [];
      return read(contextId, async (sql) => {
        // One statement (vectors and lists as arrays per document): the kNN update reads documents often.
        const rows = await sql.query<{
          memory_id: string;
          terms: string[];
          weights: number[];
          neighbour_ids: string[];
          scores: number[];
        }>(
          `SELECT d.memory_id,
             ARRAY(SELECT p.term FROM semantic_postings p
                   WHERE p.context_id = d.context_id AND p.memory_id = d.memory_id ORDER BY p.term) AS terms,
             ARRAY(SELECT p.weight FROM semantic_postings p
                   WHERE p.context_id = d.context_id AND p.memory_id = d.memory_id ORDER BY p.term) AS weights,
             ARRAY(SELECT n.neighbour_id FROM semantic_neighbours n
                   WHERE n.context_id = d.context_id AND n.memory_id = d.memory_id ORDER BY n.rank) AS neighbour_ids,
             ARRAY(SELECT n.score FROM semantic_neighbours n
                   WHERE n.context_id = d.context_id AND n.memory_id = d.memory_id ORDER BY n.rank) AS scores
           FROM semantic_docs d WHERE d.context_id = $1 AND d.memory_id = ANY($2::text[])`,
          [contextId, [...new Set(ids)]],
        );
        const byId = new Map(rows.rows.map((row) => [row.memory_id, row]));
        return ids.flatMap((memoryId): SemanticDoc[] => {
          const row = byId.get(memoryId);
          if (!row) return [];
          // Code-unit order, as the other backends (the "C" collation orders UTF-8 bytes).
          const order = row.terms
            .map((_, i) => i)
            .sort((x, y) => compareStrings(row.terms[x]!, row.terms[y]!));
          return [
            {
              memoryId,
              terms: order.map((i) => row.terms[i]!),
              weights: order.map((i) => row.weights[i]!),
              neighbours: row.neighbour_ids.map((id, i) => ({ memoryId: id, score: row.scores[i]! })),
            },
          ];
        });
      });
    },

    async writeDocs(contextId, change) {
      await write(contextId, async (sql) => {
        // The change count moves first: the same statement reads the snapshot's k and proves it exists.
        const changed = (change.put?.length ?? 0) + (change.remove?.length ?? 0);
        const snapshot = await sql.query<{ k: number }>(
          'UPDATE semantic_snapshots SET changes = changes + $2 WHERE context_id = $1 RETURNING k',
          [contextId, changed],
        );
        const k = snapshot.rows[0]?.k;
        if (k === undefined) throw noSnapshot(contextId);
        const dropped = [...(change.remove ?? []), ...(change.put ?? []).map((doc) => doc.memoryId)];
        if (dropped.length > 0) {
          await sql.query(
            `WITH d AS (DELETE FROM semantic_docs WHERE context_id = $1 AND memory_id = ANY($2::text[])),
             p AS (DELETE FROM semantic_postings WHERE context_id = $1 AND memory_id = ANY($2::text[]))
             DELETE FROM semantic_neighbours WHERE context_id = $1 AND memory_id = ANY($2::text[])`,
            [contextId, dropped],
          );
        }
        await insertDocs(sql, contextId, change.put ?? [], k);
        await writeLists(sql, contextId, change.lists ?? [], k);
      });
    },

    async termBounds(contextId, terms) {
      if (terms.length === 0) return new Map();
      return read(contextId, async (sql) => {
        const rows = await sql.query<{ term: string; w: number; r: number }>(
          `SELECT term, max(weight) AS w, max(ratio) AS r FROM semantic_postings
           WHERE context_id = $1 AND term = ANY($2::text[]) GROUP BY term`,
          [contextId, [...new Set(terms)]],
        );
        const found = new Map(rows.rows.map((row) => [row.term, row]));
        const out = new Map<string, SemanticTermBound>();
        for (const term of terms) {
          const row = found.get(term);
          if (!row) continue;
          out.set(term, {
            maxWeight: row.w,
            maxRatio: row.r >= OPEN_RATIO ? Number.POSITIVE_INFINITY : row.r,
          });
        }
        return out;
      });
    },

    async postings(contextId, term, filter) {
      return read(contextId, async (sql) => {
        const rows =
          'top' in filter
            ? await sql.query<{ memory_id: string; weight: number; ratio?: number }>(
                `SELECT memory_id, weight FROM semantic_postings WHERE context_id = $1 AND term = $2
                 ORDER BY weight DESC, memory_id LIMIT $3`,
                [contextId, term, Math.max(0, filter.top)],
              )
            : 'minWeight' in filter
              ? await sql.query<{ memory_id: string; weight: number; ratio?: number }>(
                  `SELECT memory_id, weight FROM semantic_postings WHERE context_id = $1 AND term = $2
                   AND weight >= $3 AND weight < $4 ORDER BY weight DESC, memory_id`,
                  [contextId, term, filter.minWeight, filter.below ?? Number.POSITIVE_INFINITY],
                )
              : await sql.query<{ memory_id: string; weight: number; ratio?: number }>(
                  `SELECT memory_id, weight, ratio FROM semantic_postings WHERE context_id = $1 AND term = $2
                   AND ratio >= $3 AND ratio < $4`,
                  [
                    contextId,
                    term,
                    Math.min(filter.minRatio, OPEN_RATIO),
                    filter.below === undefined || filter.below > OPEN_RATIO
                      ? Number.POSITIVE_INFINITY
                      : filter.below,
                  ],
                );
        return rows.rows.map((row): SemanticPosting => {
          const posting: SemanticPosting = { memoryId: row.memory_id, weight: row.weight };
          if (row.ratio !== undefined) {
            posting.ratio = row.ratio >= OPEN_RATIO ? Number.POSITIVE_INFINITY : row.ratio;
          }
          return posting;
        });
      });
    },

    async topPostings(contextId, terms, n) {
      const out = new Map<string, SemanticPosting[]>(terms.map((term) => [term, []]));
      if (terms.length === 0) return out;
      return read(contextId, async (sql) => {
        // The `top` read of postings() per term, all terms in one statement (each an index range scan).
        const rows = await sql.query<{ term: string; memory_id: string; weight: number }>(
          `SELECT t.term, p.memory_id, p.weight FROM unnest($2::text[]) WITH ORDINALITY AS t(term, n)
           CROSS JOIN LATERAL (SELECT s.memory_id, s.weight FROM semantic_postings s
             WHERE s.context_id = $1 AND s.term = t.term ORDER BY s.weight DESC, s.memory_id LIMIT $3) p
           ORDER BY t.n, p.weight DESC, p.memory_id`,
          [contextId, [...new Set(terms)], Math.max(0, n)],
        );
        for (const row of rows.rows) out.get(row.term)!.push({ memoryId: row.memory_id, weight: row.weight });
        return out;
      });
    },

    async thresholds(contextId) {
      return read(contextId, async (sql) => {
        const rows = await sql.query<{ memory_id: string; threshold: number }>(
          'SELECT memory_id, threshold FROM semantic_docs WHERE context_id = $1',
          [contextId],
        );
        return new Map(rows.rows.map((row) => [row.memory_id, row.threshold]));
      });
    },

    async referrers(contextId, ids) {
      if (ids.length === 0) return [];
      return read(contextId, async (sql) => {
        const rows = await sql.query<{ memory_id: string }>(
          `SELECT DISTINCT memory_id FROM semantic_neighbours
           WHERE context_id = $1 AND neighbour_id = ANY($2::text[])`,
          [contextId, [...new Set(ids)]],
        );
        return rows.rows.map((row) => row.memory_id).sort(compareStrings);
      });
    },
  };
}

async function snapshotOf(sql: Sql, contextId: string): Promise<SemanticSnapshot | undefined> {
  const rows = await sql.query<{
    space: string;
    documents: number;
    k: number;
    created_at: string;
    changes: number;
  }>('SELECT space, documents, k, created_at, changes FROM semantic_snapshots WHERE context_id = $1', [
    contextId,
  ]);
  const row = rows.rows[0];
  return row
    ? {
        space: row.space,
        documents: row.documents,
        k: row.k,
        createdAt: row.created_at,
        changes: row.changes,
      }
    : undefined;
}

async function insertDocs(
  sql: Sql,
  contextId: string,
  docs: readonly SemanticDoc[],
  k: number,
): Promise<void> {
  if (docs.length === 0) return;
  const thresholds = docs.map((doc) => listThreshold(doc.neighbours, k));
  const posting = {
    ids: [] as string[],
    terms: [] as string[],
    weights: [] as number[],
    ratios: [] as number[],
  };
  const list = {
    ids: [] as string[],
    ranks: [] as number[],
    neighbours: [] as string[],
    scores: [] as number[],
  };
  docs.forEach((doc, at) => {
    const threshold = thresholds[at]!;
    doc.terms.forEach((term, i) => {
      const weight = doc.weights[i]!;
      posting.ids.push(doc.memoryId);
      posting.terms.push(term);
      posting.weights.push(weight);
      posting.ratios.push(threshold > 0 ? weight / threshold : OPEN_RATIO);
    });
    doc.neighbours.forEach((n, rank) => {
      list.ids.push(doc.memoryId);
      list.ranks.push(rank);
      list.neighbours.push(n.memoryId);
      list.scores.push(n.score);
    });
  });
  // One statement for the three tables (foreign keys to memories are checked at its end).
  await sql.query(
    `WITH d AS (INSERT INTO semantic_docs (context_id, memory_id, threshold)
       SELECT $1, * FROM unnest($2::text[], $3::float8[])),
     p AS (INSERT INTO semantic_postings (context_id, memory_id, term, weight, ratio)
       SELECT $1, * FROM unnest($4::text[], $5::text[], $6::float8[], $7::float8[]))
     INSERT INTO semantic_neighbours (context_id, memory_id, rank, neighbour_id, score)
     SELECT $1, * FROM unnest($8::text[], $9::integer[], $10::text[], $11::float8[])`,
    [
      contextId,
      docs.map((doc) => doc.memoryId),
      thresholds,
      posting.ids,
      posting.terms,
      posting.weights,
      posting.ratios,
      list.ids,
      list.ranks,
      list.neighbours,
      list.scores,
    ],
  );
}

async function insertNeighbours(
  sql: Sql,
  contextId: string,
  list: { ids: string[]; ranks: number[]; neighbours: string[]; scores: number[] },
): Promise<void> {
  if (list.ids.length === 0) return;
  await sql.query(
    `INSERT INTO semantic_neighbours (context_id, memory_id, rank, neighbour_id, score)
     SELECT $1, * FROM unnest($2::text[], $3::integer[], $4::text[], $5::float8[])`,
    [contextId, list.ids, list.ranks, list.neighbours, list.scores],
  );
}

/**
 * Replaces whole lists (the last one given per memory wins) in four statements whatever their number: the
 * documents must exist, their neighbours are rewritten, and where a list's entry bound moved, its threshold
 * and the ratios of its postings follow.
 */
async function writeLists(
  sql: Sql,
  contextId: string,
  lists: ReadonlyArray<{ memoryId: string; neighbours: readonly SemanticNeighbour[] }>,
  k: number,
): Promise<void> {
  if (lists.length === 0) return;
  const last = new Map(lists.map((list) => [list.memoryId, list.neighbours]));
  const ids = [...last.keys()];
  const docs = await sql.query<{ memory_id: string; threshold: number }>(
    'SELECT memory_id, threshold FROM semantic_docs WHERE context_id = $1 AND memory_id = ANY($2::text[])',
    [contextId, ids],
  );
  const before = new Map(docs.rows.map((row) => [row.memory_id, row.threshold]));
  const missing = ids.find((id) => !before.has(id));
  if (missing !== undefined) {
    throw new GraphmemixError('INVALID_INPUT', `no semantic document for "${missing}"`);
  }
  await sql.query('DELETE FROM semantic_neighbours WHERE context_id = $1 AND memory_id = ANY($2::text[])', [
    contextId,
    ids,
  ]);
  const list = {
    ids: [] as string[],
    ranks: [] as number[],
    neighbours: [] as string[],
    scores: [] as number[],
  };
  const moved = { ids: [] as string[], thresholds: [] as number[] };
  for (const [memoryId, neighbours] of last) {
    neighbours.forEach((n, rank) => {
      list.ids.push(memoryId);
      list.ranks.push(rank);
      list.neighbours.push(n.memoryId);
      list.scores.push(n.score);
    });
    const threshold = listThreshold(neighbours, k);
    if (before.get(memoryId) !== threshold) {
      moved.ids.push(memoryId);
      moved.thresholds.push(threshold);
    }
  }
  await insertNeighbours(sql, contextId, list);
  if (moved.ids.length === 0) return;
  await sql.query(
    `WITH moved AS (SELECT * FROM unnest($2::text[], $3::float8[]) AS m(memory_id, threshold)),
     docs AS (UPDATE semantic_docs d SET threshold = m.threshold FROM moved m
              WHERE d.context_id = $1 AND d.memory_id = m.memory_id)
     UPDATE semantic_postings p
     SET ratio = CASE WHEN m.threshold > 0 THEN p.weight / m.threshold ELSE $4::float8 END
     FROM moved m WHERE p.context_id = $1 AND p.memory_id = m.memory_id`,
    [contextId, moved.ids, moved.thresholds, OPEN_RATIO],
  );
}
