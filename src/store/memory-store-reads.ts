import type { MemoryRecord } from '../types/memory-record.ts';
import type { MemoryView } from '../types/view.ts';
import type { ContextStats, MemoryFilter, MemoryVersion } from './archive-store-spec.ts';
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
    options: { afterSequence?: number; afterId?: string; limit?: number; filter?: MemoryFilter } = {},
  ): Promise<MemoryRecord[]> {
    this.assertOpen();
    const memories = this.contexts.get(contextId)?.memories;
    if (!memories) return [];
    const after = options.afterSequence ?? Number.NEGATIVE_INFINITY;
    const afterId = options.afterSequence === undefined ? undefined : options.afterId;
    const filter = options.filter;
    const records = [...memories.values()]
      .map((stored) => stored.record)
      .filter(
        (record) =>
          (record.sequence > after ||
            (record.sequence === after && afterId !== undefined && compareStrings(record.id, afterId) > 0)) &&
          (filter === undefined || recordMatches(record, filter)),
      )
      .sort((x, y) => x.sequence - y.sequence || compareStrings(x.id, y.id));
    return structuredClone(options.limit === undefined ? records : records.slice(0, options.limit));
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
    options: { ids?: readonly string[]; limit?: number },
  ): Promise<string[]> {
    this.assertOpen();
    const memories = this.contexts.get(contextId)?.memories;
    if (!memories) return [];
    if (options.ids !== undefined) {
      return [...new Set(options.ids)].filter((id) => {
        const stored = memories.get(id);
        return stored !== undefined && recordMatches(stored.record, filter);
      });
    }
    // The in-memory store is for small archives: a scan is its index.
    const found = await this.listMemories(contextId, {
      filter,
      ...(options.limit === undefined ? {} : { limit: options.limit }),
    });
    return found.map((record) => record.id);
  }

  async memoryVersions(contextId: string, id: string): Promise<MemoryVersion[]> {
    this.assertOpen();
    const history = this.contexts.get(contextId)?.versions.get(id) ?? [];
    return structuredClone(history.map((record, index) => ({ version: index + 1, record })));
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
