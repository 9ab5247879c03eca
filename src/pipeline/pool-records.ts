import type { ArchiveStore } from '../store/archive-store-spec.ts';
import { BoundedMap, generationGroup } from '../store/bounded-map.ts';
import type { MemoryRecord } from '../types/memory-record.ts';

/**
 * The question path's records, kept per store handle while the archive does not change. A warm retrieve
 * parsed its 48 pool records from JSON every time, and every offline verifier rebuilt their texts; questions
 * about one archive keep meeting the same memories (half of a 300-question run's pool members had been in an
 * earlier pool at 10k), and a kept record also keeps the verifiers' texts derived from it (memoised per
 * record object: recordFullText in src/verify/candidate-snippet.ts, verifierDocumentText).
 *
 * Exact: an entry is kept under the `store.readGeneration(contextId)` it was read with and served only to a
 * read that sees the same generation (any write of the context by this handle, any commit by another
 * connection or process moves it); entries of older generations are never served again and age out. A
 * backend without a generation (or a read inside a transaction) keeps nothing. The records are SHARED
 * between questions: the pipeline only reads them, and nothing hands them out (the evidence copies what it
 * shows). Bounded by an estimate of their bytes; the oldest go first.
 */
const RECORD_BYTES = 32 * 1024 * 1024;

const caches = new WeakMap<ArchiveStore, BoundedMap<MemoryRecord>>();

/** `store.getMemories` (ids order, unknown ids skipped) through the per-handle cache. Read-only records. */
export async function poolRecords(
  store: ArchiveStore,
  contextId: string,
  ids: readonly string[],
): Promise<MemoryRecord[]> {
  const generation = store.readGeneration?.(contextId);
  if (generation === undefined || ids.length === 0) return store.getMemories(contextId, ids);
  let cache = caches.get(store);
  if (!cache) {
    // Twice the record: the verifiers' texts memoised on it are about its text again.
    cache = new BoundedMap<MemoryRecord>(RECORD_BYTES, (record) => 2 * approximateBytes(record));
    caches.set(store, cache);
  }
  // One group per (generation, context): the ids are looked up in it as they are.
  const group = generationGroup(generation, contextId);
  const kept = cache.group(group);
  const found = new Map<string, MemoryRecord>();
  const missing: string[] = [];
  for (const id of ids) {
    const hit = kept?.get(id)?.value;
    if (hit) found.set(id, hit);
    else missing.push(id);
  }
  if (missing.length > 0) {
    for (const record of await store.getMemories(contextId, missing)) {
      found.set(record.id, record);
      // SQLite reads outside a transaction: a write landing during the read moved the generation, so this
      // entry is never served again.
      cache.set(group, record.id, record);
    }
  }
  return ids.flatMap((id) => {
    const record = found.get(id);
    return record === undefined ? [] : [record];
  });
}

/** Rough bytes of a JSON value held in memory (strings as UTF-16, a fixed overhead per object and slot). */
function approximateBytes(value: unknown): number {
  if (typeof value === 'string') return 16 + 2 * value.length;
  if (typeof value !== 'object' || value === null) return 8;
  let bytes = 32;
  if (Array.isArray(value)) {
    for (const item of value) bytes += 8 + approximateBytes(item);
    return bytes;
  }
  // for-in over a parsed record's own keys (no prototype keys): Object.entries built an array per object.
  const record = value as Record<string, unknown>;
  for (const key in record) bytes += 8 + 2 * key.length + approximateBytes(record[key]);
  return bytes;
}
