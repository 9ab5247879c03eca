import type { MemoryRecord } from '../../types/memory-record.ts';
import { PairSet } from '../relations/record-pair.ts';

/** One changed record: the stored version before the change and the one after (absent when deleted). */
export interface RecordChange {
  id: string;
  before?: MemoryRecord;
  after?: MemoryRecord;
}

/**
 * What one relation type's incremental step hands back: `dirty` holds every record whose edges of the type
 * may have changed, `pairs` every pair of the type (after the change) touching a dirty record. Pairs away
 * from dirty records are unchanged by construction, so the store diff reads and writes only edges touching
 * `dirty`.
 */
export class TypeDelta {
  readonly dirty = new Set<string>();
  readonly pairs = new PairSet();

  markDirty(records: Iterable<{ id: string }>): void {
    for (const record of records) this.dirty.add(record.id);
  }
}
