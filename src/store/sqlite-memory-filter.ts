import type Database from 'better-sqlite3';
import type { MemoryFilter } from './archive-store-spec.ts';
import {
  driverInput,
  FILTER_DRIVEN_BELOW,
  type FilterDriver,
  type FilterSql,
  filterDriver,
  WINDOW_SORTED_BELOW,
  windowBounds,
} from './filter-plan.ts';
import type { ScopeTag } from './memory-scope-tags.ts';
import { intersectTags, prepareTagSeeks, type TagSeeks } from './sqlite-tag-intersection.ts';

/** Distinct statement shapes kept prepared (a shape is which conditions a filter has, not their values). */
const CACHED_SHAPES = 64;

/** The filter's event-time bounds as conditions on `column` (`?` placeholders) and their values. */
function windowSql(filter: MemoryFilter, column: string): { parts: string[]; params: string[] } {
  const bounds = windowBounds(filter);
  return {
    parts: bounds.map((bound) => `${column} ${bound.op} ?`),
    params: bounds.map((bound) => bound.value),
  };
}

/**
 * Filtered reads of the SQLite store (ArchiveStore.listMemories with a filter, matchMemories). The access path
 * is picked by filterDriver (filter-plan.ts): a scope tag's rows of `memory_tags (context_id, name, value,
 * sequence, memory_id)`, already in the page's order, joined to their memories (one statement; two or more
 * tags are intersected by seeks in that order, sqlite-tag-intersection.ts); a small event-time window of
 * `memories_by_time (context_id, timestamp)`, sorted; or, with no tag, the memories' own order. Left to
 * itself SQLite walked the (sequence, id) order and probed a tag per memory: the whole context for a tag few
 * memories hold, or for one whose memories all sit late in the order. Values are bound parameters; only the
 * shape varies the SQL.
 */
export class SqliteMemoryFilter {
  private readonly statements = new Map<string, Database.Statement>();
  private seeks: TagSeeks | undefined;

  constructor(private readonly db: Database.Database) {}

  /** Records (JSON) passing the filter in (sequence, id) order after the keyset position. */
  list(
    contextId: string,
    filter: MemoryFilter,
    page: { afterSequence?: number; afterId?: string; limit?: number },
  ): string[] {
    const plan = this.plan(contextId, filter);
    if (plan.intersect) return this.intersect(contextId, filter, plan.intersect, page, 'm.record');
    return this.prepare(this.paged(plan, page, 'm.record'))
      .pluck()
      .all(...plan.params) as string[];
  }

  /** Ids passing the filter: the subset of `ids`, or the first `limit` in (sequence, id) order. */
  match(
    contextId: string,
    filter: MemoryFilter,
    options: { ids?: readonly string[]; limit?: number },
  ): string[] {
    if (options.ids !== undefined) {
      if (options.ids.length === 0) return [];
      // A subset of given ids: probing each id's tags is bounded by the ids, whatever would drive.
      const { where, params } = this.plan(contextId, filter, { drive: false });
      params.push(JSON.stringify([...new Set(options.ids)]));
      const sql = `SELECT m.id FROM memories m WHERE ${where} AND m.id IN (SELECT value FROM json_each(?))`;
      return this.prepare(sql)
        .pluck()
        .all(...params) as string[];
    }
    const plan = this.plan(contextId, filter);
    if (plan.intersect) {
      return this.intersect(contextId, filter, plan.intersect, { limit: options.limit }, 'm.id');
    }
    return this.prepare(this.paged(plan, { limit: options.limit }, 'm.id'))
      .pluck()
      .all(...plan.params) as string[];
  }

  /**
   * A page of a filter with two or more tags and no small window: the tags' rows intersected in page order
   * (intersectTags), each match checked against the window and its value read by its primary key.
   */
  private intersect(
    contextId: string,
    filter: MemoryFilter,
    tags: readonly ScopeTag[],
    page: { afterSequence?: number; afterId?: string; limit?: number | undefined },
    column: string,
  ): string[] {
    const window = windowSql(filter, 'm.timestamp');
    const read = this.prepare(
      `SELECT ${column} FROM memories m WHERE ${['m.context_id = ?', 'm.id = ?', ...window.parts].join(' AND ')}`,
    ).pluck();
    this.seeks ??= prepareTagSeeks((sql) => this.db.prepare(sql));
    const seeks = this.seeks;
    // One read transaction: the page's seeks see one snapshot (a nested call runs as a savepoint).
    return this.db.transaction(() =>
      intersectTags(
        seeks,
        contextId,
        tags,
        {
          ...(page.afterSequence === undefined ? {} : { sequence: page.afterSequence }),
          ...(page.afterId === undefined ? {} : { id: page.afterId }),
        },
        page.limit === undefined || page.limit < 0 ? Number.POSITIVE_INFINITY : page.limit,
        (id) => read.get(contextId, id, ...window.params) as string | undefined,
      ),
    )();
  }

  /** The plan's statement for one page (its keyset and LIMIT parameters appended to plan.params). */
  private paged(
    plan: FilterSql,
    page: { afterSequence?: number; afterId?: string; limit?: number | undefined },
    column: string,
  ): string {
    let keyset = '';
    if (page.afterSequence !== undefined) {
      // A row value: SQLite seeks the index to it (an OR of the two cases would scan from the start).
      keyset =
        page.afterId === undefined
          ? ` AND ${plan.sequence} > ?`
          : ` AND (${plan.sequence}, ${plan.id}) > (?, ?)`;
      plan.params.push(page.afterSequence);
      if (page.afterId !== undefined) plan.params.push(page.afterId);
    }
    plan.params.push(page.limit ?? -1);
    return `SELECT ${column} FROM ${plan.from} WHERE ${plan.where}${keyset} ORDER BY ${plan.sequence}, ${plan.id} LIMIT ?`;
  }

  private plan(contextId: string, filter: MemoryFilter, options: { drive?: boolean } = {}): FilterSql {
    const { tags, needsCounts } = driverInput(filter);
    const counts = options.drive !== false && needsCounts ? this.counts(contextId, filter, tags) : undefined;
    const driver: FilterDriver = options.drive === false ? { kind: 'order' } : filterDriver(tags, counts);
    const parts: string[] = [];
    const params: unknown[] = [];
    const plan: FilterSql = { from: 'memories m', where: '', params, sequence: 'm.sequence', id: 'm.id' };
    if (driver.kind === 'tag' && tags.length > 1) plan.intersect = tags;
    if (driver.kind === 'tag') {
      // CROSS JOIN keeps the tag's rows as the outer loop: they come in (sequence, memory_id) order, so the
      // LIMIT stops the walk and nothing is sorted.
      plan.from = 'memory_tags t CROSS JOIN memories m ON m.context_id = t.context_id AND m.id = t.memory_id';
      plan.sequence = 't.sequence';
      plan.id = 't.memory_id';
      parts.push('t.context_id = ? AND t.name = ? AND t.value = ?');
      params.push(contextId, driver.tag.name, driver.tag.value);
    } else if (driver.kind === 'window') {
      plan.from = 'memories m INDEXED BY memories_by_time';
    }
    const window = windowSql(filter, 'm.timestamp');
    parts.push('m.context_id = ?', ...window.parts);
    params.push(contextId, ...window.params);
    for (const tag of tags) {
      if (driver.kind === 'tag' && tag === driver.tag) continue;
      // The tag's whole primary key per row: `id IN (SELECT ...)` made SQLite first read every memory the tag
      // holds into a list, per page.
      parts.push(
        'EXISTS (SELECT 1 FROM memory_tags WHERE context_id = m.context_id AND name = ? AND value = ? AND sequence = m.sequence AND memory_id = m.id)',
      );
      params.push(tag.name, tag.value);
    }
    plan.where = parts.join(' AND ');
    return plan;
  }

  /**
   * The window's memories counted up to WINDOW_SORTED_BELOW, then each tag's up to FILTER_DRIVEN_BELOW or one
   * more than the window's (enough to tell which is smaller; filterDriver), through their indexes.
   */
  private counts(
    contextId: string,
    filter: MemoryFilter,
    tags: readonly ScopeTag[],
  ): { tags: number[]; window: number } {
    const bounds = windowSql(filter, 'timestamp');
    const window = this.prepare(
      `SELECT count(*) FROM (SELECT 1 FROM memories INDEXED BY memories_by_time
        WHERE ${['context_id = ?', ...bounds.parts].join(' AND ')} LIMIT ?)`,
    )
      .pluck()
      .get(contextId, ...bounds.params, WINDOW_SORTED_BELOW) as number;
    const tagCount = this.prepare(
      'SELECT count(*) FROM (SELECT 1 FROM memory_tags WHERE context_id = ? AND name = ? AND value = ? LIMIT ?)',
    ).pluck();
    const cap = Math.min(window + 1, FILTER_DRIVEN_BELOW);
    return { tags: tags.map((tag) => tagCount.get(contextId, tag.name, tag.value, cap) as number), window };
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
