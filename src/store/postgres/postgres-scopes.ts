import type { MemoryRecord } from '../../types/memory-record.ts';
import type {
  ContextStats,
  FilteredPage,
  FilterPageOptions,
  MemoryFilter,
  MemoryVersion,
  VersionWindow,
} from '../archive-store-spec.ts';
import {
  driverInput,
  FILTER_DRIVEN_BELOW,
  type FilterDriver,
  type FilterSql,
  filterDriver,
  pageBounds,
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

/** A FilterSql with the conditions a walk checks per row apart from those that drive it. */
interface PostgresPlan extends FilterSql {
  /** Conditions on `m` checked per walked row (`true` when none). */
  check: string;
  /** The window drives: its rows are read whole (fewer than WINDOW_SORTED_BELOW) and sorted. */
  sorted: boolean;
  /** A tag drives: its walk reads each row's memory by a probe of its key (the order's walk reads it as it goes). */
  probe: boolean;
}

/**
 * The filter's plan (filter-plan.ts, the same rule as the SQLite store's): a scope tag's rows of
 * `memory_tags (context_id, name, value, sequence, memory_id)` in the page's order, or the memories in that
 * order, walked at most FILTER_PAGE_WORK rows and joined to their memories (`where` drives the walk, `check`
 * the rest); or a small window's memories through memories_by_time, sorted (`sorted`, every condition in
 * `where`). Other tags are probes of their primary key per row. The counts that pick the driver are one
 * statement, sent only when the filter has a window. `drive: false` (a subset of given ids) puts every
 * condition in `where` over `memories m`.
 */
async function planOf(
  sql: Sql,
  contextId: string,
  filter: MemoryFilter,
  options: { drive?: boolean; work?: number } = {},
): Promise<PostgresPlan> {
  const { tags, needsCounts } = driverInput(filter);
  const counts =
    options.drive !== false && needsCounts ? await countsOf(sql, contextId, filter, tags) : undefined;
  const driver: FilterDriver =
    options.drive === false ? { kind: 'order' } : filterDriver(tags, counts, options.work);
  const walk = options.drive !== false && driver.kind !== 'window';
  const params: unknown[] = [contextId];
  const parts = ['m.context_id = $1'];
  const checks: string[] = [];
  const plan: PostgresPlan = {
    from: 'memories m',
    where: '',
    params,
    sequence: 'm.sequence',
    id: 'm.id',
    check: 'true',
    sorted: driver.kind === 'window',
    probe: driver.kind === 'tag',
  };
  if (driver.kind === 'tag' && tags.length > 1) {
    // The tags are intersected by the page's statement; `where` keeps the window's conditions only.
    plan.intersect = tags;
    plan.where = [...parts, ...windowConditions(filter, params, 'm.')].join(' AND ');
    return plan;
  }
  if (driver.kind === 'tag') {
    params.push(driver.tag.name, driver.tag.value);
    plan.from = 'memory_tags t';
    plan.sequence = 't.sequence';
    plan.id = 't.memory_id';
    parts[0] = `t.context_id = $1 AND t.name = $${params.length - 1} AND t.value = $${params.length}`;
  }
  const window = windowConditions(filter, params, 'm.');
  if (driver.kind === 'window') {
    // The window's memories through memories_by_time, in timestamp order: the generic plan (settingsSql) costs
    // a `timestamp >= $n` at a third of the context and walked it in (sequence, id) order instead (87 ms a
    // page at 200k). The count that chose this driver saw fewer than WINDOW_SORTED_BELOW memories in the
    // window in the same snapshot (filtered reads run in REPEATABLE READ read units), so the LIMIT cuts nothing.
    plan.from = `(SELECT * FROM memories m WHERE m.context_id = $1 AND ${window.join(' AND ')}
      ORDER BY m."timestamp" LIMIT ${WINDOW_SORTED_BELOW}) m`;
  } else (walk ? checks : parts).push(...window);
  for (const tag of tags) {
    if (driver.kind === 'tag' && tag === driver.tag) continue;
    params.push(tag.name, tag.value);
    (walk ? checks : parts).push(
      // A scalar subquery is probed per row (the whole key: at most one row); written as EXISTS the planner
      // turned it into a join that read every memory of the tag (a hash of 10k rows for a 50-row page).
      `(SELECT true FROM memory_tags WHERE context_id = $1 AND name = $${params.length - 1}
        AND value = $${params.length} AND sequence = m.sequence AND memory_id = m.id)`,
    );
  }
  plan.where = parts.join(' AND ');
  if (checks.length > 0) plan.check = checks.join(' AND ');
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
 * The window's memories counted up to WINDOW_SORTED_BELOW and each tag's up to FILTER_DRIVEN_BELOW or one more
 * than the window's (enough to tell which is smaller): one statement. Only a filter with a window is counted
 * (driverInput).
 */
async function countsOf(
  sql: Sql,
  contextId: string,
  filter: MemoryFilter,
  tags: readonly ScopeTag[],
): Promise<{ tags: number[]; window: number }> {
  const params: unknown[] = [contextId];
  const window = windowConditions(filter, params, '');
  params.push(WINDOW_SORTED_BELOW);
  const windowCap = `$${params.length}`;
  const columns: string[] = [];
  if (tags.length > 0) {
    params.push(FILTER_DRIVEN_BELOW);
    // Each tag up to one more than the window's count: enough to tell which is smaller.
    const cap = `LEAST($${params.length}::bigint, (SELECT n + 1 FROM w))`;
    for (const tag of tags) {
      params.push(tag.name, tag.value);
      columns.push(`(SELECT count(*) FROM (SELECT 1 FROM memory_tags WHERE context_id = $1
        AND name = $${params.length - 1} AND value = $${params.length} LIMIT ${cap}) x)`);
    }
  }
  const statement = `WITH w AS (SELECT count(*) AS n FROM (SELECT 1 FROM memories WHERE context_id = $1
      AND ${window.join(' AND ')} LIMIT ${windowCap}) x)
    SELECT ARRAY[${columns.join(', ')}]::bigint[] AS tags, (SELECT n FROM w) AS window`;
  const row = (await sql.query<{ tags: (string | number)[]; window: string | number }>(statement, params))
    .rows[0]!;
  return { tags: row.tags.map(Number), window: Number(row.window) };
}

/** The keyset condition on the plan's (sequence, id) columns (its parameters appended to plan.params). */
function keysetOf(plan: FilterSql, page: FilterPageOptions): string {
  const params = plan.params;
  if (page.afterSequence === undefined) return '';
  params.push(page.afterSequence);
  if (page.afterId === undefined) return ` AND ${plan.sequence} > $${params.length}::bigint`;
  params.push(page.afterId);
  return ` AND (${plan.sequence}, ${plan.id}) > ($${params.length - 1}::bigint, $${params.length}::text)`;
}

/**
 * One filtered page of `column` (`m.record` / `m.id`) in one statement: the plan's walk of at most `work` rows,
 * the tags' intersection (postgres-tag-intersection.ts), or the sorted window. A walk is a CTE in page order
 * whose matches are read through a LATERAL probe of their memory, so the page's LIMIT stops it once the page is
 * full; a short page's statement also returns where a walk that used up its work stopped (a row flagged
 * `stop`, read from the rows the walk already made: a gate on the page's size keeps it from running otherwise).
 */
async function filteredPage(
  sql: Sql,
  contextId: string,
  filter: MemoryFilter,
  page: FilterPageOptions,
  column: 'm.record' | 'm.id',
): Promise<FilteredPage<string>> {
  const bounds = pageBounds(page);
  const work = bounds.work;
  const limit = Number.isFinite(bounds.limit) ? bounds.limit : undefined;
  const plan = await planOf(sql, contextId, filter, { work });
  let statement: string;
  if (plan.intersect) {
    statement = tagIntersectionSql(plan.intersect, plan.params, plan.where, { ...page, limit }, work, column);
  } else {
    const keyset = keysetOf(plan, page);
    plan.params.push(limit ?? null);
    const limitAt = `$${plan.params.length}`;
    if (plan.sorted) {
      statement = `SELECT ${column} AS value, false AS stop FROM ${plan.from} WHERE ${plan.where}${keyset}
        ORDER BY ${plan.sequence}, ${plan.id} LIMIT ${limitAt}`;
    } else {
      // The work bound as a literal (an integer of ours, a handful of values): a generic plan costs `LIMIT $n`
      // at a tenth of the rows (100,000 of a million-memory context, not 16,384), which makes reading the
      // context and sorting it look cheaper than the ordered walk sooner than it is.
      const workAt = String(work);
      // The tag's walk reads its memories by a LIMIT 1 probe each (pulled up, the probe became a merge join that
      // read the context); the order's walk is of the memories themselves, each checked as it is read.
      const value = plan.probe ? '' : `, CASE WHEN ${plan.check} THEN ${column} END AS value`;
      const matches = plan.probe
        ? `SELECT ${column} AS value, walk.sequence, walk.id FROM walk CROSS JOIN LATERAL (
            SELECT m.record, m.id FROM memories m
            WHERE m.context_id = $1 AND m.id = walk.id AND ${plan.check} LIMIT 1
          ) m`
        : 'SELECT value, sequence, id FROM walk WHERE value IS NOT NULL';
      statement = `WITH walk AS (
          SELECT ${plan.sequence} AS sequence, ${plan.id} AS id${value} FROM ${plan.from}
          WHERE ${plan.where}${keyset} ORDER BY ${plan.sequence}, ${plan.id} LIMIT ${workAt}
        ), page AS (${matches} LIMIT ${limitAt})
        (SELECT value, sequence, id, false AS stop FROM page ORDER BY sequence, id)
        UNION ALL
        (SELECT NULL, sequence, id, true FROM walk
          WHERE (SELECT count(*) FROM page) < COALESCE(${limitAt}::bigint, ${Number.MAX_SAFE_INTEGER})
          OFFSET ${work - 1} LIMIT 1)`;
    }
  }
  const rows = await sql.query<{
    value: string | null;
    sequence?: string | number;
    id?: string;
    stop: boolean;
  }>(statement, plan.params);
  const items: string[] = [];
  let stoppedAfter: FilteredPage<string>['stoppedAfter'];
  for (const row of rows.rows) {
    if (row.stop) stoppedAfter = { sequence: Number(row.sequence), id: row.id! };
    else items.push(row.value!);
  }
  return stoppedAfter === undefined ? { items } : { items, stoppedAfter };
}

export async function listFiltered(
  sql: Sql,
  contextId: string,
  filter: MemoryFilter,
  page: FilterPageOptions,
): Promise<FilteredPage<MemoryRecord>> {
  const found = await filteredPage(sql, contextId, filter, page, 'm.record');
  return { ...found, items: found.items.map((record) => JSON.parse(record) as MemoryRecord) };
}

export async function matchFiltered(
  sql: Sql,
  contextId: string,
  filter: MemoryFilter,
  page: FilterPageOptions,
): Promise<FilteredPage<string>> {
  return filteredPage(sql, contextId, filter, page, 'm.id');
}

/** The subset of `ids` passing the filter: probing each id's tags is bounded by the ids, whatever would drive. */
export async function matchIds(
  sql: Sql,
  contextId: string,
  filter: MemoryFilter,
  ids: readonly string[],
): Promise<string[]> {
  if (ids.length === 0) return [];
  const plan = await planOf(sql, contextId, filter, { drive: false });
  plan.params.push([...new Set(ids)]);
  const rows = await sql.query<{ id: string }>(
    `SELECT m.id FROM memories m WHERE ${plan.where} AND m.id = ANY($${plan.params.length}::text[])`,
    plan.params,
  );
  return rows.rows.map((row) => row.id);
}

export async function versionsOf(
  sql: Sql,
  contextId: string,
  id: string,
  window: VersionWindow = {},
): Promise<MemoryVersion[]> {
  // LIMIT NULL: no limit. Both walk the primary key (context, memory, version) from one end.
  const rows = await sql.query<{ version: number; record: string }>(
    window.newest
      ? `SELECT version, record FROM memory_versions WHERE context_id = $1 AND memory_id = $2
         ORDER BY version DESC LIMIT $3`
      : `SELECT version, record FROM memory_versions WHERE context_id = $1 AND memory_id = $2 AND version > $4
         ORDER BY version LIMIT $3`,
    window.newest
      ? [contextId, id, window.limit ?? null]
      : [contextId, id, window.limit ?? null, window.afterVersion ?? 0],
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
