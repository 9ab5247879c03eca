import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Bm25Index } from '../../src/retrieval/bm25-index.ts';
import { createSqliteStore } from '../../src/store/sqlite-store.ts';
import { write } from './store-conformance.ts';

/**
 * The search caches of a SQLite connection (postings pages, term statistics, field statistics, documents:
 * search-lexical-index.ts) never answer from a state the database has left: writes by this connection and
 * by another connection to the same file are seen by the next search, exactly as a fresh Bm25Index.
 */
const dir = mkdtempSync(join(tmpdir(), 'graphmemix-lexcache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const texts = (from: number, count: number, word: string) =>
  Array.from(
    { length: count },
    (_, i) => `${word} item ${from + i} ${i % 3 === 0 ? 'apple' : 'pear'} ${word}`,
  );

type Store = ReturnType<typeof createSqliteStore>;

/** Memories written so far (`all`, what a fresh Bm25Index is built from) and `add`, which writes `count` more. */
function adder() {
  const all: { id: string; text: string }[] = [];
  let next = 0;
  const add = async (store: Store, count: number, word: string) => {
    const batch = texts(next, count, word).map((text, i) => ({ id: `m${next + i}`, text }));
    await store.writeMemories(
      'ctx',
      batch.map((m, i) => write('ctx', m.id, m.text, next + i)),
    );
    next += count;
    all.push(...batch);
  };
  return { all, add };
}

async function expected(all: { id: string; text: string }[], query: string) {
  const index = Bm25Index.build(
    all.flatMap((m) => [
      { memoryId: m.id, kind: 'text' as const, key: 'main', text: m.text },
      { memoryId: m.id, kind: 'metadata' as const, key: 'main', text: `meta ${m.id}` },
    ]),
  );
  return index.search(query, { limit: 20 });
}

describe('lexical search caches (SQLite)', () => {
  it('see writes of this connection and of another one', async () => {
    const file = join(dir, 'archive.db');
    const reader = createSqliteStore(file);
    const writer = createSqliteStore(file);
    const { all, add } = adder();
    let step = 0;
    const check = async (query: string) => {
      step++;
      const got = await reader.searchLexical('ctx', query, { limit: 20 });
      // A fresh connection (empty caches) and a fresh in-memory index agree with the warm reader.
      const fresh = createSqliteStore(file);
      expect(got, `step ${step}`).toEqual(await fresh.searchLexical('ctx', query, { limit: 20 }));
      await fresh.close();
      expect(got, `step ${step}`).toEqual(await expected(all, query));
    };
    await add(writer, 200, 'alpha');
    // Warm the reader's caches, twice (the second search reads only from them).
    await check('alpha apple');
    await check('alpha apple');
    // Another connection writes: more of the same words, so every cached page and statistic is outdated.
    await add(writer, 150, 'apple');
    await check('alpha apple');
    await writer.deleteMemory('ctx', 'm3');
    all.splice(3, 1);
    await check('alpha apple');
    // This connection writes (data_version does not move for its own commits).
    await add(reader, 120, 'alpha');
    await check('alpha apple');
    await reader.deleteMemory('ctx', 'm5');
    all.splice(4, 1);
    await check('alpha apple');
    await check('pear item');
    await reader.close();
    await writer.close();
  });

  it('find a query word the archive lacked once a write brings it (absent terms are not kept past a change)', async () => {
    const file = join(dir, 'absent.db');
    const reader = createSqliteStore(file);
    const writer = createSqliteStore(file);
    const { all, add } = adder();
    const search = (query: string) => reader.searchLexical('ctx', query, { limit: 20 });
    await add(writer, 40, 'alpha');
    // 'zebra' and 'quokka' are in no memory: twice, so the second search answers from the cache.
    await search('zebra alpha');
    expect(await search('zebra alpha')).toEqual(await expected(all, 'zebra alpha'));
    // Another connection brings 'zebra': the reader's next search must score it.
    await add(writer, 30, 'zebra');
    const afterOther = await search('zebra alpha');
    expect(afterOther.some((hit) => Number(hit.memoryId.slice(1)) >= 40)).toBe(true);
    expect(afterOther).toEqual(await expected(all, 'zebra alpha'));
    await search('quokka');
    expect(await search('quokka')).toEqual([]);
    // This connection brings 'quokka' (its own commits do not move data_version).
    await add(reader, 10, 'quokka');
    const afterOwn = await search('quokka');
    expect(afterOwn.length).toBeGreaterThan(0);
    expect(afterOwn).toEqual(await expected(all, 'quokka'));
    await reader.close();
    await writer.close();
  });
});
