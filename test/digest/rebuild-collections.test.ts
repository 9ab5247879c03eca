import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { buildRelations } from '../../src/digest/build-relations.ts';
import { ingestItems } from '../../src/digest/ingest.ts';
import { loadRecords } from '../../src/digest/load-records.ts';
import type { ImportItem } from '../../src/importers/importer-spec.ts';
import type { ArchiveStore } from '../../src/store/archive-store-spec.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';

/**
 * Where a full rebuild collects garbage (collect-garbage.ts), with COLLECT_FROM made small: a context of
 * COLLECT_FROM memories or more is collected before its load, once its records are dropped, once its documents
 * are (the TF-IDF space is built) and once the kNN pass is over, and asks for a collection if its heap grew
 * after each page of the load and each schema type; a smaller one does neither.
 */
const collections = vi.hoisted(() => ({ now: 0, ifGrown: 0 }));
vi.mock('../../src/digest/collect-garbage.ts', () => ({
  COLLECT_FROM: 30,
  COLLECT_GROWTH_BYTES: 1,
  collectGarbage: () => {
    collections.now++;
    return true;
  },
  collectGarbageIfGrown: () => {
    collections.ifGrown++;
    return true;
  },
  garbageCollectionStats: () => ({ collections: collections.now + collections.ifGrown, seconds: 0 }),
}));

const dir = mkdtempSync(join(tmpdir(), 'gm-rebuild-collections-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeEach(() => {
  collections.now = 0;
  collections.ifGrown = 0;
});

function items(contextId: string, count: number): ImportItem[] {
  return Array.from({ length: count }, (_, i) => ({
    type: 'record',
    record: {
      id: `${contextId}${String(i).padStart(3, '0')}`,
      contextId,
      kind: 'message',
      sequence: i,
      role: i % 2 === 0 ? 'user' : 'assistant',
      sessionId: `s${Math.floor(i / 10)}`,
      roundId: `r${Math.floor(i / 2)}`,
      text: `turn ${i} about lake ${i % 7} and hill ${i % 5}`,
      assets: [],
    } as unknown as MemoryRecord,
    source: { file: 'fixture.jsonl', line: i + 1 },
  }));
}

/** A store holding `counts` memories per context (no relations built), counters reset, closed after `run`. */
async function withImported(
  file: string,
  counts: Record<string, number>,
  run: (store: ArchiveStore) => Promise<void>,
): Promise<void> {
  const store = await openStore(join(dir, file));
  try {
    for (const [contextId, count] of Object.entries(counts)) {
      await ingestItems(store, items(contextId, count), { relations: false });
    }
    collections.now = 0;
    collections.ifGrown = 0;
    await run(store);
  } finally {
    await store.close();
  }
}

describe('collections of a full rebuild', () => {
  it('a large context: before the load, in it, after the records, the documents and the pass', async () => {
    await withImported('large.db', { big: 50 }, async (store) => {
      const built = await buildRelations(store, 'big');
      expect(built.counts.semantic_knn).toBeGreaterThan(0);
      // Before the load, after the records, after the space, after the pass.
      expect(collections.now).toBe(4);
      // After the load's one page and each of the six schema types.
      expect(collections.ifGrown).toBe(7);
    });
  });

  it('a small context: none', async () => {
    await withImported('small.db', { few: 12 }, async (store) => {
      await buildRelations(store, 'few');
      expect(collections).toEqual({ now: 0, ifGrown: 0 });
    });
  });

  it('a load asks after each page once it holds COLLECT_FROM records', async () => {
    await withImported('load.db', { load: 45, few: 12 }, async (store) => {
      expect(await loadRecords(store, 'few')).toHaveLength(12);
      expect(collections).toEqual({ now: 0, ifGrown: 0 });
      expect(await loadRecords(store, 'load')).toHaveLength(45);
      expect(collections).toEqual({ now: 0, ifGrown: 1 });
    });
  });
});
