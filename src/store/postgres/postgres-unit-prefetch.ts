import type pg from 'pg';
import type { MemoryRecord } from '../../types/memory-record.ts';
import type { RelationWork } from '../archive-store-spec.ts';
import type { SemanticSnapshot } from '../semantic-index-spec.ts';
import { literalPlan } from './postgres-literal-plans.ts';

/** Journal entries (with their memories' current records) read ahead: an add-1's journal is one entry. */
export const PREFETCH_JOURNAL = 64;
/** Meta keys remembered per context, and contexts remembered, for the prefetch (both bounded). */
const MAX_KEYS_PER_CONTEXT = 8;
const MAX_CONTEXTS = 4096;

/**
 * What a unit of work of one context (an incremental relation update) reads before it writes, fetched by the
 * unit's first round trip: the statement rides in the simple query that begins the transaction and takes the
 * context's lock, so it costs no round trip of its own. An add-1's update read these with one statement each
 * (journal status, three meta keys, the memory count, the journal page, the journaled records, the semantic
 * snapshot): eight round trips of ~49.
 *
 * Exactness: the statement runs after the lock is taken, in the unit's transaction, so every value is what
 * the same read would return at that point. A value is served only while nothing in the unit has written
 * what it reflects: a scoped write invalidates the context parts (PostgresSession.scoped, unless the write
 * declares it leaves them alone, like edge changes), setMeta replaces its key's value, writeDocs its snapshot.
 * Meta keys are global rows written by other processes too; READ COMMITTED promises no later snapshot to a
 * later statement, so serving the value read at the start of the transaction is a valid outcome.
 */
export class UnitPrefetch {
  /** undefined: not read ahead (or invalidated): the store reads it. */
  journalStatus: { pending: number; lastSeq?: number } | undefined;
  memories: number | undefined;
  /** The whole journal (pending <= PREFETCH_JOURNAL) with each memory's current record (null: gone). */
  journal: { entries: RelationWork[]; records: Map<string, MemoryRecord | null> } | undefined;
  /** null: the context has no snapshot. */
  snapshot: SemanticSnapshot | null | undefined;
  /**
   * The version of the context's semantic postings as this unit sees them: the snapshot row's xmin, changes
   * and creation time. Every statement that changes a context's postings writes (or deletes) that row in
   * the same transaction, so an equal version means unchanged postings (PostgresPostingsCache). Kept with
   * `snapshot` (writeDocs sets the version its own write made); undefined once the unit wrote otherwise.
   */
  snapshotVersion: string | undefined;
  /**
   * A read unit's (PostgresSession.readUnit): the context's read generation in the unit's snapshot (the
   * contexts row's xmin and generation; undefined: no such context). Equal generations mean equal memories
   * and edges (schema migration 10).
   */
  generation: string | undefined;
  /** Meta values read ahead (undefined value: the key has no row). */
  readonly meta = new Map<string, unknown>();
  private readonly endHooks: Array<(committed: boolean) => void> = [];

  /** A scoped write in the unit: every context part may have changed (meta rows are not context rows). */
  invalidateContext(): void {
    this.journalStatus = undefined;
    this.memories = undefined;
    this.journal = undefined;
    this.snapshot = undefined;
    this.snapshotVersion = undefined;
  }

  /** Runs `hook` once when the unit ends: committed, or rolled back / failed (false). */
  onEnd(hook: (committed: boolean) => void): void {
    this.endHooks.push(hook);
  }

  /** The unit ended (UnitOfWork): runs the end hooks. */
  ended(committed: boolean): void {
    for (const hook of this.endHooks.splice(0)) hook(committed);
  }
}

/** A semantic snapshot row's version (UnitPrefetch.snapshotVersion). */
export function snapshotVersion(xmin: string, changes: number, createdAt: string): string {
  return `${xmin}/${changes}/${createdAt}`;
}

/** The read-ahead statement: $1 the context, $2 the meta keys. One row; parsed by `parsePrefetch`. */
const PREFETCH = literalPlan(
  'gmx_l_unit_prefetch',
  ['text', 'text[]'],
  `SELECT
  (SELECT count(*) FROM relation_journal WHERE context_id = $1) AS journal_n,
  (SELECT max(seq) FROM relation_journal WHERE context_id = $1) AS journal_last,
  (SELECT memories FROM contexts WHERE id = $1) AS memories,
  (SELECT json_agg(json_build_array(j.seq, j.memory_id, j.before, m.record) ORDER BY j.seq)
   FROM (SELECT seq, memory_id, before FROM relation_journal WHERE context_id = $1
         ORDER BY seq LIMIT ${PREFETCH_JOURNAL}) j
   LEFT JOIN memories m ON m.context_id = $1 AND m.id = j.memory_id) AS journal,
  (SELECT json_build_array(space, documents, k, created_at, changes, xmin::text) FROM semantic_snapshots
   WHERE context_id = $1) AS snapshot,
  (SELECT json_agg(json_build_array(key, value)) FROM meta WHERE key = ANY($2)) AS meta`,
);

/**
 * The read-ahead call for `literal` (an escaped context id) and the meta keys this process saw units of the
 * context read (escaped here).
 */
export function prefetchSql(literal: string, metaKeys: readonly string[], quote: (v: string) => string) {
  return PREFETCH.call(literal, keysArray(metaKeys, quote));
}

/**
 * A read unit's read-ahead ($1 the context, $2 the meta keys): its generation and the meta keys its
 * context's units read. One row; parsed by `parseReadAhead`. It rides in the BEGIN's simple query (after
 * the settings: it is the transaction's first snapshot).
 */
const READ_AHEAD = literalPlan(
  'gmx_l_read_ahead',
  ['text', 'text[]'],
  `SELECT (SELECT xmin::text || '.' || generation FROM contexts WHERE id = $1) AS generation,
  (SELECT json_agg(json_build_array(key, value)) FROM meta WHERE key = ANY($2)) AS meta`,
);

export function readAheadSql(literal: string, metaKeys: readonly string[], quote: (v: string) => string) {
  return READ_AHEAD.call(literal, keysArray(metaKeys, quote));
}

export function parseReadAhead(row: pg.QueryResultRow, metaKeys: readonly string[]): UnitPrefetch {
  const r = row as { generation: string | null; meta: Array<[string, string]> | null };
  const out = new UnitPrefetch();
  out.generation = r.generation ?? undefined;
  readMeta(out, r.meta, metaKeys);
  return out;
}

function keysArray(metaKeys: readonly string[], quote: (v: string) => string): string {
  return metaKeys.length > 0 ? `ARRAY[${metaKeys.map(quote).join(', ')}]::text[]` : `'{}'::text[]`;
}

function readMeta(out: UnitPrefetch, rows: Array<[string, string]> | null, metaKeys: readonly string[]) {
  for (const key of metaKeys) out.meta.set(key, undefined);
  for (const [key, value] of rows ?? []) out.meta.set(key, JSON.parse(value) as unknown);
}

interface PrefetchRow {
  journal_n: number | string;
  journal_last: number | string | null;
  memories: number | string | null;
  journal: Array<[number | string, string, string | null, string | null]> | null;
  snapshot: [string, number, number, string, number, string] | null;
  meta: Array<[string, string]> | null;
}

export function parsePrefetch(row: pg.QueryResultRow, metaKeys: readonly string[]): UnitPrefetch {
  const r = row as PrefetchRow;
  const out = new UnitPrefetch();
  const pending = Number(r.journal_n);
  out.journalStatus = r.journal_last === null ? { pending } : { pending, lastSeq: Number(r.journal_last) };
  out.memories = r.memories === null ? 0 : Number(r.memories);
  const rows = r.journal ?? [];
  if (pending <= PREFETCH_JOURNAL && rows.length === pending) {
    const entries: RelationWork[] = [];
    const records = new Map<string, MemoryRecord | null>();
    for (const [seq, memoryId, before, record] of rows) {
      entries.push(
        before === null
          ? { seq: Number(seq), memoryId }
          : { seq: Number(seq), memoryId, before: JSON.parse(before) as MemoryRecord },
      );
      if (!records.has(memoryId))
        records.set(memoryId, record === null ? null : (JSON.parse(record) as MemoryRecord));
    }
    out.journal = { entries, records };
  }
  out.snapshot = r.snapshot
    ? {
        space: r.snapshot[0],
        documents: Number(r.snapshot[1]),
        k: Number(r.snapshot[2]),
        createdAt: r.snapshot[3],
        changes: Number(r.snapshot[4]),
      }
    : null;
  if (r.snapshot) out.snapshotVersion = snapshotVersion(r.snapshot[5], Number(r.snapshot[4]), r.snapshot[3]);
  readMeta(out, r.meta, metaKeys);
  return out;
}

/**
 * Meta keys read inside units of each context, learned per process (the first unit of a context reads them
 * one statement each; later ones get them ahead). Bounded: a few keys per context, a few thousand contexts.
 */
export class LearnedMetaKeys {
  private readonly byContext = new Map<string, string[]>();

  of(contextId: string): readonly string[] {
    return this.byContext.get(contextId) ?? [];
  }

  learn(contextId: string, key: string): void {
    const keys = this.byContext.get(contextId) ?? [];
    if (keys.includes(key) || keys.length >= MAX_KEYS_PER_CONTEXT) return;
    this.byContext.delete(contextId);
    if (this.byContext.size >= MAX_CONTEXTS) {
      const oldest = this.byContext.keys().next().value;
      if (oldest !== undefined) this.byContext.delete(oldest);
    }
    this.byContext.set(contextId, [...keys, key]);
  }
}
