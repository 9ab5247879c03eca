import type Database from 'better-sqlite3';
import type { MemoryView } from '../types/view.ts';
import type { ScopeTag } from './memory-scope-tags.ts';
import { MULTI_ROW_MAX, multiRowInsert } from './multi-row-insert.ts';

/** The rows a memory new to its context adds (its journal entry, the memory, keys, tags and views). */
export interface FreshMemoryRow {
  contextId: string;
  id: string;
  /** The memory row's columns after (context_id, id): sequence ... record. */
  columns: readonly unknown[];
  sequence: number;
  keys: readonly string[];
  tags: readonly ScopeTag[];
  views: readonly MemoryView[];
}

/**
 * The rows of memories new to their context, written MULTI_ROW_MAX memories at a time in multi-row INSERTs
 * (multi-row-insert.ts) instead of ~8 one-row statements per memory: a bulk import writes ~10 such rows per
 * memory, and each statement call carries a fixed cost that the rows of one INSERT share. Each table
 * receives its rows in the order the memories were added, as the one-row statements wrote them (so rowids
 * and AUTOINCREMENT sequences are the same), and the memory rows go before the rows that reference them
 * (foreign keys are checked per statement). The caller calls flush() before any other write or read of
 * these tables in its transaction (an update, a re-keyed unchanged memory, the end of the batch).
 */
export class FreshMemoryRows {
  private readonly journal;
  private readonly memories;
  private readonly keys;
  private readonly tags;
  private readonly views;
  private pending: FreshMemoryRow[] = [];

  constructor(db: Database.Database) {
    this.journal = multiRowInsert(
      db,
      'INSERT INTO relation_journal (context_id, memory_id, before)',
      '(?, ?, NULL)',
    );
    this.memories = multiRowInsert(
      db,
      `INSERT INTO memories (context_id, id, sequence, kind, session_id, round_id, timestamp, content_hash,
        record)`,
      '(?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.keys = multiRowInsert(
      db,
      'INSERT OR IGNORE INTO memory_keys (context_id, memory_id, key, sequence)',
      '(?, ?, ?, ?)',
    );
    this.tags = multiRowInsert(
      db,
      'INSERT OR IGNORE INTO memory_tags (context_id, name, value, sequence, memory_id)',
      '(?, ?, ?, ?, ?)',
    );
    this.views = multiRowInsert(
      db,
      'INSERT INTO views (context_id, memory_id, position, kind, key, text, uri)',
      '(?, ?, ?, ?, ?, ?, ?)',
    );
  }

  add(row: FreshMemoryRow): void {
    this.pending.push(row);
    if (this.pending.length >= MULTI_ROW_MAX) this.flush();
  }

  /** Writes every queued memory's rows; table by table, memories before what references them. */
  flush(): void {
    const rows = this.pending;
    if (rows.length === 0) return;
    this.pending = [];
    this.journal(
      rows.flatMap((row) => [row.contextId, row.id]),
      rows.length,
    );
    this.memories(
      rows.flatMap((row) => [row.contextId, row.id, ...row.columns]),
      rows.length,
    );
    const keys: unknown[] = [];
    const tags: unknown[] = [];
    const views: unknown[] = [];
    for (const row of rows) {
      for (const key of row.keys) keys.push(row.contextId, row.id, key, row.sequence);
      for (const tag of row.tags) tags.push(row.contextId, tag.name, tag.value, row.sequence, row.id);
      row.views.forEach((view, position) => {
        views.push(row.contextId, row.id, position, view.kind, view.key, view.text, view.uri ?? null);
      });
    }
    this.keys(keys, keys.length / 4);
    this.tags(tags, tags.length / 5);
    this.views(views, views.length / 7);
  }

  /** Drops what is queued (the transaction failed: nothing of it may reach the next one). */
  clear(): void {
    this.pending = [];
  }
}
