import type pg from 'pg';
import type { MemoryRecord } from '../../types/memory-record.ts';
import type { ForgetOptions, MemoryWrite, WriteOutcome } from '../archive-store-spec.ts';
import { eventTimeKey } from '../event-time-key.ts';
import { assertWrite } from '../store-rules.ts';
import { PostgresLexicalBatch } from './postgres-lexical-index.ts';
import { STORED_HASHES, WRITE_COUNTERS } from './postgres-literal-plans.ts';
import { writeHistoryAndTags } from './postgres-scopes.ts';
import { escapeLiteral, type PostgresSession, type Sql } from './postgres-session.ts';
import { bumpVectorVersion, type PostgresVectors } from './postgres-vectors.ts';

/**
 * The PostgreSQL store's memory writes and deletes: each one scoped write transaction that keeps the lexical
 * index, the relation journal, the history, the relation keys and the kept counters with the rows.
 */
export class PostgresMemoryWrites {
  constructor(
    private readonly session: PostgresSession,
    private readonly vectors: PostgresVectors,
  ) {}

  async writeMemories(contextId: string, writes: MemoryWrite[]): Promise<WriteOutcome> {
    for (const write of writes) assertWrite(contextId, write);
    const ids = [...new Set(writes.map((write) => write.record.id))];
    const literal = escapeLiteral(contextId);
    // Round trips are most of an add's cost: statements that do not depend on each other's results share
    // one statement (data-modifying CTEs; foreign keys are checked at the end of the statement), the first
    // one rides with BEGIN (primary-key reads: the literal plans as well as a parameter) and the counters
    // with COMMIT.
    const first = STORED_HASHES.call(literal, `ARRAY[${ids.map(escapeLiteral).join(', ')}]::text[]`);
    return this.session.scoped(
      contextId,
      'write',
      async (sql, tx) => {
        const stored = tx.first as pg.QueryResult<{ id: string; content_hash: string; record: string }>;
        // The batch is applied in order in memory first (an id written twice sees its first write), then
        // written with one statement per table.
        const storedIds = new Set(stored.rows.map((row) => row.id));
        const current = new Map(
          stored.rows.map((row) => [row.id, { hash: row.content_hash, record: row.record }]),
        );
        const outcome: WriteOutcome = { inserted: [], updated: [], unchanged: [] };
        const journal: { id: string; before: string | null }[] = [];
        const final = new Map<string, MemoryWrite>();
        const keyed = new Map<string, readonly string[]>();
        // The stored record each update replaces, for the memory's history (first write of the batch wins).
        const history = new Map<string, string>();
        for (const write of writes) {
          const { record, contentHash, keys } = write;
          const previous = current.get(record.id);
          if (previous?.hash === contentHash) {
            if (keys) keyed.set(record.id, keys);
            outcome.unchanged.push(record.id);
            continue;
          }
          journal.push({ id: record.id, before: previous ? previous.record : null });
          if (previous) {
            if (!history.has(record.id) && storedIds.has(record.id)) history.set(record.id, previous.record);
            outcome.updated.push(record.id);
          } else outcome.inserted.push(record.id);
          current.set(record.id, { hash: contentHash, record: JSON.stringify(record) });
          final.set(record.id, write);
          keyed.set(record.id, keys ?? []);
        }
        const lexical = new PostgresLexicalBatch(sql, contextId);
        if (final.size > 0) {
          const touched = [...final.keys()].filter((id) => storedIds.has(id));
          if (touched.length > 0) {
            // A word only the replaced version held (df 1 in the frozen snapshot) goes too, as in a delete:
            // otherwise it outlived a later delete of the memory (round 53). df 1 is also what the snapshot
            // assumes for a word it never saw, so no score changes.
            await sql.query(
              `WITH v AS (DELETE FROM views WHERE context_id = $1 AND memory_id = ANY($2::text[])),
             d AS (DELETE FROM semantic_df WHERE context_id = $1 AND df <= 1 AND term IN
               (SELECT term FROM semantic_postings WHERE context_id = $1 AND memory_id = ANY($2::text[])))
             DELETE FROM vectors WHERE context_id = $1 AND memory_id = ANY($2::text[])`,
              [contextId, touched],
            );
            await lexical.remove(touched);
          }
          // Keys of memories new to the store go in the records' statement (nothing to replace first).
          const fresh = [...keyed.keys()].every((id) => !storedIds.has(id) && final.has(id));
          const keyRows = fresh ? keyRowsOf(keyed, (id) => final.get(id)!.record.sequence) : undefined;
          for (const write of final.values()) lexical.add(write.views);
          const records = () => writeRecords(sql, contextId, [...final.values()], journal, current, keyRows);
          // Nothing replaced: the records' statement and the lexical one read nothing of each other, so they
          // are issued together (one round trip, pipelined), in this order (the documents need the records).
          if (touched.length === 0) await Promise.all([records(), lexical.flush()]);
          else await records().then(() => lexical.flush());
          if (fresh) keyed.clear();
        }
        await this.writeKeys(sql, contextId, keyed, current, storedIds);
        await writeHistoryAndTags(
          sql,
          contextId,
          history,
          [...final.values()].map((write) => write.record),
        );
        if (outcome.inserted.length > 0 || outcome.updated.length > 0) {
          tx.defer(
            WRITE_COUNTERS.call(
              literal,
              String(outcome.inserted.length),
              outcome.updated.length > 0 ? '1' : '0',
              escapeLiteral(new Date().toISOString()),
            ),
          );
        }
        return outcome;
      },
      { first },
    );
  }

  /** Replaces the relation keys of the given memories (sequence copied from their final records). */
  private async writeKeys(
    sql: Sql,
    contextId: string,
    keyed: Map<string, readonly string[]>,
    current: Map<string, { record: string }>,
    storedIds: ReadonlySet<string>,
  ): Promise<void> {
    if (keyed.size === 0) return;
    // A memory that was not stored before this call has no keys to drop.
    const existing = [...keyed.keys()].filter((id) => storedIds.has(id));
    if (existing.length > 0) {
      await sql.query('DELETE FROM memory_keys WHERE context_id = $1 AND memory_id = ANY($2::text[])', [
        contextId,
        existing,
      ]);
    }
    const { ids, keys, sequences } = keyRowsOf(
      keyed,
      (id) => (JSON.parse(current.get(id)!.record) as MemoryRecord).sequence,
    );
    if (ids.length === 0) return;
    await sql.query(
      `INSERT INTO memory_keys (context_id, memory_id, key, sequence)
       SELECT $1, * FROM unnest($2::text[], $3::text[], $4::bigint[]) ON CONFLICT DO NOTHING`,
      [contextId, ids, keys, sequences],
    );
  }

  async deleteMemory(contextId: string, id: string): Promise<boolean> {
    return this.session.scoped(contextId, 'write', async (sql) => {
      const removed = await sql.query<{ record: string }>(
        'SELECT record FROM memories WHERE context_id = $1 AND id = $2',
        [contextId, id],
      );
      const before = removed.rows[0];
      if (!before) return false;
      const batch = new PostgresLexicalBatch(sql, contextId);
      await batch.remove([id]);
      await batch.flush();
      // A word seen in this memory alone has df 1 in the frozen snapshot, which is also what it assumes for
      // a word it never saw: dropping those rows changes no score and keeps no forgotten word.
      // Its semantic postings and list go too (explicit since migration 8; the df subquery sees the
      // postings as they were before the statement). The snapshot row is written with them: its version
      // tells other processes' kept posting lists that they changed (postgres-postings-cache.ts).
      await sql.query(
        `WITH p AS (DELETE FROM semantic_postings WHERE context_id = $1 AND memory_id = $2),
         n AS (DELETE FROM semantic_neighbours WHERE context_id = $1 AND memory_id = $2),
         s AS (UPDATE semantic_snapshots SET changes = changes WHERE context_id = $1)
         DELETE FROM semantic_df WHERE context_id = $1 AND df <= 1 AND term IN
           (SELECT term FROM semantic_postings WHERE context_id = $1 AND memory_id = $2)`,
        [contextId, id],
      );
      // Views, vectors, keys, edges (their counts by trigger) and the semantic document cascade.
      await sql.query('DELETE FROM memories WHERE context_id = $1 AND id = $2', [contextId, id]);
      await sql.query('INSERT INTO relation_journal (context_id, memory_id, before) VALUES ($1, $2, $3)', [
        contextId,
        id,
        before.record,
      ]);
      await sql.query('UPDATE contexts SET memories = memories - 1, last_write = $2 WHERE id = $1', [
        contextId,
        new Date().toISOString(),
      ]);
      await bumpVectorVersion(sql, contextId);
      return true;
    });
  }

  /** One transaction under the context's lock (other contexts' writes go on meanwhile): one step. */
  async deleteContext(contextId: string, options: ForgetOptions = {}): Promise<boolean> {
    await options.started?.();
    return (options.schedule ?? ((step) => step()))(() => this.deleteContextNow(contextId));
  }

  private async deleteContextNow(contextId: string): Promise<boolean> {
    const deleted = await this.session.scoped(contextId, 'write', async (sql) => {
      // What a context owns, and how each goes (extend with every new per-context table): memories cascade
      // from contexts (views, vectors, keys, edges, lexical docs, semantic docs cascade from memories;
      // semantic_snapshots from contexts); the rest has no foreign key and is deleted explicitly here
      // (lexical postings and semantic postings / lists since migration 8). Meta keys are global and stay.
      // memory_versions and memory_tags cascade from memories; kind_counts has no foreign key.
      for (const table of [
        'relation_journal',
        'edge_counts',
        'kind_counts',
        'lex_fields',
        'lex_df',
        'lex_postings',
        'semantic_df',
        'semantic_postings',
        'semantic_neighbours',
      ]) {
        await sql.query(`DELETE FROM ${table} WHERE context_id = $1`, [contextId]);
      }
      const questions = await sql.query('DELETE FROM questions WHERE context_id = $1', [contextId]);
      const contexts = await sql.query('DELETE FROM contexts WHERE id = $1', [contextId]);
      return (questions.rowCount ?? 0) + (contexts.rowCount ?? 0) > 0;
    });
    this.vectors.forget(contextId);
    return deleted;
  }
}

/** memory_keys rows (a memory's distinct keys, with its sequence) of the keyed memories. */
function keyRowsOf(
  keyed: ReadonlyMap<string, readonly string[]>,
  sequenceOf: (id: string) => number,
): KeyRows {
  const rows: KeyRows = { ids: [], keys: [], sequences: [] };
  for (const [id, list] of keyed) {
    const sequence = sequenceOf(id);
    for (const key of new Set(list)) {
      rows.ids.push(id);
      rows.keys.push(key);
      rows.sequences.push(sequence);
    }
  }
  return rows;
}

interface KeyRows {
  ids: string[];
  keys: string[];
  sequences: number[];
}

/**
 * The journal entries, the records and their views of one write, in one statement; with `keys`, the
 * relation keys of memories new to the store too (their foreign key is checked at the statement's end).
 */
async function writeRecords(
  sql: Sql,
  contextId: string,
  writes: readonly MemoryWrite[],
  journal: readonly { id: string; before: string | null }[],
  current: ReadonlyMap<string, { record: string }>,
  keys?: KeyRows,
): Promise<void> {
  const view = {
    ids: [] as string[],
    positions: [] as number[],
    kinds: [] as string[],
    keys: [] as string[],
    texts: [] as string[],
    uris: [] as (string | null)[],
  };
  for (const write of writes) {
    write.views.forEach((v, position) => {
      view.ids.push(write.record.id);
      view.positions.push(position);
      view.kinds.push(v.kind);
      view.keys.push(v.key);
      view.texts.push(v.text);
      view.uris.push(v.uri ?? null);
    });
  }
  await sql.query(
    `WITH j AS (INSERT INTO relation_journal (context_id, memory_id, before)
       SELECT $1, m, b FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS x(m, b, n) ORDER BY n),
     m AS (INSERT INTO memories (context_id, id, sequence, kind, session_id, round_id, "timestamp", content_hash, record)
       SELECT $1, * FROM unnest($4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[], $9::text[],
         $10::text[], $11::text[])
       ON CONFLICT (context_id, id) DO UPDATE SET sequence = excluded.sequence, kind = excluded.kind,
         session_id = excluded.session_id, round_id = excluded.round_id, "timestamp" = excluded."timestamp",
         content_hash = excluded.content_hash, record = excluded.record),
     k AS (INSERT INTO memory_keys (context_id, memory_id, key, sequence)
       SELECT $1, * FROM unnest($18::text[], $19::text[], $20::bigint[]) ON CONFLICT DO NOTHING)
     INSERT INTO views (context_id, memory_id, position, kind, key, text, uri)
     SELECT $1, * FROM unnest($12::text[], $13::integer[], $14::text[], $15::text[], $16::text[], $17::text[])`,
    [
      contextId,
      journal.map((entry) => entry.id),
      journal.map((entry) => entry.before),
      writes.map((w) => w.record.id),
      writes.map((w) => w.record.sequence),
      writes.map((w) => w.record.kind),
      writes.map((w) => w.record.sessionId ?? null),
      writes.map((w) => w.record.roundId ?? null),
      writes.map((w) => (w.record.timestamp === undefined ? null : eventTimeKey(w.record.timestamp))),
      writes.map((w) => w.contentHash),
      writes.map((w) => current.get(w.record.id)!.record),
      view.ids,
      view.positions,
      view.kinds,
      view.keys,
      view.texts,
      view.uris,
      keys?.ids ?? [],
      keys?.keys ?? [],
      keys?.sequences ?? [],
    ],
  );
}
