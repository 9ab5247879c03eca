import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { ArchiveStore, LexicalSearchOptions } from '../../src/store/archive-store-spec.ts';
import { createSqliteStore } from '../../src/store/sqlite-store.ts';

/**
 * A lexical search stopped by the store's work bound (docs/store-lexical-index.md "Work bounds") reaches the
 * question's trace as `lexical_search_bounded`. The bound itself (16,384 candidates scored per kind) needs an
 * archive far larger than a test's, so the store here passes every search a smaller one (LexicalSearchOptions
 * .work), through the real SQLite search.
 */
const dir = mkdtempSync(join(tmpdir(), 'graphmemix-lexbound-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function withWork(store: ArchiveStore, work: NonNullable<LexicalSearchOptions['work']>): ArchiveStore {
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key === 'searchLexical')
        return (contextId: string, query: string, options: LexicalSearchOptions) =>
          target.searchLexical(contextId, query, { ...options, work });
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('lexical_search_bounded', () => {
  it('flags a question whose lexical search hit the work bound, and only such a question', async () => {
    const file = join(dir, 'bounded.db');
    const writer = await openGraphmemix({ db: file, readWorkers: false });
    await writer.addMemories(
      'u',
      Array.from({ length: 400 }, (_, i) => ({
        id: `m${i}`,
        text: i === 17 ? 'the harbour lighthouse at dusk' : `common chatter number ${i % 7}`,
        timestamp: `2024-01-${String(1 + (i % 28)).padStart(2, '0')}`,
      })),
    );
    await writer.close();
    const ask = async (work: LexicalSearchOptions['work'], prompt: string) => {
      const store = createSqliteStore(file);
      const gm = await openGraphmemix({
        db: file,
        store: work ? withWork(store, work) : store,
        readWorkers: false,
      });
      const result = await gm.retrieve('u', { prompt }, { k: 5 });
      const searched = await gm.searchMemories('u', prompt, { k: 5 });
      await gm.close();
      await store.close();
      return { ...result, searched };
    };
    const tied = await ask({ scored: 20 }, 'common chatter');
    expect(tied.trace.flags).toContain('lexical_search_bounded');
    expect(tied.evidence.length).toBeGreaterThan(0);
    // The flat search says it too (HTTP /v1/search and MCP search_memories serve these flags).
    expect(tied.searched.flags).toEqual(['lexical_search_bounded']);
    expect(tied.searched.hits).toHaveLength(5);
    // Unbounded (the default bounds are far above 400 memories): the same question is exact, not flagged.
    const exact = await ask(undefined, 'common chatter');
    expect(exact.trace.flags).not.toContain('lexical_search_bounded');
    expect(exact.searched.flags).toEqual([]);
    // A rare word's list is read whole within the same small bound: nothing left that could rank.
    const rare = await ask({ scored: 20 }, 'lighthouse');
    expect(rare.trace.flags).not.toContain('lexical_search_bounded');
  }, 60_000);
});
