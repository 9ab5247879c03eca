import type Database from 'better-sqlite3';
import type { MemoryFilter } from './archive-store-spec.ts';
import { filterTags, type ScopeTag, upperBound } from './memory-scope-tags.ts';

/** Distinct statement shapes kept prepared (a shape is which conditions a filter has, not their values). */
const CACHED_SHAPES = 64;

/**
 * A scope tag held by fewer memories than this drives a filtered page: its rows are read (at most this many)
 * and sorted into (sequence, id) order. SQLite's own plan walks the (sequence, id) order and probes the tag
 * per memory, which for a tag few or no memories hold read the whole context: 151 ms a page at 1M memories
 * for an agent id nobody has (bench/verbs-probe.ts), against ~0.3 ms for an unfiltered page. Counting a tag's
 * rows up to this bound reads at most this many index entries, the price a page of a common tag now pays.
 */
export const TAG_DRIVEN_BELOW = 4096;

/**
 * Filtered reads of the SQLite store (ArchiveStore.listMemories with a filter, matchMemories). A filter is
 * compiled to one statement whose conditions are index lookups: each scope tag is a probe of
 * `memory_tags (context_id, name, value, memory_id)` and event-time bounds a range of
 * `memories_by_time (context_id, timestamp)`. A tag few memories hold drives the statement (its rows joined
 * to their memories, see TAG_DRIVEN_BELOW): left to itself SQLite walked the (sequence, id) order for the
 * page's LIMIT and probed the tag per memory, i.e. the whole context for a rare tag. Values are bound
 * parameters; only the shape varies the SQL.
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
    const { from, where, params } = this.conditions(contextId, filter);
    let keyset = '';
    if (page.afterSequence !== undefined) {
      keyset =
        page.afterId === undefined
          ? ' AND m.sequence > ?'
          : ' AND (m.sequence > ? OR (m.sequence = ? AND m.id > ?))';
      params.push(page.afterSequence);
      if (page.afterId !== undefined) params.push(page.afterSequence, page.afterId);
    }
    params.push(page.limit ?? -1);
    const sql = `SELECT m.record FROM ${from} WHERE ${where}${keyset} ORDER BY m.sequence, m.id LIMIT ?`;
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
    if (options.ids !== undefined) {
      if (options.ids.length === 0) return [];
      // A subset of given ids: probing each id's tags is bounded by the ids, whatever drives.
      const { where, params } = this.conditions(contextId, filter, { drive: false });
      params.push(JSON.stringify([...new Set(options.ids)]));
      const sql = `SELECT m.id FROM memories m WHERE ${where} AND m.id IN (SELECT value FROM json_each(?))`;
      return this.prepare(sql)
        .pluck()
        .all(...params) as string[];
    }
    const { from, where, params } = this.conditions(contextId, filter);
    params.push(options.limit ?? -1);
    const sql = `SELECT m.id FROM ${from} WHERE ${where} ORDER BY m.sequence, m.id LIMIT ?`;
    return this.prepare(sql)
      .pluck()
      .all(...params) as string[];
  }

  /**
   * The filter as SQL over `memories m`: `from` is `memories m`, or, when one of its tags is held by fewer
   * than TAG_DRIVEN_BELOW memories, that tag's rows joined to their memories (CROSS JOIN: SQLite keeps the
   * tag rows as the outer loop, so a page costs that tag's rows, never a walk of the context).
   */
  private conditions(
    contextId: string,
    filter: MemoryFilter,
    options: { drive?: boolean } = {},
  ): { from: string; where: string; params: unknown[] } {
    const tags = filterTags(filter);
    const driver = options.drive === false ? undefined : this.rareTag(contextId, tags);
    const parts: string[] = [];
    const params: unknown[] = [];
    let from = 'memories m';
    if (driver !== undefined) {
      from = 'memory_tags t CROSS JOIN memories m ON m.context_id = t.context_id AND m.id = t.memory_id';
      parts.push('t.context_id = ? AND t.name = ? AND t.value = ?');
      params.push(contextId, driver.name, driver.value);
    }
    parts.push('m.context_id = ?');
    params.push(contextId);
    if (filter.from !== undefined) {
      parts.push('m.timestamp >= ?');
      params.push(filter.from);
    }
    if (filter.to !== undefined) {
      parts.push('m.timestamp <= ?');
      params.push(upperBound(filter.to));
    }
    for (const tag of tags) {
      if (tag === driver) continue;
      // A correlated probe of the tag's primary key per memory: `id IN (SELECT ...)` made SQLite first read
      // every memory the tag holds into a list (half the context for an agent id on half of it), per page.
      parts.push(
        'EXISTS (SELECT 1 FROM memory_tags WHERE context_id = m.context_id AND name = ? AND value = ? AND memory_id = m.id)',
      );
      params.push(tag.name, tag.value);
    }
    return { from, where: parts.join(' AND '), params };
  }

  /** The tag of `tags` held by the fewest memories, when that is fewer than TAG_DRIVEN_BELOW. */
  private rareTag(contextId: string, tags: readonly ScopeTag[]): ScopeTag | undefined {
    let best: { tag: ScopeTag; count: number } | undefined;
    for (const tag of tags) {
      const count = this.prepare(
        'SELECT count(*) FROM (SELECT 1 FROM memory_tags WHERE context_id = ? AND name = ? AND value = ? LIMIT ?)',
      )
        .pluck()
        .get(contextId, tag.name, tag.value, TAG_DRIVEN_BELOW) as number;
      if (count < TAG_DRIVEN_BELOW && (best === undefined || count < best.count)) best = { tag, count };
    }
    return best?.tag;
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
