import type Database from 'better-sqlite3';
import type { MemoryFilter } from './archive-store-spec.ts';
import { filterTags, upperBound } from './memory-scope-tags.ts';

/** Distinct statement shapes kept prepared (a shape is which conditions a filter has, not their values). */
const CACHED_SHAPES = 64;

/**
 * Filtered reads of the SQLite store (ArchiveStore.listMemories with a filter, matchMemories). A filter is
 * compiled to one statement whose conditions are index lookups: each scope tag is a probe of
 * `memory_tags (context_id, name, value, memory_id)` and event-time bounds a range of
 * `memories_by_time (context_id, timestamp)`, so SQLite can start from the most selective one and a
 * selective filter never walks the context. Values are bound parameters; only the shape varies the SQL.
 */
export class SqliteMemoryFilter {
  private readonly statements = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  /** Records (JSON) passing the filter in (sequence, id) order after the keyset position. */
  list(
    contextId: string,
    filter: MemoryFilter,
    page: { afterSequence?: number; afterId?: string; limit?: number },
  ): string[] {
    const { where, params } = this.conditions(contextId, filter);
    let keyset = '';
    if (page.afterSequence !== undefined) {
      keyset =
        page.afterId === undefined ? ' AND sequence > ?' : ' AND (sequence > ? OR (sequence = ? AND id > ?))';
      params.push(page.afterSequence);
      if (page.afterId !== undefined) params.push(page.afterSequence, page.afterId);
    }
    params.push(page.limit ?? -1);
    const sql = `SELECT record FROM memories WHERE ${where}${keyset} ORDER BY sequence, id LIMIT ?`;
    return this.prepare(sql)
      .pluck()
      .all(...params) as string[];
  }

  /** Ids passing the filter: the subset of `ids`, or the first `limit` in (sequence, id) order. */
  match(
    contextId: string,
    filter: MemoryFilter,
    options: { ids?: readonly string[]; limit?: number },
  ): string[] {
    const { where, params } = this.conditions(contextId, filter);
    if (options.ids !== undefined) {
      if (options.ids.length === 0) return [];
      params.push(JSON.stringify([...new Set(options.ids)]));
      const sql = `SELECT id FROM memories WHERE ${where} AND id IN (SELECT value FROM json_each(?))`;
      return this.prepare(sql)
        .pluck()
        .all(...params) as string[];
    }
    params.push(options.limit ?? -1);
    const sql = `SELECT id FROM memories WHERE ${where} ORDER BY sequence, id LIMIT ?`;
    return this.prepare(sql)
      .pluck()
      .all(...params) as string[];
  }

  private conditions(contextId: string, filter: MemoryFilter): { where: string; params: unknown[] } {
    const parts = ['context_id = ?'];
    const params: unknown[] = [contextId];
    if (filter.from !== undefined) {
      parts.push('timestamp >= ?');
      params.push(filter.from);
    }
    if (filter.to !== undefined) {
      parts.push('timestamp <= ?');
      params.push(upperBound(filter.to));
    }
    for (const tag of filterTags(filter)) {
      parts.push('id IN (SELECT memory_id FROM memory_tags WHERE context_id = ? AND name = ? AND value = ?)');
      params.push(contextId, tag.name, tag.value);
    }
    return { where: parts.join(' AND '), params };
  }

  private prepare(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      if (this.statements.size >= CACHED_SHAPES) this.statements.clear();
      this.statements.set(sql, statement);
    }
    return statement;
  }
}
