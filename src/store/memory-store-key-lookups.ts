import type { MemoryRecord } from '../types/memory-record.ts';
import { type KeyedRecord, MEDIA_PENDING_KEY, type PendingMediaRef } from './archive-store-spec.ts';
import { MEDIA_KEY } from './media-folder.ts';
import type { ContextData } from './memory-store-context-data.ts';
import { compareStrings } from './store-rules.ts';

/** The in-memory store's reads by relation lookup key (memory-key-index.ts), pending media among them. */
export class MemoryStoreKeyLookups {
  constructor(
    private readonly contexts: ReadonlyMap<string, ContextData>,
    private readonly assertOpen: () => void,
  ) {}

  async findByKeys(
    contextId: string,
    keys: readonly string[],
    options: { limit?: number } = {},
  ): Promise<MemoryRecord[]> {
    this.assertOpen();
    const data = this.contexts.get(contextId);
    if (!data) return [];
    const found = data.keys.find(keys, (id) => data.memories.get(id)?.record);
    return structuredClone(options.limit === undefined ? found : found.slice(0, options.limit));
  }

  /** In memory the whole archive is already held: the contexts are walked in id order (no I/O at open). */
  /** In memory every context is asked (a test backend: no index to keep). */
  async heldMediaKeys(keys: readonly string[]): Promise<Set<string>> {
    this.assertOpen();
    const held = new Set<string>();
    for (const key of keys) {
      if (!key.startsWith(MEDIA_KEY)) continue;
      for (const data of this.contexts.values()) {
        if (data.keys.find([key], (id) => data.memories.get(id)?.record).length > 0) {
          held.add(key);
          break;
        }
      }
    }
    return held;
  }

  async listPendingMedia(options: { limit: number; after?: PendingMediaRef }): Promise<PendingMediaRef[]> {
    this.assertOpen();
    const out: PendingMediaRef[] = [];
    const after = options.after;
    for (const contextId of [...this.contexts.keys()].sort(compareStrings)) {
      if (out.length >= options.limit) break;
      if (after !== undefined && compareStrings(contextId, after.contextId) < 0) continue;
      const data = this.contexts.get(contextId)!;
      const ids = data.keys
        .find([MEDIA_PENDING_KEY], (id) => data.memories.get(id)?.record)
        .map((record) => record.id)
        .sort(compareStrings);
      for (const id of ids) {
        if (after !== undefined && contextId === after.contextId && compareStrings(id, after.id) <= 0)
          continue;
        if (out.length >= options.limit) break;
        out.push({ contextId, id });
      }
    }
    return out;
  }

  async adjacentByKey(
    contextId: string,
    key: string,
    position: { sequence: number; id: string },
    direction: 'before' | 'after',
  ): Promise<MemoryRecord | undefined> {
    this.assertOpen();
    const data = this.contexts.get(contextId);
    if (!data) return undefined;
    const found = data.keys.adjacent(key, position, direction, (id) => data.memories.get(id)?.record);
    return found ? structuredClone(found) : undefined;
  }

  async findKeyRange(
    contextId: string,
    from: string,
    to: string,
    options: { limit?: number } = {},
  ): Promise<KeyedRecord[]> {
    this.assertOpen();
    const data = this.contexts.get(contextId);
    if (!data) return [];
    return data.keys.range(from, to, options.limit).map(({ key, id }) => ({
      key,
      record: structuredClone(data.memories.get(id)!.record),
    }));
  }
}
