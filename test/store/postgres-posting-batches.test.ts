import { afterAll, describe, expect, it } from 'vitest';
import type { ArchiveStore, MemoryWrite } from '../../src/store/archive-store-spec.ts';
import { openStore } from '../../src/store/open-store.ts';
import { postgresLexicalCounters } from '../../src/store/postgres/postgres-lexical-search.ts';
import { postgresPostingBatchCounters } from '../../src/store/postgres/postgres-posting-batches.ts';
import { openPostgresStore, type PostgresArchiveStore } from '../../src/store/postgres/postgres-store.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';
import type { ViewHit } from '../../src/types/view.ts';
import { countRoundTrips, createTestDatabase, dropTestDatabases, PG_SKIP } from './postgres-test-db.ts';

/*
 * The PostgreSQL lexical search keeps the posting batches it read under the read generation of its read unit
 * (src/store/postgres/postgres-posting-batches.ts). Searches must return exactly what a fresh index returns
 * (bit-identical scores) when served from kept batches, after writes by another process (the plan assumed
 * the generation the store last saw and must read the skipped lists after all), and outside read units,
 * where nothing is kept or served.
 */
afterAll(dropTestDatabases);
if (PG_SKIP) console.warn(`[postgres posting batches skipped] ${PG_SKIP}`);

const roundTrips = countRoundTrips();

function write(id: string, index: number, extra = ''): MemoryWrite {
  const record: MemoryRecord = {
    id,
    contextId: 'ctx',
    kind: 'message',
    sequence: index,
    text: id,
    assets: [],
  };
  // "harbor" in every memory (long list: read in rounds), rarer words in some, plus a spread of others.
  const words = ['harbor', index % 3 === 0 ? 'lantern' : 'pebble', index % 7 === 0 ? 'violet' : 'cinder'];
  for (let i = 0; i < (index % 5) + 1; i++) words.push(`w${(index * 31 + i * 17) % 97}`);
  if (extra) words.push(extra);
  return {
    record,
    views: [
      { memoryId: id, kind: 'text', key: 'main', text: words.join(' ') },
      { memoryId: id, kind: 'caption', key: 'c', text: `harbor ${words[1]}` },
    ],
    contentHash: `${id}-${extra}`,
  };
}

const QUERIES = ['harbor lantern violet', 'harbor w5 w40 pebble', 'cinder harbor', 'violet w3 harbor'];

async function searchAll(store: ArchiveStore, inUnit: boolean): Promise<ViewHit[][]> {
  const out: ViewHit[][] = [];
  for (const query of QUERIES) {
    for (const limit of [3, 24]) {
      const search = () => store.searchLexical('ctx', query, { limit });
      out.push(await (inUnit ? store.unitOfWork!('ctx', search, { read: true }) : search()));
    }
  }
  return out;
}

describe.skipIf(PG_SKIP !== undefined)('PostgreSQL posting batches by read generation', () => {
  it('serves kept batches exactly, rereads after another process wrote, keeps nothing outside read units', async () => {
    const url = await createTestDatabase();
    const store: PostgresArchiveStore = await openPostgresStore({ url });
    const other = await openPostgresStore({ url });
    const reference = await openStore('memory:');
    try {
      const writes = Array.from({ length: 400 }, (_, i) => write(`n${i}`, i));
      for (const target of [other, reference]) await target.writeMemories('ctx', writes);

      const served = postgresPostingBatchCounters.batchesServed;
      roundTrips.reset();
      expect(await searchAll(store, true)).toEqual(await searchAll(reference, false));
      const cold = roundTrips.count;
      expect(postgresLexicalCounters.rounds).toBeGreaterThan(0);

      roundTrips.reset();
      expect(await searchAll(store, true)).toEqual(await searchAll(reference, false));
      expect(postgresPostingBatchCounters.batchesServed).toBeGreaterThan(served);
      expect(roundTrips.count).toBeLessThan(cold); // rounds served from kept batches cost no statement

      // Another process adds, rewrites and deletes: every list changes (df, postings, lengths).
      const changes = [
        write('n0', 0, 'harbor'),
        write('late1', 400, 'violet'),
        write('late2', 401, 'lantern'),
      ];
      for (const target of [other, reference]) {
        await target.writeMemories('ctx', changes);
        expect(await target.deleteMemory('ctx', 'n5')).toBe(true);
      }
      const reread = postgresLexicalCounters.keptListsReread;
      expect(await searchAll(store, true)).toEqual(await searchAll(reference, false));
      expect(postgresLexicalCounters.keptListsReread).toBeGreaterThan(reread);
      expect(await searchAll(store, true)).toEqual(await searchAll(reference, false));

      // Outside a read unit nothing is served.
      const before = postgresPostingBatchCounters.batchesServed;
      expect(await searchAll(store, false)).toEqual(await searchAll(reference, false));
      expect(postgresPostingBatchCounters.batchesServed).toBe(before);
    } finally {
      await store.close();
      await other.close();
      await reference.close();
    }
  }, 60_000);
});
