import type pg from 'pg';
import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import { noSnapshot } from '../memory-semantic-index.ts';
import {
  listThreshold,
  type SemanticDoc,
  type SemanticIndexStore,
  type SemanticNeighbour,
  type SemanticPosting,
  type SemanticSnapshot,
  type SemanticSnapshotInput,
} from '../semantic-index-spec.ts';
import { compareStrings } from '../store-rules.ts';
import { PostgresPostingsCache } from './postgres-postings-cache.ts';
import { keptSemanticReads, OPEN_RATIO, RATIO } from './postgres-semantic-reads.ts';
import type { PostgresSession, Sql } from './postgres-session.ts';
import { snapshotVersion } from './postgres-unit-prefetch.ts';

/** Documents per statement of replaceAll (~70 postings and 8 list pairs each: ~0.1 s of encoding a statement). */
export const REPLACE_BATCH_DOCS = 2_000;

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
  const kept = new PostgresPostingsCache();
  const reads = keptSemanticReads(session, kept);

  return {
    documentFrequencies: reads.documentFrequencies,
    termBounds: reads.termBounds,
    topPostings: reads.topPostings,

    async getSnapshot(contextId) {
      // Read ahead by the unit of work (UnitPrefetch), kept current by writeDocs.
      const ahead = (await session.readAhead(contextId))?.snapshot;
      if (ahead !== undefined) return ahead === null ? undefined : { ...ahead };
      return read(contextId, (sql) => snapshotOf(sql, contextId));
    },

    async replaceAll(contextId, snapshot, docs) {
      await write(contextId, async (sql) => {
        for (const table of ['semantic_df', 'semantic_docs', 'semantic_postings', 'semantic_neighbours']) {
          await sql.query(`DELETE FROM ${table} WHERE context_id = $1`, [contextId]);
        }
        await upsertSnapshotRow(sql, contextId, snapshot);
        await insertDf(sql, contextId, snapshot.df);
        // In statements of REPLACE_BATCH_DOCS documents, as they are iterated (a compaction builds them then): one
        // statement for a whole context held every document and its arrays at once (peak RSS 2.46 GB at 300k) and kept the
        // thread from its other users' writes while it encoded them (9.5 s at 100k through the write worker).
        let batch: SemanticDoc[] = [];
        for (const doc of docs) {
          batch.push(doc);
          if (batch.length < REPLACE_BATCH_DOCS) continue;
          await insertDocs(sql, contextId, batch, snapshot.k);
          batch = [];
        }
        await insertDocs(sql, contextId, batch, snapshot.k);
      });
    },

    async replaceSnapshot(contextId, snapshot) {
      await write(contextId, async (sql) => {
        await sql.query('DELETE FROM semantic_df WHERE context_id = $1', [contextId]);
        await upsertSnapshotRow(sql, contextId, snapshot);
        await insertDf(sql, contextId, snapshot.df);
      });
    },

    async getDocs(contextId, ids) {
      if (ids.length === 0) return [];
      return read(contextId, async (sql) => {
        // One row per document (migration 6): its vector and list as JSON, not a row per term and entry.
        const rows = await sql.query<{ memory_id: string; vector: string; list: string }>(
          'SELECT memory_id, vector, list FROM semantic_docs WHERE context_id = $1 AND memory_id = ANY($2::text[])',
          [contextId, [...new Set(ids)]],
        );
        const byId = new Map(rows.rows.map((row) => [row.memory_id, row]));
        return ids.flatMap((memoryId): SemanticDoc[] => {
          const row = byId.get(memoryId);
          if (!row) return [];
          const [terms, weights] = JSON.parse(row.vector) as [string[], number[]];
          const [neighbourIds, scores] = JSON.parse(row.list) as [string[], number[]];
          return [
            {
              memoryId,
              ...codeUnitOrder(terms, weights),
              neighbours: neighbourIds.map((id, i) => ({ memoryId: id, score: scores[i]! })),
            },
          ];
        });
      });
    },

    async writeDocs(contextId, change) {
      const prefetch = session.prefetchFor(contextId);
      const known = prefetch?.snapshot;
      const written = kept.writing(contextId, prefetch);
      let replaced = false;
      await session
        .scoped(
          contextId,
          'write',
          async (sql) => {
            // The change count moves first: the same statement reads the snapshot's k (proving it exists) and
            // drops the removed and replaced documents.
            const changed = (change.put?.length ?? 0) + (change.remove?.length ?? 0);
            const dropped = [...(change.remove ?? []), ...(change.put ?? []).map((doc) => doc.memoryId)];
            // The row's new xmin is the postings' version (UnitPrefetch.snapshotVersion); `dropped` counts the
            // documents removed or replaced (their postings go: kept lists cannot follow).
            const first = sql.query<Written>(
              `WITH s AS (UPDATE semantic_snapshots SET changes = changes + $2 WHERE context_id = $1
             RETURNING k, changes, xmin::text AS xmin),
           d AS (DELETE FROM semantic_docs WHERE context_id = $1 AND memory_id = ANY($3::text[]) RETURNING 1),
           p AS (DELETE FROM semantic_postings WHERE context_id = $1 AND memory_id = ANY($3::text[])),
           n AS (DELETE FROM semantic_neighbours WHERE context_id = $1 AND memory_id = ANY($3::text[]))
           SELECT k, changes, xmin, (SELECT count(*) FROM d)::integer AS dropped FROM s`,
              [contextId, changed, dropped],
            );
            let snapshot: pg.QueryResult<Written>;
            if (known) {
              // k is the unit's read-ahead snapshot's (exact under the unit's lock): the three statements are
              // issued together, one round trip where the unit pipelines them, and run in this order.
              [snapshot] = await Promise.all([
                first,
                insertDocs(sql, contextId, change.put ?? [], known.k),
                writeLists(sql, contextId, change.lists ?? [], known.k),
              ]);
              if (snapshot.rows[0]?.k !== known.k) throw noSnapshot(contextId);
            } else {
              snapshot = await first;
              const k = snapshot.rows[0]?.k;
              if (k === undefined) throw noSnapshot(contextId);
              await insertDocs(sql, contextId, change.put ?? [], k);
              await writeLists(sql, contextId, change.lists ?? [], k);
            }
            const row = snapshot.rows[0]!;
            replaced = row.dropped > 0;
            // The unit's read-ahead snapshot stays exact: only its change count (and row version) moved.
            if (prefetch && known) {
              prefetch.snapshot = { ...known, changes: row.changes };
              prefetch.snapshotVersion = snapshotVersion(row.xmin, row.changes, known.createdAt);
            } else if (prefetch) {
              prefetch.snapshot = undefined;
              prefetch.snapshotVersion = undefined;
            }
          },
          // Semantic rows only (the snapshot is kept above): nothing else a unit reads ahead, and no edge.
          { keepsPrefetch: true, keepsEdges: true },
        )
        .then(
          () => written({ put: change.put ?? [], replaced }),
          (error: unknown) => {
            written();
            throw error;
          },
        );
    },

    async postings(contextId, term, filter) {
      if (!('minRatio' in filter)) {
        return reads.readWindow(
          contextId,
          'top' in filter
            ? {
                term,
                min: Number.NEGATIVE_INFINITY,
                below: Number.POSITIVE_INFINITY,
                top: Math.max(0, filter.top),
              }
            : { term, min: filter.minWeight, below: filter.below ?? Number.POSITIVE_INFINITY, top: null },
        );
      }
      return read(contextId, async (sql) => {
        // Ratios from the documents' thresholds (migration 6), as SQLite since its migration 9.
        const rows = await sql.query<{ memory_id: string; weight: number; ratio: number }>(
          `SELECT memory_id, weight, ratio FROM (SELECT p.memory_id, p.weight, ${RATIO} AS ratio
           FROM semantic_postings p JOIN semantic_docs d ON d.context_id = p.context_id AND d.memory_id = p.memory_id
           WHERE p.context_id = $1 AND p.term = $2) r WHERE ratio >= $3 AND ratio < $4`,
          [
            contextId,
            term,
            Math.min(filter.minRatio, OPEN_RATIO),
            filter.below === undefined || filter.below > OPEN_RATIO ? Number.POSITIVE_INFINITY : filter.below,
          ],
        );
        return rows.rows.map(
          (row): SemanticPosting => ({
            memoryId: row.memory_id,
            weight: row.weight,
            ratio: row.ratio >= OPEN_RATIO ? Number.POSITIVE_INFINITY : row.ratio,
          }),
        );
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
  const posting = { ids: [] as string[], terms: [] as string[], weights: [] as number[] };
  const pairs = { ids: [] as string[], neighbours: [] as string[] };
  for (const doc of docs) {
    doc.terms.forEach((term, i) => {
      posting.ids.push(doc.memoryId);
      posting.terms.push(term);
      posting.weights.push(doc.weights[i]!);
    });
    for (const n of doc.neighbours) {
      pairs.ids.push(doc.memoryId);
      pairs.neighbours.push(n.memoryId);
    }
  }
  // One statement for the three tables (foreign keys to memories are checked at its end). The posting
  // ratio column is unmaintained since migration 6 (computed from the threshold when read); the reverse
  // index holds pairs since migration 9 (a list names a neighbour once).
  await sql.query(
    `WITH d AS (INSERT INTO semantic_docs (context_id, memory_id, threshold, vector, list)
       SELECT $1, * FROM unnest($2::text[], $3::float8[], $4::text[], $5::text[])),
     p AS (INSERT INTO semantic_postings (context_id, memory_id, term, weight, ratio)
       SELECT $1, m, t, w, 0 FROM unnest($6::text[], $7::text[], $8::float8[]) AS x(m, t, w))
     INSERT INTO semantic_neighbours (context_id, memory_id, neighbour_id)
     SELECT $1, * FROM unnest($9::text[], $10::text[])`,
    [
      contextId,
      docs.map((doc) => doc.memoryId),
      docs.map((doc) => listThreshold(doc.neighbours, k)),
      docs.map((doc) => JSON.stringify([doc.terms, doc.weights])),
      docs.map((doc) => listJson(doc.neighbours)),
      posting.ids,
      posting.terms,
      posting.weights,
      pairs.ids,
      pairs.neighbours,
    ],
  );
}

/** A list as stored in semantic_docs.list: [neighbour ids, scores]. */
function listJson(neighbours: readonly SemanticNeighbour[]): string {
  return JSON.stringify([neighbours.map((n) => n.memoryId), neighbours.map((n) => n.score)]);
}

/** Terms in code-unit order with their weights (stored in that order; kept whatever the writer gave). */
function codeUnitOrder(terms: string[], weights: number[]): { terms: string[]; weights: number[] } {
  let sorted = true;
  for (let i = 1; i < terms.length && sorted; i++) sorted = compareStrings(terms[i - 1]!, terms[i]!) < 0;
  if (sorted) return { terms, weights };
  const order = terms.map((_, i) => i).sort((x, y) => compareStrings(terms[x]!, terms[y]!));
  return { terms: order.map((i) => terms[i]!), weights: order.map((i) => weights[i]!) };
}

/**
 * Replaces whole lists (the last one given per memory wins) in ONE statement whatever their number: each
 * document's row takes the list and its entry bound (ratios follow from it when read), and the reverse
 * index (pairs, migration 9) loses the pairs a list dropped and gains the ones it added; a pair that stays
 * is left as it is (no new row version, no index entries), so an entry entering a list writes one row and
 * the entry it pushed out deletes one. The deletes and inserts touch disjoint rows: one statement. Both are
 * set differences against the lists' stored pairs, read once: inserting every wanted pair ON CONFLICT DO
 * NOTHING paid the conflict check for the ~7 in 8 that stay (~0.4 ms of server time per add-1 at 10k).
 * A list for a memory without a document is INVALID_INPUT (the caller's transaction rolls back).
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
  const pairs = { ids: [] as string[], neighbours: [] as string[] };
  for (const [memoryId, neighbours] of last) {
    for (const n of neighbours) {
      pairs.ids.push(memoryId);
      pairs.neighbours.push(n.memoryId);
    }
  }
  const updated = await sql.query<{ memory_id: string }>(
    `WITH docs AS (UPDATE semantic_docs d SET threshold = x.threshold, list = x.list
       FROM unnest($2::text[], $3::float8[], $4::text[]) AS x(memory_id, threshold, list)
       WHERE d.context_id = $1 AND d.memory_id = x.memory_id RETURNING d.memory_id),
     wanted AS (SELECT * FROM unnest($5::text[], $6::text[]) AS w(memory_id, neighbour_id)),
     stored AS (SELECT memory_id, neighbour_id FROM semantic_neighbours
       WHERE context_id = $1 AND memory_id = ANY($2::text[])),
     gone AS (DELETE FROM semantic_neighbours n
       USING (SELECT memory_id, neighbour_id FROM stored EXCEPT SELECT memory_id, neighbour_id FROM wanted) g
       WHERE n.context_id = $1 AND n.memory_id = g.memory_id AND n.neighbour_id = g.neighbour_id),
     added AS (INSERT INTO semantic_neighbours (context_id, memory_id, neighbour_id)
       SELECT $1, memory_id, neighbour_id
       FROM (SELECT memory_id, neighbour_id FROM wanted EXCEPT SELECT memory_id, neighbour_id FROM stored) a
       ON CONFLICT DO NOTHING)
     SELECT memory_id FROM docs`,
    [
      contextId,
      ids,
      ids.map((id) => listThreshold(last.get(id)!, k)),
      ids.map((id) => listJson(last.get(id)!)),
      pairs.ids,
      pairs.neighbours,
    ],
  );
  if (updated.rows.length < ids.length) {
    const found = new Set(updated.rows.map((row) => row.memory_id));
    const missing = ids.find((id) => !found.has(id));
    throw new GraphmemixError('INVALID_INPUT', `no semantic document for "${missing}"`);
  }
}

/** writeDocs' first statement's row. */
interface Written {
  k: number;
  changes: number;
  xmin: string;
  dropped: number;
}

/** The snapshot row of a compaction (`changes` back to 0). */
async function upsertSnapshotRow(
  sql: Sql,
  contextId: string,
  snapshot: SemanticSnapshotInput,
): Promise<void> {
  await sql.query(
    `INSERT INTO semantic_snapshots (context_id, space, documents, k, created_at, changes)
     VALUES ($1, $2, $3, $4, $5, 0) ON CONFLICT (context_id) DO UPDATE SET space = excluded.space,
     documents = excluded.documents, k = excluded.k, created_at = excluded.created_at, changes = 0`,
    [contextId, snapshot.space, snapshot.documents, snapshot.k, snapshot.createdAt],
  );
}

/** A snapshot's document frequencies, one statement. */
async function insertDf(sql: Sql, contextId: string, df: ReadonlyMap<string, number>): Promise<void> {
  if (df.size === 0) return;
  await sql.query(
    'INSERT INTO semantic_df (context_id, term, df) SELECT $1, * FROM unnest($2::text[], $3::bigint[])',
    [contextId, [...df.keys()], [...df.values()]],
  );
}
