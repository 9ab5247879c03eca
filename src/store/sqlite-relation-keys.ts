import type Database from 'better-sqlite3';
import type { MemoryRecord } from '../types/memory-record.ts';
import { type KeyedRecord, MEDIA_PENDING_KEY, type PendingMediaRef } from './archive-store-spec.ts';
import { lazyStatement } from './lazy-statement.ts';

/**
 * The relation-key table of the SQLite store (migration 3, `memory_keys`): one row per (memory, key) with the
 * memory's sequence copied in, so a key group is read in (sequence, id) order straight from the index and an
 * adjacency lookup is one index seek. Rows go with their memory (ON DELETE CASCADE).
 */
export const RELATION_KEYS_MIGRATION = {
  version: 3,
  sql: `
    CREATE TABLE memory_keys (
      context_id TEXT NOT NULL,
      memory_id TEXT NOT NULL,
      key TEXT NOT NULL,
      sequence INTEGER NOT NULL,
      PRIMARY KEY (context_id, key, memory_id),
      FOREIGN KEY (context_id, memory_id) REFERENCES memories (context_id, id) ON DELETE CASCADE
    );
    CREATE INDEX memory_keys_by_sequence ON memory_keys (context_id, key, sequence, memory_id);
    CREATE INDEX memory_keys_by_memory ON memory_keys (context_id, memory_id);
  `,
} as const;

/** ArchiveStore.heldMediaKeys' probe: the range literals match the partial index memory_keys_media_refs (migration 17). */
export const HELD_MEDIA_KEY_SQL =
  "SELECT 1 FROM memory_keys WHERE key = ? AND key >= 'media:' AND key < 'media;' LIMIT 1";

/** Prepared statements over `memory_keys`; callers run them inside their own transactions. */
export class SqliteRelationKeys {
  private readonly s;

  constructor(db: Database.Database) {
    const p = (sql: string) => lazyStatement(db, sql);
    this.s = {
      deleteKeys: p('DELETE FROM memory_keys WHERE context_id = ? AND memory_id = ?'),
      insertKey: p(
        'INSERT OR IGNORE INTO memory_keys (context_id, memory_id, key, sequence) VALUES (?, ?, ?, ?)',
      ),
      group: p(`SELECT m.record AS record FROM memory_keys k
        JOIN memories m ON m.context_id = k.context_id AND m.id = k.memory_id
        WHERE k.context_id = ? AND k.key = ? ORDER BY k.sequence, k.memory_id LIMIT ?`),
      before: p(`SELECT m.record AS record FROM memory_keys k
        JOIN memories m ON m.context_id = k.context_id AND m.id = k.memory_id
        WHERE k.context_id = ? AND k.key = ? AND (k.sequence, k.memory_id) < (?, ?)
        ORDER BY k.sequence DESC, k.memory_id DESC LIMIT 1`),
      after: p(`SELECT m.record AS record FROM memory_keys k
        JOIN memories m ON m.context_id = k.context_id AND m.id = k.memory_id
        WHERE k.context_id = ? AND k.key = ? AND (k.sequence, k.memory_id) > (?, ?)
        ORDER BY k.sequence, k.memory_id LIMIT 1`),
      // The literal matches the partial index memory_keys_media_pending (a bound parameter would not).
      pending: p(`SELECT context_id AS contextId, memory_id AS id FROM memory_keys
        WHERE key = '${MEDIA_PENDING_KEY}' AND (context_id, memory_id) > (?, ?)
        ORDER BY context_id, memory_id LIMIT ?`),
      mediaHeld: p(HELD_MEDIA_KEY_SQL),
      range: p(`SELECT k.key AS key, m.record AS record FROM memory_keys k
        JOIN memories m ON m.context_id = k.context_id AND m.id = k.memory_id
        WHERE k.context_id = ? AND k.key >= ? AND k.key <= ? ORDER BY k.key, k.memory_id LIMIT ?`),
    };
  }

  /** ArchiveStore.heldMediaKeys: one probe of the partial index of media reference keys per key. */
  heldMedia(keys: readonly string[]): Set<string> {
    return new Set(keys.filter((key) => this.s.mediaHeld.get(key) !== undefined));
  }

  /** ArchiveStore.listPendingMedia: one range read of the partial index of pending rows. */
  pending(limit: number, after: PendingMediaRef | undefined): PendingMediaRef[] {
    return this.s.pending.all(after?.contextId ?? '', after?.id ?? '', limit) as PendingMediaRef[];
  }

  /**
   * Replaces the keys of one memory (none when `keys` is empty). `fresh`: the memory row was inserted by this
   * transaction, so it has no keys yet (they go with their memory: ON DELETE CASCADE) and the delete, one
   * index probe per record of an import, is skipped.
   */
  replace(
    contextId: string,
    memoryId: string,
    sequence: number,
    keys: readonly string[],
    fresh = false,
  ): void {
    if (!fresh) this.s.deleteKeys.run(contextId, memoryId);
    for (const key of keys) this.s.insertKey.run(contextId, memoryId, key, sequence);
  }

  /** Records holding any of `keys` in (sequence, id) order: one ordered index scan per key, merged. */
  find(contextId: string, keys: readonly string[], limit: number | undefined): MemoryRecord[] {
    const byId = new Map<string, MemoryRecord>();
    for (const key of new Set(keys)) {
      for (const row of this.s.group.all(contextId, key, limit ?? -1) as { record: string }[]) {
        const record = JSON.parse(row.record) as MemoryRecord;
        byId.set(record.id, record);
      }
    }
    const records = [...byId.values()].sort(
      (x, y) => x.sequence - y.sequence || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0),
    );
    return limit === undefined ? records : records.slice(0, limit);
  }

  adjacent(
    contextId: string,
    key: string,
    position: { sequence: number; id: string },
    direction: 'before' | 'after',
  ): MemoryRecord | undefined {
    const statement = direction === 'before' ? this.s.before : this.s.after;
    const row = statement.get(contextId, key, position.sequence, position.id) as
      | { record: string }
      | undefined;
    return row ? (JSON.parse(row.record) as MemoryRecord) : undefined;
  }

  range(contextId: string, from: string, to: string, limit: number | undefined): KeyedRecord[] {
    const rows = this.s.range.all(contextId, from, to, limit ?? -1) as { key: string; record: string }[];
    return rows.map((row) => ({ key: row.key, record: JSON.parse(row.record) as MemoryRecord }));
  }
}
