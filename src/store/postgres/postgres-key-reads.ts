import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import type { MemoryRecord } from '../../types/memory-record.ts';
import { type KeyedRecord, MEDIA_PENDING_KEY, type PendingMediaRef } from '../archive-store-spec.ts';
import { BatchedReads } from './postgres-batched-reads.ts';
import type { PostgresSession, Sql } from './postgres-session.ts';

/** The PostgreSQL store's reads by relation lookup key (memory_keys), pending media among them. */
export class PostgresKeyReads {
  /** adjacentByKey reads issued together run as one statement (a key chain's update asks several). */
  private readonly adjacent: BatchedReads<AdjacentRead, MemoryRecord[]>;
  /** findByKeys of one key, issued together: one statement (the supersedes listers of every dirty memory). */
  private readonly keyGroups: BatchedReads<{ key: string; limit: number | null }, MemoryRecord[]>;

  constructor(private readonly session: PostgresSession) {
    this.adjacent = new BatchedReads(session, adjacentRecords);
    this.keyGroups = new BatchedReads(session, keyGroupRecords);
  }

  /** Cross-context on purpose (the media queue's recovery at open): the explicit allContexts path. */
  async listPendingMedia(options: { limit: number; after?: PendingMediaRef }): Promise<PendingMediaRef[]> {
    return this.session.allContexts(async (sql) => {
      // The literal matches the partial index memory_keys_media_pending (version 5).
      const rows = await sql.query<PendingMediaRef>(
        `SELECT context_id AS "contextId", memory_id AS id FROM memory_keys
         WHERE key = '${MEDIA_PENDING_KEY}' AND (context_id, memory_id) > ($1, $2)
         ORDER BY context_id, memory_id LIMIT $3`,
        [options.after?.contextId ?? '', options.after?.id ?? '', options.limit],
      );
      return rows.rows.map((row) => ({ contextId: row.contextId, id: row.id }));
    });
  }

  async heldMediaKeys(keys: readonly string[]): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    return this.session.allContexts(async (sql) => {
      // The range literals match the partial index memory_keys_media_refs (version 13).
      const rows = await sql.query<{ key: string }>(
        `SELECT DISTINCT key FROM memory_keys
         WHERE key = ANY($1::text[]) AND key >= 'media:' AND key < 'media;'`,
        [[...new Set(keys)]],
      );
      return new Set(rows.rows.map((row) => row.key));
    });
  }

  async findByKeys(
    contextId: string,
    keys: readonly string[],
    options: { limit?: number } = {},
  ): Promise<MemoryRecord[]> {
    if (keys.length === 0) return [];
    const unique = [...new Set(keys)];
    // One key (what the relation updates ask, often many at once): batched with the others issued together.
    if (unique.length === 1) {
      return this.keyGroups.read(contextId, { key: unique[0]!, limit: options.limit ?? null });
    }
    const rows = await this.session.scoped(contextId, 'read', (sql) =>
      sql.query<{ record: string }>(FIND_BY_KEYS_SQL, [contextId, unique, options.limit ?? null]),
    );
    return rows.rows.map((row) => JSON.parse(row.record) as MemoryRecord);
  }

  async adjacentByKey(
    contextId: string,
    key: string,
    position: { sequence: number; id: string },
    direction: 'before' | 'after',
  ): Promise<MemoryRecord | undefined> {
    const [record] = await this.adjacent.read(contextId, {
      key,
      sequence: position.sequence,
      id: position.id,
      direction,
      limit: 1,
    });
    return record;
  }

  async adjacentRunByKey(
    contextId: string,
    key: string,
    position: { sequence: number; id: string },
    direction: 'before' | 'after',
    limit: number,
  ): Promise<MemoryRecord[]> {
    if (!Number.isInteger(limit) || limit < 0) {
      throw new GraphmemixError('INVALID_INPUT', 'limit must be a non-negative integer', {
        location: { field: 'limit' },
      });
    }
    if (limit === 0) return [];
    return this.adjacent.read(contextId, {
      key,
      sequence: position.sequence,
      id: position.id,
      direction,
      limit,
    });
  }

  async findKeyRange(
    contextId: string,
    from: string,
    to: string,
    options: { limit?: number } = {},
  ): Promise<KeyedRecord[]> {
    const rows = await this.session.scoped(contextId, 'read', (sql) =>
      sql.query<{ key: string; record: string }>(
        `SELECT k.key, m.record FROM memory_keys k JOIN memories m ON m.context_id = k.context_id AND m.id = k.memory_id
         WHERE k.context_id = $1 AND k.key >= $2 AND k.key <= $3 ORDER BY k.key, k.memory_id LIMIT $4`,
        [contextId, from, to, options.limit ?? null],
      ),
    );
    return rows.rows.map((row) => ({ key: row.key, record: JSON.parse(row.record) as MemoryRecord }));
  }
}

/**
 * findByKeys: $1 context, $2 keys, $3 limit (null: all). Shaped so that only the key index can drive it: the
 * key rows come first (a key row's sequence is its memory's, writeKeys), then each record by primary key in
 * a LATERAL subquery that its LIMIT keeps from being flattened into a join. The former
 * `memories WHERE id IN (keys) ORDER BY sequence LIMIT $3` let the planner walk the whole context in sequence
 * order (the LIMIT looks cheap), checking each memory's keys: ~1 s per call at 1,000 memories in a context
 * new since the last ANALYZE, the bulk-ingest stall of issue #11. Exported for the test of its plan
 * (test/store/postgres-specifics.test.ts).
 */
export const FIND_BY_KEYS_SQL = `SELECT m.record FROM
    (SELECT DISTINCT ON (k.sequence, k.memory_id) k.memory_id, k.sequence FROM memory_keys k
     WHERE k.context_id = $1 AND k.key = ANY($2::text[]) ORDER BY k.sequence, k.memory_id LIMIT $3) hit
  CROSS JOIN LATERAL
    (SELECT record, sequence, id FROM memories WHERE context_id = $1 AND id = hit.memory_id LIMIT 1) m
  ORDER BY m.sequence, m.id`;

interface AdjacentRead {
  key: string;
  sequence: number;
  id: string;
  direction: 'before' | 'after';
  limit: number;
}

/**
 * The `limit` records before / after each (sequence, id) place in its key's chain, nearest first, one
 * statement for all: per request one of two index range scans on memory_keys (context, key, sequence,
 * memory id) with its LIMIT (the other branch is switched off by a one-time filter), then each record by
 * primary key.
 */
async function adjacentRecords(
  sql: Sql,
  contextId: string,
  reads: readonly AdjacentRead[],
): Promise<MemoryRecord[][]> {
  const rows = await sql.query<{ n: number; record: string }>(
    `SELECT r.n, m.record
     FROM unnest($2::text[], $3::bigint[], $4::text[], $5::boolean[], $6::bigint[])
       WITH ORDINALITY AS r(key, seq, id, before, lim, n)
     CROSS JOIN LATERAL (
       (SELECT b.memory_id, row_number() OVER (ORDER BY b.sequence DESC, b.memory_id DESC) AS step
        FROM (SELECT k.memory_id, k.sequence FROM memory_keys k
              WHERE r.before AND k.context_id = $1 AND k.key = r.key
                AND (k.sequence, k.memory_id) < (r.seq, r.id COLLATE "C")
              ORDER BY k.sequence DESC, k.memory_id DESC LIMIT r.lim) b)
       UNION ALL
       (SELECT f.memory_id, row_number() OVER (ORDER BY f.sequence, f.memory_id) AS step
        FROM (SELECT k.memory_id, k.sequence FROM memory_keys k
              WHERE NOT r.before AND k.context_id = $1 AND k.key = r.key
                AND (k.sequence, k.memory_id) > (r.seq, r.id COLLATE "C")
              ORDER BY k.sequence, k.memory_id LIMIT r.lim) f)) a
     JOIN memories m ON m.context_id = $1 AND m.id = a.memory_id
     ORDER BY r.n, a.step`,
    [
      contextId,
      reads.map((r) => r.key),
      reads.map((r) => r.sequence),
      reads.map((r) => r.id),
      reads.map((r) => r.direction === 'before'),
      reads.map((r) => r.limit),
    ],
  );
  const out: MemoryRecord[][] = reads.map(() => []);
  for (const row of rows.rows) out[row.n - 1]!.push(JSON.parse(row.record) as MemoryRecord);
  return out;
}

/**
 * findByKeys of one key per request, one statement for all: each request is the key index's range scan in
 * (sequence, memory id) order with its LIMIT (one key: no duplicates to remove), then each record by primary
 * key; rows come back grouped by request in (sequence, id) order, as FIND_BY_KEYS_SQL returns them.
 */
async function keyGroupRecords(
  sql: Sql,
  contextId: string,
  reads: ReadonlyArray<{ key: string; limit: number | null }>,
): Promise<MemoryRecord[][]> {
  const rows = await sql.query<{ n: number; record: string }>(
    `SELECT r.n, m.record
     FROM unnest($2::text[], $3::bigint[]) WITH ORDINALITY AS r(key, lim, n)
     CROSS JOIN LATERAL (SELECT k.memory_id FROM memory_keys k WHERE k.context_id = $1 AND k.key = r.key
       ORDER BY k.sequence, k.memory_id LIMIT r.lim) hit
     CROSS JOIN LATERAL (SELECT record, sequence, id FROM memories WHERE context_id = $1 AND id = hit.memory_id
       LIMIT 1) m
     ORDER BY r.n, m.sequence, m.id`,
    [contextId, reads.map((r) => r.key), reads.map((r) => r.limit)],
  );
  const out: MemoryRecord[][] = reads.map(() => []);
  for (const row of rows.rows) out[row.n - 1]!.push(JSON.parse(row.record) as MemoryRecord);
  return out;
}
