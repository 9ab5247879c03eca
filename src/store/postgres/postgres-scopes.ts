import type { MemoryRecord } from '../../types/memory-record.ts';
import type { ContextStats, MemoryFilter, MemoryVersion } from '../archive-store-spec.ts';
import { filterTags, scopeTags, upperBound } from '../memory-scope-tags.ts';
import type { Sql } from './postgres-session.ts';

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
  for (const record of records) {
    for (const tag of scopeTags(record)) {
      ids.push(record.id);
      names.push(tag.name);
      values.push(tag.value);
    }
  }
  if (ids.length > 0) {
    await sql.query(
      `INSERT INTO memory_tags (context_id, memory_id, name, value)
       SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[]) ON CONFLICT DO NOTHING`,
      [contextId, ids, names, values],
    );
  }
}

/** The filter as SQL conditions on `memories` ($1 is the context id; parameters continue from `params`). */
function conditions(filter: MemoryFilter, params: unknown[]): string {
  const parts: string[] = [];
  if (filter.from !== undefined) {
    params.push(filter.from);
    parts.push(`"timestamp" >= $${params.length}`);
  }
  if (filter.to !== undefined) {
    params.push(upperBound(filter.to));
    parts.push(`"timestamp" <= $${params.length}`);
  }
  for (const tag of filterTags(filter)) {
    params.push(tag.name, tag.value);
    parts.push(
      `id IN (SELECT memory_id FROM memory_tags WHERE context_id = $1 AND name = $${params.length - 1} AND value = $${params.length})`,
    );
  }
  return parts.map((part) => ` AND ${part}`).join('');
}

export async function listFiltered(
  sql: Sql,
  contextId: string,
  filter: MemoryFilter,
  page: { afterSequence?: number; afterId?: string; limit?: number },
): Promise<MemoryRecord[]> {
  const params: unknown[] = [contextId];
  let where = conditions(filter, params);
  if (page.afterSequence !== undefined) {
    params.push(page.afterSequence);
    const at = params.length;
    if (page.afterId === undefined) where += ` AND sequence > $${at}`;
    else {
      params.push(page.afterId);
      where += ` AND (sequence > $${at} OR (sequence = $${at} AND id > $${at + 1}))`;
    }
  }
  params.push(page.limit ?? null);
  const rows = await sql.query<{ record: string }>(
    `SELECT record FROM memories WHERE context_id = $1${where} ORDER BY sequence, id LIMIT $${params.length}`,
    params,
  );
  return rows.rows.map((row) => JSON.parse(row.record) as MemoryRecord);
}

export async function matchFiltered(
  sql: Sql,
  contextId: string,
  filter: MemoryFilter,
  options: { ids?: readonly string[]; limit?: number },
): Promise<string[]> {
  const params: unknown[] = [contextId];
  const where = conditions(filter, params);
  if (options.ids !== undefined) {
    if (options.ids.length === 0) return [];
    params.push([...new Set(options.ids)]);
    const rows = await sql.query<{ id: string }>(
      `SELECT id FROM memories WHERE context_id = $1${where} AND id = ANY($${params.length}::text[])`,
      params,
    );
    return rows.rows.map((row) => row.id);
  }
  params.push(options.limit ?? null);
  const rows = await sql.query<{ id: string }>(
    `SELECT id FROM memories WHERE context_id = $1${where} ORDER BY sequence, id LIMIT $${params.length}`,
    params,
  );
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
