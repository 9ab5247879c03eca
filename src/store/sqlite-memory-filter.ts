import type Database from 'better-sqlite3';
import type { FilteredPage, FilterPageOptions, MemoryFilter } from './archive-store-spec.ts';
import {
  driverInput,
  FILTER_DRIVEN_BELOW,
  type FilterDriver,
  type FilterSql,
  filterDriver,
  pageBounds,
  WINDOW_SORTED_BELOW,
  windowBounds,
} from './filter-plan.ts';
import type { ScopeTag } from './memory-scope-tags.ts';
import { intersectTags, prepareTagSeeks, type TagSeeks } from './sqlite-tag-intersection.ts';

/** A FilterSql with the conditions a walk checks per row apart from those that drive it. */
interface SqlitePlan extends FilterSql {
  check: string;
  checkParams: unknown[];
  /** The window drives: its rows are read whole and sorted. */
  sorted: boolean;
}

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
 * Filtered reads of the SQLite store (ArchiveStore.listFiltered, matchFiltered, matchMemories). The access path
 * is picked by filterDriver (filter-plan.ts): a scope tag's rows of `memory_tags (context_id, name, value,
 * sequence, memory_id)`, already in the page's order, joined to their memories (one statement; two or more
 * tags are intersected by seeks in that order, sqlite-tag-intersection.ts); a small event-time window of
 * `memories_by_time (context_id, timestamp)`, sorted; or, with no tag, the memories' own order. Left to
 * itself SQLite walked the (sequence, id) order and probed a tag per memory: the whole context for a tag few
 * memories hold, or for one whose memories all sit late in the order. Every walk stops after the page's work
 * (FILTER_PAGE_WORK rows or seeks) and says where (FilteredPage.stoppedAfter). Values are bound parameters;
 * only the shape varies the SQL.
 */
export class SqliteMemoryFilter {
  private readonly statements = new Map<string, Database.Statement>();
  private seeks: TagSeeks | undefined;

  constructor(private readonly db: Database.Database) {}

  /** Records (JSON) passing the filter in (sequence, id) order after the keyset position. */
  list(contextId: string, filter: MemoryFilter, page: FilterPageOptions): FilteredPage<string> {
    return this.page(contextId, filter, page, 'm.record');
  }

  /** The ids of list's page. */
  matchPage(contextId: string, filter: MemoryFilter, page: FilterPageOptions): FilteredPage<string> {
    return this.page(contextId, filter, page, 'm.id');
  }

  /** The subset of `ids` passing the filter: probing each id's tags is bounded by the ids, whatever would drive. */
  match(contextId: string, filter: MemoryFilter, ids: readonly string[]): string[] {
    if (ids.length === 0) return [];
    const { where, params } = this.plan(contextId, filter, { drive: false });
    params.push(JSON.stringify([...new Set(ids)]));
    const sql = `SELECT m.id FROM memories m WHERE ${where} AND m.id IN (SELECT value FROM json_each(?))`;
    return this.prepare(sql)
      .pluck()
      .all(...params) as string[];
  }

  private page(
    contextId: string,
    filter: MemoryFilter,
    page: FilterPageOptions,
    column: string,
  ): FilteredPage<string> {
    const { limit, work } = pageBounds(page);
    const plan = this.plan(contextId, filter, { work });
    if (limit === 0) return { items: [] };
    if (plan.intersect) return this.intersect(contextId, filter, plan.intersect, page, limit, work, column);
    if (plan.sorted) {
      // The window's rows (fewer than WINDOW_SORTED_BELOW, counted in this snapshot's terms) sorted: one
      // statement that always finishes.
      const sql = this.keyset(plan, page, `SELECT ${column} FROM ${plan.from} WHERE ${plan.where}`);
      plan.params.push(Number.isFinite(limit) ? limit : -1);
      return {
        items: this.prepare(`${sql} LIMIT ?`)
          .pluck()
          .all(...plan.params) as string[],
      };
    }
    // A walk in page order: every row it reads counts against `work`, passing or not, and a row that fails
    // the filter's other conditions comes back as NULL (CASE), so the walk's length is counted here.
    const sql = this.keyset(
      plan,
      page,
      `SELECT ${plan.sequence}, ${plan.id}, CASE WHEN ${plan.check} THEN ${column} END FROM ${plan.from} WHERE ${plan.where}`,
    );
    plan.params.push(work);
    plan.params.unshift(...plan.checkParams);
    const items: string[] = [];
    let walked = 0;
    let last: [number, string, string | null] | undefined;
    for (const row of this.prepare(`${sql} LIMIT ?`)
      .raw()
      .iterate(...plan.params) as IterableIterator<[number, string, string | null]>) {
      walked++;
      last = row;
      if (row[2] !== null) {
        items.push(row[2]);
        if (items.length >= limit) return { items };
      }
    }
    return walked === work && last ? { items, stoppedAfter: { sequence: last[0], id: last[1] } } : { items };
  }

  /**
   * A page of a filter with two or more tags and no small window: the tags' rows intersected in page order
   * (intersectTags), each match checked against the window and its value read by its primary key.
   */
  private intersect(
    contextId: string,
    filter: MemoryFilter,
    tags: readonly ScopeTag[],
    page: FilterPageOptions,
    limit: number,
    work: number,
    column: string,
  ): FilteredPage<string> {
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
        { limit, work },
        (id) => read.get(contextId, id, ...window.params) as string | undefined,
      ),
    )();
  }

  /** `select` with the page's keyset condition and ORDER BY (their parameters appended to plan.params). */
  private keyset(plan: FilterSql, page: FilterPageOptions, select: string): string {
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
    return `${select}${keyset} ORDER BY ${plan.sequence}, ${plan.id}`;
  }

  /**
   * The filter's plan: `from` / `where` (params) is the walk, `check` (checkParams) the filter's other
   * conditions on each walked row; `sorted` plans (a window) and `drive: false` (a subset of ids) put every
   * condition in `where`, and `params` then holds them all.
   */
  private plan(
    contextId: string,
    filter: MemoryFilter,
    options: { drive?: boolean; work?: number } = {},
  ): SqlitePlan {
    const { tags, needsCounts } = driverInput(filter);
    const counts = options.drive !== false && needsCounts ? this.counts(contextId, filter, tags) : undefined;
    const driver: FilterDriver =
      options.drive === false ? { kind: 'order' } : filterDriver(tags, counts, options.work);
    const walk = options.drive !== false && driver.kind !== 'window';
    const parts: string[] = [];
    const params: unknown[] = [];
    const checks: string[] = [];
    const checkParams: unknown[] = [];
    const plan: SqlitePlan = {
      from: 'memories m',
      where: '',
      params,
      sequence: 'm.sequence',
      id: 'm.id',
      check: '1',
      checkParams,
      sorted: driver.kind === 'window',
    };
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
    } else if (walk) {
      // The order's walk reads memories_by_sequence: a window the planner would read instead is too large to
      // sort (WINDOW_SORTED_BELOW or more) and is checked per row.
      plan.from = 'memories m INDEXED BY memories_by_sequence';
    }
    parts.push('m.context_id = ?');
    params.push(contextId);
    const window = windowSql(filter, 'm.timestamp');
    const conditions = walk ? checks : parts;
    const values = walk ? checkParams : params;
    conditions.push(...window.parts);
    values.push(...window.params);
    for (const tag of tags) {
      if (driver.kind === 'tag' && tag === driver.tag) continue;
      // The tag's whole primary key per row: `id IN (SELECT ...)` made SQLite first read every memory the tag
      // holds into a list, per page.
      conditions.push(
        'EXISTS (SELECT 1 FROM memory_tags WHERE context_id = m.context_id AND name = ? AND value = ? AND sequence = m.sequence AND memory_id = m.id)',
      );
      values.push(tag.name, tag.value);
    }
    plan.where = parts.join(' AND ');
    if (checks.length > 0) plan.check = checks.join(' AND ');
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
