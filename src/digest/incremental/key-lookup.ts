import type { ArchiveStore } from '../../store/archive-store-spec.ts';
import type { MemoryRecord } from '../../types/memory-record.ts';

/** A (sequence, id) place in a key chain; need not hold a record (a deleted record's old place). */
export interface ChainPosition {
  sequence: number;
  id: string;
}

/**
 * The store lookups of one incremental update, cached: the relation types ask for overlapping key groups
 * (a stated date serves same_record and record_grounding), and neighbours found once are not asked again.
 */
export class KeyLookup {
  private readonly groups = new Map<string, { records: MemoryRecord[]; complete: boolean }>();
  /** Group reads in flight, by key and limit: the types run together and may ask for one at once. */
  private readonly reading = new Map<string, Promise<unknown>>();
  private readonly adjacent_ = new Map<string, Promise<MemoryRecord | undefined>>();

  constructor(
    readonly store: ArchiveStore,
    readonly contextId: string,
  ) {}

  /** The records holding `key` in (sequence, id) order; at most `limit` (complete when fewer come back). */
  async group(key: string, limit?: number): Promise<{ records: MemoryRecord[]; complete: boolean }> {
    const hit = this.groups.get(key);
    if (hit && (hit.complete || (limit !== undefined && hit.records.length >= limit))) {
      return limit === undefined || hit.complete
        ? hit
        : { records: hit.records.slice(0, limit), complete: false };
    }
    const flight = `${key}\u0000${limit ?? ''}`;
    const pending = this.reading.get(flight);
    if (pending) {
      await pending;
      return this.group(key, limit);
    }
    const read = this.store.findByKeys(this.contextId, [key], limit === undefined ? {} : { limit });
    this.reading.set(flight, read);
    try {
      const records = await read;
      const found = { records, complete: limit === undefined || records.length < limit };
      // A longer or complete read of the key (by another type) is not replaced by a shorter one.
      const known = this.groups.get(key);
      if (!known || (!known.complete && (found.complete || records.length > known.records.length))) {
        this.groups.set(key, found);
      }
      return found;
    } finally {
      this.reading.delete(flight);
    }
  }

  /** The whole group of `key`. */
  async all(key: string): Promise<MemoryRecord[]> {
    return (await this.group(key)).records;
  }

  async adjacent(
    key: string,
    position: ChainPosition,
    direction: 'before' | 'after',
  ): Promise<MemoryRecord | undefined> {
    const cacheKey = `${key}\u0000${direction}\u0000${position.sequence}\u0000${position.id}`;
    let found = this.adjacent_.get(cacheKey);
    if (!found) {
      found = this.store.adjacentByKey(this.contextId, key, position, direction);
      this.adjacent_.set(cacheKey, found);
    }
    return found;
  }

  /**
   * Up to `count` records holding `key` next to `position`, nearest first (one store call when the store
   * can walk a run; adjacent steps otherwise).
   */
  async walk(
    key: string,
    position: ChainPosition,
    direction: 'before' | 'after',
    count: number,
  ): Promise<MemoryRecord[]> {
    if (this.store.adjacentRunByKey) {
      return this.store.adjacentRunByKey(this.contextId, key, position, direction, count);
    }
    const found: MemoryRecord[] = [];
    let cursor: ChainPosition = position;
    while (found.length < count) {
      const next = await this.adjacent(key, cursor, direction);
      if (!next) break;
      found.push(next);
      cursor = { sequence: next.sequence, id: next.id };
    }
    return found;
  }

  /** The records holding a key that starts with `prefix`, at most `limit` (complete when fewer come back). */
  async prefixGroup(prefix: string, limit: number): Promise<{ records: MemoryRecord[]; complete: boolean }> {
    const hits = await this.store.findKeyRange(this.contextId, prefix, `${prefix}\uffff`, { limit });
    return { records: hits.map((hit) => hit.record), complete: hits.length < limit };
  }

  async range(from: string, to: string): Promise<MemoryRecord[]> {
    return (await this.store.findKeyRange(this.contextId, from, to)).map((hit) => hit.record);
  }
}
