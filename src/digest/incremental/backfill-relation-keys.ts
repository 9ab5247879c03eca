import type { ArchiveStore } from '../../store/archive-store-spec.ts';
import { recordPages } from '../load-records.ts';
import { relationKeys } from './relation-keys.ts';

/** Records per page. */
const PAGE = 5000;

/**
 * Writes the relation keys of every stored record of a context (stores written before keys existed, or by
 * code that did not pass them). It rewrites each record with its stored content hash, which the store
 * treats as unchanged: only the keys are stored, views and vectors stay. Precondition: no other writer
 * changes the context meanwhile (a record changed between the read and the write would be replaced by its
 * older version). Returns the number of records keyed.
 */
export async function backfillRelationKeys(store: ArchiveStore, contextId: string): Promise<number> {
  let keyed = 0;
  for await (const page of recordPages(store, contextId, PAGE)) {
    const hashes = await store.getContentHashes(
      contextId,
      page.map((record) => record.id),
    );
    const writes = page
      .filter((record) => hashes.has(record.id))
      .map((record) => ({
        record,
        views: [],
        contentHash: hashes.get(record.id)!,
        keys: relationKeys(record),
      }));
    await store.writeMemories(contextId, writes);
    keyed += writes.length;
  }
  return keyed;
}
