import type { MemoryRecord } from '../types/memory-record.ts';
import type { MemoryView } from '../types/view.ts';
import type {
  ContextStats,
  FilteredPage,
  FilterPageOptions,
  MemoryFilter,
  MemoryVersion,
  VersionWindow,
} from './archive-store-spec.ts';
import { pageBounds } from './filter-plan.ts';
import { recordMatches } from './memory-scope-tags.ts';
import { type ContextData, contextInfo } from './memory-store-context-data.ts';
import { compareStrings } from './store-rules.ts';

/** The in-memory store's reads of memories, their versions, hashes and views (clones, never stored objects). */
export class MemoryStoreReads {
  constructor(
    private readonly contexts: ReadonlyMap<string, ContextData>,
    private readonly assertOpen: () => void,
  ) {}

  async getMemory(contextId: string, id: string): Promise<MemoryRecord | undefined> {
    this.assertOpen();
    const stored = this.contexts.get(contextId)?.memories.get(id);
    return stored ? structuredClone(stored.record) : undefined;
  }

  async getMemories(contextId: string, ids: readonly string[]): Promise<MemoryRecord[]> {
    this.assertOpen();
    const memories = this.contexts.get(contextId)?.memories;
    if (!memories) return [];
    return ids.flatMap((id) => {
      const stored = memories.get(id);
      return stored ? [structuredClone(stored.record)] : [];
    });
  }

  async listMemories(
    contextId: string,
    options: { afterSequence?: number; afterId?: string; limit?: number } = {},
  ): Promise<MemoryRecord[]> {
    this.assertOpen();
    const records = this.after(contextId, options);
    return structuredClone(options.limit === undefined ? records : records.slice(0, options.limit));
  }

  /**
   * The in-memory store is for small archives: a walk in page order is its index. Each record walked is one
   * unit of `work`, as a walk of the other stores counts its rows.
   */
  async listFiltered(
    contextId: string,
    filter: MemoryFilter,
    page: FilterPageOptions = {},
  ): Promise<FilteredPage<MemoryRecord>> {
    this.assertOpen();
    const { limit, work } = pageBounds(page);
    const items: MemoryRecord[] = [];
    if (limit === 0) return { items };
    let walked = 0;
    for (const record of this.after(contextId, page)) {
      if (recordMatches(record, filter)) {
        items.push(structuredClone(record));
        if (items.length >= limit) return { items };
      }
      if (++walked === work) return { items, stoppedAfter: { sequence: record.sequence, id: record.id } };
    }
    return { items };
  }

  async matchFiltered(
    contextId: string,
    filter: MemoryFilter,
    page: FilterPageOptions = {},
  ): Promise<FilteredPage<string>> {
    const found = await this.listFiltered(contextId, filter, page);
    return { ...found, items: found.items.map((record) => record.id) };
  }

  /** The context's records after the keyset position, in (sequence, id) order (stored objects: clone them). */
  private after(contextId: string, page: { afterSequence?: number; afterId?: string }): MemoryRecord[] {
    const memories = this.contexts.get(contextId)?.memories;
    if (!memories) return [];
    const after = page.afterSequence ?? Number.NEGATIVE_INFINITY;
    const afterId = page.afterSequence === undefined ? undefined : page.afterId;
    return [...memories.values()]
      .map((stored) => stored.record)
      .filter(
        (record) =>
          record.sequence > after ||
          (record.sequence === after && afterId !== undefined && compareStrings(record.id, afterId) > 0),
      )
      .sort((x, y) => x.sequence - y.sequence || compareStrings(x.id, y.id));
  }

  async contextStats(contextId: string): Promise<ContextStats | undefined> {
    this.assertOpen();
    const data = this.contexts.get(contextId);
    if (!data) return undefined;
    const byKind: Record<string, number> = {};
    for (const { record } of data.memories.values()) byKind[record.kind] = (byKind[record.kind] ?? 0) + 1;
    return {
      memories: data.memories.size,
      byKind,
      ...(data.lastWrite === undefined ? {} : { lastWrite: data.lastWrite }),
    };
  }

  async matchMemories(
    contextId: string,
    filter: MemoryFilter,
    options: { ids: readonly string[] },
  ): Promise<string[]> {
    this.assertOpen();
    const memories = this.contexts.get(contextId)?.memories;
    if (!memories) return [];
    return [...new Set(options.ids)].filter((id) => {
      const stored = memories.get(id);
      return stored !== undefined && recordMatches(stored.record, filter);
    });
  }

  async memoryVersions(contextId: string, id: string, window: VersionWindow = {}): Promise<MemoryVersion[]> {
    this.assertOpen();
    const history = (this.contexts.get(contextId)?.versions.get(id) ?? []).map((record, index) => ({
      version: index + 1,
      record,
    }));
    const limit = window.limit ?? history.length;
    const picked = window.newest
      ? history.slice(Math.max(0, history.length - limit)).reverse()
      : history.filter((version) => version.version > (window.afterVersion ?? 0)).slice(0, limit);
    return structuredClone(picked);
  }

  async maxSequence(contextId: string): Promise<number | undefined> {
    this.assertOpen();
    return this.contexts.get(contextId) === undefined
      ? undefined
      : contextInfo(contextId, this.contexts.get(contextId)!).maxSequence;
  }

  async countMemories(contextId: string): Promise<number> {
    this.assertOpen();
    return this.contexts.get(contextId)?.memories.size ?? 0;
  }

  async getContentHashes(contextId: string, ids: readonly string[]): Promise<Map<string, string>> {
    this.assertOpen();
    const hashes = new Map<string, string>();
    const memories = this.contexts.get(contextId)?.memories;
    for (const id of ids) {
      const stored = memories?.get(id);
      if (stored) hashes.set(id, stored.contentHash);
    }
    return hashes;
  }

  async getViews(contextId: string, memoryIds: readonly string[]): Promise<MemoryView[]> {
    this.assertOpen();
    const memories = this.contexts.get(contextId)?.memories;
    if (!memories) return [];
    return structuredClone(memoryIds.flatMap((id) => memories.get(id)?.views ?? []));
  }
}
