import type { MemoryRecord } from '../../types/memory-record.ts';
import type { ContextStats, MemoryFilter, MemoryVersion } from '../archive-store-spec.ts';
import {
  driverInput,
  FILTER_DRIVEN_BELOW,
  type FilterDriver,
  type FilterSql,
  filterDriver,
  WINDOW_SORTED_BELOW,
  windowBounds,
} from '../filter-plan.ts';
import { type ScopeTag, scopeTags } from '../memory-scope-tags.ts';
import type { Sql } from './postgres-session.ts';
import { tagIntersectionSql } from './postgres-tag-intersection.ts';

/**
 * History, scope tags and kept counts of the PostgreSQL store (schema version 2), the same rules as the
 * SQLite store's: a write that replaces a record keeps the replaced one in memory_versions; scope tags
 * (memory-scope-tags.ts) are rewritten with every changed record; filters are index probes of memory_tags
 * and memories_by_time; all run inside the caller's context-scoped transaction.
 */
export async function writeHistoryAndTags(
  sql: Sql,
  contextId: string,
  replaced: ReadonlyMap<string, string>,
  records: readonly MemoryRecord[],
): Promise<void> {
  for (const [id, before] of replaced) {
    const recordedAt = (JSON.parse(before) as MemoryRecord).recordedAt ?? null;
    await sql.query(
      `INSERT INTO memory_versions (context_id, memory_id, version, recorded_at, record)
       SELECT $1, $2, COALESCE(MAX(version), 0) + 1, $3, $4 FROM memory_versions
       WHERE context_id = $1 AND memory_id = $2`,
      [contextId, id, recordedAt, before],
    );
  }
  if (records.length === 0) return;
  // Only a memory stored before this write (one with a replaced version) can have tags to drop.
  if (replaced.size > 0) {
    await sql.query('DELETE FROM memory_tags WHERE context_id = $1 AND memory_id = ANY($2::text[])', [
      contextId,
      [...replaced.keys()],
    ]);
  }
  const ids: string[] = [];
  const names: string[] = [];
  const values: string[] = [];
  const sequences: number[] = [];
  for (const record of records) {
    for (const tag of scopeTags(record)) {
      ids.push(record.id);
      names.push(tag.name);
      values.push(tag.value);
      sequences.push(record.sequence);
    }
  }
  if (ids.length > 0) {
    await sql.query(
      `INSERT INTO memory_tags (context_id, memory_id, name, value, sequence)
       SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[]) ON CONFLICT DO NOTHING`,
      [contextId, ids, names, values, sequences],
    );
  }
}

/**
 * The filter's plan (filter-plan.ts, the same rule as the SQLite store's): a scope tag's rows of
 * `memory_tags (context_id, name, value, sequence, memory_id)` in the page's order joined to their memories;
 * or `memories` with the conditions, which the planner reads through memories_by_time when the window is
 * small. Other tags are probes of their primary key per row. The counts that pick the driver are one
 * statement, sent only when the filter has two access paths.
 */
async function planOf(
  sql: Sql,
  contextId: string,
  filter: MemoryFilter,
  options: { drive?: boolean } = {},
): Promise<FilterSql> {
  const { tags, needsCounts } = driverInput(filter);
  const counts =
    options.drive !== false && needsCounts ? await countsOf(sql, contextId, filter, tags) : undefined;
  const driver: FilterDriver = options.drive === false ? { kind: 'order' } : filterDriver(tags, counts);
  const params: unknown[] = [contextId];
  const parts = ['m.context_id = $1'];
  const plan: FilterSql = { from: 'memories m', where: '', params, sequence: 'm.sequence', id: 'm.id' };
  if (driver.kind === 'tag' && tags.length > 1) {
    // The tags are intersected by the page's statement; `where` keeps the window's conditions only.
    plan.intersect = tags;
    parts.push(...windowConditions(filter, params, 'm.'));
    plan.where = parts.join(' AND ');
    return plan;
  }
  if (driver.kind === 'tag') {
    params.push(driver.tag.name, driver.tag.value);
    plan.from = 'memory_tags t JOIN memories m ON m.context_id = t.context_id AND m.id = t.memory_id';
    plan.sequence = 't.sequence';
    plan.id = 't.memory_id';
    parts.push(`t.context_id = $1 AND t.name = $${params.length - 1} AND t.value = $${params.length}`);
  }
  const window = windowConditions(filter, params, 'm.');
  if (driver.kind === 'window') {
    // The window's memories through memories_by_time, in timestamp order: the generic plan (settingsSql) costs
    // a `timestamp >= $n` at a third of the context and walked it in (sequence, id) order instead (87 ms a
    // page at 200k). The count that chose this driver saw fewer than WINDOW_SORTED_BELOW memories in the
    // window in the same snapshot (filtered reads run in REPEATABLE READ read units), so the LIMIT cuts nothing.
    plan.from = `(SELECT * FROM memories m WHERE m.context_id = $1 AND ${window.join(' AND ')}
      ORDER BY m."timestamp" LIMIT ${WINDOW_SORTED_BELOW}) m`;
  } else parts.push(...window);
  for (const tag of tags) {
    if (driver.kind === 'tag' && tag === driver.tag) continue;
    params.push(tag.name, tag.value);
    parts.push(
      // A scalar subquery is probed per row (the whole key: at most one row); written as EXISTS the planner
      // turned it into a join that read every memory of the tag (a hash of 10k rows for a 50-row page).
      `(SELECT true FROM memory_tags WHERE context_id = $1 AND name = $${params.length - 1}
        AND value = $${params.length} AND sequence = m.sequence AND memory_id = m.id)`,
    );
  }
  plan.where = parts.join(' AND ');
  return plan;
}

/** Event-time bounds as conditions on `<prefix>timestamp` (parameters appended to `params`). */
function windowConditions(filter: MemoryFilter, params: unknown[], prefix: string): string[] {
  return windowBounds(filter).map((bound) => {
    params.push(bound.value);
    return `${prefix}"timestamp" ${bound.op} $${params.length}`;
  });
}

/**
 * Each tag's memories counted up to FILTER_DRIVEN_BELOW (or one more than the window's), and the window's (when
 * the filter has one) up to WINDOW_SORTED_BELOW: one statement.
 */
async function countsOf(
  sql: Sql,
  contextId: string,
  filter: MemoryFilter,
  tags: readonly ScopeTag[],
): Promise<{ tags: number[]; window?: number }> {
  const params: unknown[] = [contextId, FILTER_DRIVEN_BELOW];
  const window = windowConditions(filter, params, '');
  if (window.length > 0) params.push(WINDOW_SORTED_BELOW);
  const windowCap = `$${params.length}`;
  // With a window, each tag is counted up to one more than the window's count (enough to tell which is smaller).
  const cap = window.length === 0 ? '$2' : '(SELECT n + 1 FROM w)';
  const columns = tags.map((tag) => {
    params.push(tag.name, tag.value);
    return `(SELECT count(*) FROM (SELECT 1 FROM memory_tags WHERE context_id = $1
      AND name = $${params.length - 1} AND value = $${params.length} LIMIT LEAST($2, ${cap})) x)`;
  });
  const statement =
    window.length === 0
      ? `SELECT ARRAY[${columns.join(', ')}] AS tags, NULL AS window`
      : `WITH w AS (SELECT count(*) AS n FROM (SELECT 1 FROM memories WHERE context_id = $1
          AND ${window.join(' AND ')} LIMIT ${windowCap}) x)
        SELECT ARRAY[${columns.join(', ')}] AS tags, (SELECT n FROM w) AS window`;
  const row = (
    await sql.query<{ tags: (string | number)[]; window: string | number | null }>(statement, params)
  ).rows[0]!;
  return {
    tags: row.tags.map(Number),
    ...(row.window === null ? {} : { window: Number(row.window) }),
  };
}

/** The plan's statement for one page (its keyset and LIMIT parameters appended to plan.params). */
function paged(
  plan: FilterSql,
  page: { afterSequence?: number; afterId?: string; limit?: number | undefined },
  column: string,
): string {
  if (plan.intersect) return tagIntersectionSql(plan.intersect, plan.params, plan.where, page, column);
  const params = plan.params;
  let keyset = '';
  if (page.afterSequence !== undefined) {
    params.push(page.afterSequence);
    if (page.afterId === undefined) keyset = ` AND ${plan.sequence} > $${params.length}::bigint`;
    else {
      params.push(page.afterId);
      keyset = ` AND (${plan.sequence}, ${plan.id}) > ($${params.length - 1}::bigint, $${params.length}::text)`;
    }
  }
  params.push(page.limit ?? null);
  return `SELECT ${column} FROM ${plan.from} WHERE ${plan.where}${keyset}
    ORDER BY ${plan.sequence}, ${plan.id} LIMIT $${params.length}`;
}

export async function listFiltered(
  sql: Sql,
  contextId: string,
  filter: MemoryFilter,
  page: { afterSequence?: number; afterId?: string; limit?: number },
): Promise<MemoryRecord[]> {
  const plan = await planOf(sql, contextId, filter);
  const rows = await sql.query<{ record: string }>(paged(plan, page, 'm.record'), plan.params);
  return rows.rows.map((row) => JSON.parse(row.record) as MemoryRecord);
}

export async function matchFiltered(
  sql: Sql,
  contextId: string,
  filter: MemoryFilter,
  options: { ids?: readonly string[]; limit?: number },
): Promise<string[]> {
  if (options.ids !== undefined) {
    if (options.ids.length === 0) return [];
    // A subset of given ids: probing each id's tags is bounded by the ids, whatever would drive.
    const plan = await planOf(sql, contextId, filter, { drive: false });
    plan.params.push([...new Set(options.ids)]);
    const rows = await sql.query<{ id: string }>(
      `SELECT m.id FROM memories m WHERE ${plan.where} AND m.id = ANY($${plan.params.length}::text[])`,
      plan.params,
    );
    return rows.rows.map((row) => row.id);
  }
  const plan = await planOf(sql, contextId, filter);
  const rows = await sql.query<{ id: string }>(paged(plan, { limit: options.limit }, 'm.id'), plan.params);
  return rows.rows.map((row) => row.id);
}

export async function versionsOf(sql: Sql, contextId: string, id: string): Promise<MemoryVersion[]> {
  const rows = await sql.query<{ version: number; record: string }>(
    'SELECT version, record FROM memory_versions WHERE context_id = $1 AND memory_id = $2 ORDER BY version',
    [contextId, id],
  );
  return rows.rows.map((row) => ({
    version: Number(row.version),
    record: JSON.parse(row.record) as MemoryRecord,
  }));
}

export async function statsOf(sql: Sql, contextId: string): Promise<ContextStats | undefined> {
  const context = await sql.query<{ memories: string | number; last_write: string | null }>(
    'SELECT memories, last_write FROM contexts WHERE id = $1',
    [contextId],
  );
  const row = context.rows[0];
  if (!row) return undefined;
  const byKind: Record<string, number> = {};
  const kinds = await sql.query<{ kind: string; n: string | number }>(
    'SELECT kind, n FROM kind_counts WHERE context_id = $1 ORDER BY kind',
    [contextId],
  );
  for (const kind of kinds.rows) if (Number(kind.n) > 0) byKind[kind.kind] = Number(kind.n);
  return {
    memories: Number(row.memories),
    byKind,
    ...(row.last_write === null ? {} : { lastWrite: row.last_write }),
  };
}
