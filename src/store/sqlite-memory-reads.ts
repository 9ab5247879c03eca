import type Database from 'better-sqlite3';
import type { MemoryRecord } from '../types/memory-record.ts';
import type { MemoryView, ViewKind } from '../types/view.ts';
import type {
  ContextInfo,
  ContextStats,
  FilteredPage,
  FilterPageOptions,
  MemoryFilter,
  MemoryVersion,
  VersionWindow,
} from './archive-store-spec.ts';
import { SqliteMemoryFilter } from './sqlite-memory-filter.ts';
import type { SqliteStoreStatements } from './sqlite-store-statements.ts';

/** The SQLite store's reads of contexts, memories, their versions, hashes and views. */
export class SqliteMemoryReads {
  private readonly filtered: SqliteMemoryFilter;

  constructor(
    db: Database.Database,
    private readonly statements: SqliteStoreStatements,
    private readonly run: <T>(work: () => T) => T,
  ) {
    this.filtered = new SqliteMemoryFilter(db);
  }

  async listContexts(options: { afterId?: string; limit?: number } = {}): Promise<ContextInfo[]> {
    const rows = this.run(() =>
      options.afterId === undefined
        ? this.statements.listContextFirstPage.all(options.limit ?? -1)
        : this.statements.listContextPage.all(options.afterId, options.limit ?? -1),
    ) as {
      id: string;
      memories: number;
      maxSequence: number | null;
    }[];
    return rows.map((row) =>
      row.maxSequence === null
        ? { id: row.id, memories: row.memories }
        : { id: row.id, memories: row.memories, maxSequence: row.maxSequence },
    );
  }

  async getMemory(contextId: string, id: string): Promise<MemoryRecord | undefined> {
    const row = this.run(() => this.statements.getRecord.get(contextId, id)) as
      | { record: string }
      | undefined;
    return row ? (JSON.parse(row.record) as MemoryRecord) : undefined;
  }

  async getMemories(contextId: string, ids: readonly string[]): Promise<MemoryRecord[]> {
    const rows = this.run(() =>
      ids.length === 0 ? [] : this.statements.getRecords.all(contextId, JSON.stringify(ids)),
    ) as {
      id: string;
      record: string;
    }[];
    const byId = new Map(rows.map((row) => [row.id, row.record]));
    return ids.flatMap((id) => {
      const record = byId.get(id);
      return record === undefined ? [] : [JSON.parse(record) as MemoryRecord];
    });
  }

  async listMemories(
    contextId: string,
    options: { afterSequence?: number; afterId?: string; limit?: number } = {},
  ): Promise<MemoryRecord[]> {
    const limit = options.limit ?? -1;
    const s = this.statements;
    const rows = this.run(() =>
      options.afterSequence === undefined
        ? s.listRecords.all({ contextId, limit })
        : options.afterId === undefined
          ? s.listRecordsAfter.all({ contextId, after: options.afterSequence, limit })
          : s.listRecordsAfterId.all({
              contextId,
              after: options.afterSequence,
              afterId: options.afterId,
              limit,
            }),
    ) as { record: string }[];
    return rows.map((row) => JSON.parse(row.record) as MemoryRecord);
  }

  async listFiltered(
    contextId: string,
    filter: MemoryFilter,
    page: FilterPageOptions = {},
  ): Promise<FilteredPage<MemoryRecord>> {
    const found = this.run(() => this.filtered.list(contextId, filter, page));
    return { ...found, items: found.items.map((row) => JSON.parse(row) as MemoryRecord) };
  }

  async matchFiltered(
    contextId: string,
    filter: MemoryFilter,
    page: FilterPageOptions = {},
  ): Promise<FilteredPage<string>> {
    return this.run(() => this.filtered.matchPage(contextId, filter, page));
  }

  async matchMemories(
    contextId: string,
    filter: MemoryFilter,
    options: { ids: readonly string[] },
  ): Promise<string[]> {
    return this.run(() => this.filtered.match(contextId, filter, options.ids));
  }

  async memoryVersions(contextId: string, id: string, window: VersionWindow = {}): Promise<MemoryVersion[]> {
    const limit = window.limit ?? -1;
    const rows = this.run(() =>
      window.newest
        ? this.statements.newestVersions.all(contextId, id, limit)
        : this.statements.listVersions.all(contextId, id, window.afterVersion ?? 0, limit),
    ) as { version: number; record: string }[];
    return rows.map((row) => ({ version: row.version, record: JSON.parse(row.record) as MemoryRecord }));
  }

  async maxSequence(contextId: string): Promise<number | undefined> {
    const row = this.run(() => this.statements.maxSequence.get(contextId)) as { n: number | null };
    return row.n ?? undefined;
  }

  async countMemories(contextId: string): Promise<number> {
    const row = this.run(() => this.statements.countMemories.get(contextId)) as { n: number } | undefined;
    return row?.n ?? 0;
  }

  async contextStats(contextId: string): Promise<ContextStats | undefined> {
    return this.run(() => {
      const context = this.statements.contextRow.get(contextId) as
        | { memories: number; last_write: string | null }
        | undefined;
      if (!context) return undefined;
      const byKind: Record<string, number> = {};
      for (const row of this.statements.kindCounts.all(contextId) as { kind: string; n: number }[]) {
        if (row.n > 0) byKind[row.kind] = row.n;
      }
      return {
        memories: context.memories,
        byKind,
        ...(context.last_write === null ? {} : { lastWrite: context.last_write }),
      };
    });
  }

  async getContentHashes(contextId: string, ids: readonly string[]): Promise<Map<string, string>> {
    const hashes = new Map<string, string>();
    const rows = this.run(() =>
      ids.length === 0 ? [] : this.statements.getHashes.all(contextId, JSON.stringify(ids)),
    ) as {
      id: string;
      content_hash: string;
    }[];
    const byId = new Map(rows.map((row) => [row.id, row.content_hash]));
    for (const id of ids) {
      const hash = byId.get(id);
      if (hash !== undefined) hashes.set(id, hash);
    }
    return hashes;
  }

  async getViews(contextId: string, memoryIds: readonly string[]): Promise<MemoryView[]> {
    const rows = this.run(() =>
      memoryIds.length === 0 ? [] : this.statements.getViews.all(contextId, JSON.stringify(memoryIds)),
    ) as (ViewRow & {
      memory_id: string;
    })[];
    const byMemory = new Map<string, MemoryView[]>();
    for (const row of rows) {
      const views = byMemory.get(row.memory_id) ?? [];
      views.push(toView(row.memory_id, row));
      byMemory.set(row.memory_id, views);
    }
    // Fresh objects per occurrence: a repeated id must not alias the same view object twice.
    return memoryIds.flatMap((id) => (byMemory.get(id) ?? []).map((view) => ({ ...view })));
  }
}

interface ViewRow {
  kind: ViewKind;
  key: string;
  text: string;
  uri: string | null;
}

function toView(memoryId: string, row: ViewRow): MemoryView {
  const view: MemoryView = { memoryId, kind: row.kind, key: row.key, text: row.text };
  if (row.uri !== null) view.uri = row.uri;
  return view;
}
