import type { ArchiveStore } from '../store/archive-store-spec.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import { COLLECT_FROM, collectGarbageIfGrown } from './collect-garbage.ts';

/** Records per listMemories page. */
const PAGE = 5000;

/**
 * Every record of a context, in (sequence, id) order, read page by page (`pause` awaited after each, when
 * given). Maintenance only (full rebuild, compaction): it walks the whole context, which no write or question
 * may do.
 */
export async function loadRecords(
  store: ArchiveStore,
  contextId: string,
  pause?: () => Promise<void>,
): Promise<MemoryRecord[]> {
  const records: MemoryRecord[] = [];
  for await (const page of recordPages(store, contextId, PAGE)) {
    records.push(...page);
    // Each record's JSON text is garbage once parsed: a large load collects as it grows (collect-garbage.ts).
    if (records.length >= COLLECT_FROM) collectGarbageIfGrown();
    await pause?.();
  }
  return records;
}

/**
 * A context's records in pages of `size`, in (sequence, id) order, each page read when the caller asks for
 * it; the last page is shorter than `size` (possibly empty).
 */
export async function* recordPages(
  store: ArchiveStore,
  contextId: string,
  size: number,
): AsyncGenerator<MemoryRecord[]> {
  let last: MemoryRecord | undefined;
  for (;;) {
    // Keyset paging on (sequence, id): sources imported separately may reuse sequence numbers.
    const page = await store.listMemories(
      contextId,
      last === undefined ? { limit: size } : { afterSequence: last.sequence, afterId: last.id, limit: size },
    );
    yield page;
    if (page.length < size) return;
    last = page[page.length - 1]!;
  }
}
