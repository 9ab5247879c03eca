import type { ArchiveStore } from '../store/archive-store-spec.ts';
import type { MemoryRecord } from '../types/memory-record.ts';

/** Records per listMemories page. */
const PAGE = 5000;

/**
 * Every record of a context, in (sequence, id) order, read page by page. Maintenance only (full rebuild,
 * compaction): it walks the whole context, which no write or question may do.
 */
export async function loadRecords(store: ArchiveStore, contextId: string): Promise<MemoryRecord[]> {
  const records: MemoryRecord[] = [];
  let last: MemoryRecord | undefined;
  for (;;) {
    // Keyset paging on (sequence, id): sources imported separately may reuse sequence numbers.
    const page = await store.listMemories(
      contextId,
      last === undefined ? { limit: PAGE } : { afterSequence: last.sequence, afterId: last.id, limit: PAGE },
    );
    records.push(...page);
    if (page.length < PAGE) return records;
    last = page[page.length - 1]!;
  }
}
