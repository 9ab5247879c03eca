import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/digest/semantic/seeded-random.ts';
import { BM25_B, BM25_K1, Bm25Index } from '../../src/retrieval/bm25-index.ts';
import { tokenize } from '../../src/retrieval/tokenize.ts';
import type { ArchiveStore, MemoryWrite } from '../../src/store/archive-store-spec.ts';
import { openStore } from '../../src/store/open-store.ts';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';
import type { MemoryView, ViewHit, ViewKind } from '../../src/types/view.ts';
import { createTestDatabase, dropTestDatabases, PG_SKIP } from './postgres-test-db.ts';

/**
 * Differential tests of searchLexical: every backend, after random interleaved inserts, updates and deletes
 * over several contexts and view kinds, must return exactly what a fresh Bm25Index over the current views
 * returns (and what the BM25 formula computed naively gives), including order and tie-breaks.
 */
const dir = mkdtempSync(join(tmpdir(), 'graphmemix-lexical-'));
let counter = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterAll(dropTestDatabases);

const KINDS: ViewKind[] = ['text', 'caption', 'metadata'];

interface Backend {
  name: string;
  open: () => Promise<ArchiveStore>;
  /** Reopen between rounds (persistent backends): the index must survive a new connection untouched. */
  reopen?: (store: ArchiveStore) => Promise<ArchiveStore>;
}

function fileBackend(): Backend {
  let file = '';
  return {
    name: 'sqlite file (reopened)',
    open: () => {
      file = join(dir, `diff-${counter++}.db`);
      return openStore(file);
    },
    reopen: async (store) => {
      await store.close();
      return openStore(file);
    },
  };
}

/** A fresh database per store on the test server (skipped with the printed reason when there is none). */
function postgresBackend(): Backend {
  let url = '';
  return {
    name: 'postgres (reopened)',
    open: async () => {
      url = await createTestDatabase();
      return openPostgresStore({ url, maxConnections: 2 });
    },
    reopen: async (store) => {
      await store.close();
      return openPostgresStore({ url, maxConnections: 2 });
    },
  };
}

if (PG_SKIP) console.warn(`[postgres lexical differential skipped] ${PG_SKIP}`);

const backends: (() => Backend)[] = [
  () => ({ name: 'memory', open: () => openStore('memory:') }),
  () => ({ name: 'sqlite :memory:', open: () => openStore(':memory:') }),
  fileBackend,
  ...(PG_SKIP ? [] : [postgresBackend]),
];

/** Zipfian word sampler over a small vocabulary (many shared terms, many exact ties). */
function corpus(seed: number, vocabulary: number) {
  const random = mulberry32(seed);
  // Letters only (base 26), so the plural folding applies: "wbcx", "wbcxs" and "wbcxes" are one term.
  const words = Array.from({ length: vocabulary }, (_, i) => `w${letters(i)}x`);
  const weights = words.map((_, i) => 1 / (i + 1));
  const total = weights.reduce((x, y) => x + y, 0);
  const cumulative: number[] = [];
  let sum = 0;
  for (const weight of weights) {
    sum += weight / total;
    cumulative.push(sum);
  }
  const word = () => {
    const r = random();
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < r) lo = mid + 1;
      else hi = mid;
    }
    // Sprinkle stopwords, capitals and plurals so the shared tokenizer is exercised too.
    const r2 = random();
    return r2 < 0.08
      ? 'the'
      : r2 < 0.12
        ? `${words[lo]!.toUpperCase()}`
        : r2 < 0.16
          ? `${words[lo]}s`
          : r2 < 0.19
            ? `${words[lo]}es`
            : words[lo]!;
  };
  const text = (min: number, max: number) =>
    Array.from({ length: min + Math.floor(random() * (max - min + 1)) }, word).join(' ');
  return { random, word, text };
}

/** i in base 26 with the digits a..z. */
function letters(i: number): string {
  let out = '';
  let n = i;
  do {
    out = String.fromCharCode(97 + (n % 26)) + out;
    n = Math.floor(n / 26);
  } while (n > 0);
  return out;
}

function makeWrite(contextId: string, id: string, views: MemoryView[], version: number): MemoryWrite {
  const record: MemoryRecord = { id, contextId, kind: 'message', sequence: 0, text: id, assets: [] };
  return { record, views, contentHash: `${id}-${version}` };
}

/** BM25 straight from the formula, for the reference itself. */
function naive(
  views: readonly MemoryView[],
  query: string,
  limit: number,
  kinds?: readonly ViewKind[],
): ViewHit[] {
  const terms = [...new Set(tokenize(query))];
  const hits: ViewHit[] = [];
  for (const kind of new Set(kinds ?? KINDS)) {
    const docs = views
      .filter((v) => v.kind === kind)
      .map((v) => ({ view: v, tokens: tokenize(v.text) }))
      .filter((d) => d.tokens.length > 0);
    const avg = docs.reduce((x, d) => x + d.tokens.length, 0) / docs.length;
    const scored = docs.flatMap(({ view, tokens }) => {
      let score = 0;
      for (const term of terms) {
        const df = docs.filter((d) => d.tokens.includes(term)).length;
        const tf = tokens.filter((t) => t === term).length;
        if (tf === 0) continue;
        const idf = Math.log(1 + (docs.length - df + 0.5) / (df + 0.5));
        score += (idf * tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * tokens.length) / avg));
      }
      return score > 0 ? [{ memoryId: view.memoryId, kind, key: view.key, rawScore: score }] : [];
    });
    scored.sort((x, y) => y.rawScore - x.rawScore || cmp(x.memoryId, y.memoryId) || cmp(x.key, y.key));
    hits.push(...scored.slice(0, limit));
  }
  return hits.sort(
    (x, y) =>
      y.rawScore - x.rawScore || cmp(x.memoryId, y.memoryId) || cmp(x.kind, y.kind) || cmp(x.key, y.key),
  );
}

function cmp(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}

function expectSameHits(actual: ViewHit[], expected: ViewHit[], label: string): void {
  expect(
    actual.map((h) => `${h.memoryId}/${h.kind}/${h.key}`),
    label,
  ).toEqual(expected.map((h) => `${h.memoryId}/${h.kind}/${h.key}`));
  actual.forEach((hit, i) => {
    expect(Math.abs(hit.rawScore - expected[i]!.rawScore), label).toBeLessThanOrEqual(1e-9);
  });
}

describe.each(backends)('searchLexical differential', (makeBackend) => {
  const backend = makeBackend();
  it(`${backend.name}: equals a fresh Bm25Index after interleaved writes, updates and deletes`, async () => {
    let store = await backend.open();
    const { random, word, text } = corpus(7 + counter, 120);
    const contexts = ['alpha', 'beta', 'gamma'];
    const model = new Map<string, Map<string, MemoryView[]>>(contexts.map((c) => [c, new Map()]));
    let version = 0;
    const viewsOf = (id: string, round: number): MemoryView[] => {
      // Lengths drift upward over rounds so averages move far from a field's reference length.
      const long = round >= 3 && random() < 0.5;
      const views: MemoryView[] = [
        { memoryId: id, kind: 'text', key: 'main', text: long ? text(20, 60) : text(1, 12) },
      ];
      if (random() < 0.6) views.push({ memoryId: id, kind: 'metadata', key: 'main', text: text(1, 4) });
      const captions = Math.floor(random() * 3);
      for (let c = 0; c < captions; c++) {
        // Some captions repeat a text exactly: tied scores must break by memory id then key.
        const caption = random() < 0.3 ? 'wbx wcxes' : text(0, 6);
        views.push({ memoryId: id, kind: 'caption', key: `a${c}`, text: caption });
      }
      return views;
    };
    for (let round = 0; round < 6; round++) {
      for (const contextId of contexts) {
        const memories = model.get(contextId)!;
        const writes: MemoryWrite[] = [];
        const batch = round === 0 ? 60 : 25;
        for (let i = 0; i < batch; i++) {
          const existing = [...memories.keys()];
          // Updates of existing memories, some twice in one batch (the later write wins).
          const id =
            existing.length > 0 && random() < 0.3
              ? existing[Math.floor(random() * existing.length)]!
              : `m${Math.floor(random() * 1e6).toString(36)}`;
          const views = viewsOf(id, round);
          writes.push(makeWrite(contextId, id, views, ++version));
          memories.set(id, views);
        }
        await store.writeMemories(contextId, writes);
        const deletions = round === 0 ? 0 : 6;
        for (let i = 0; i < deletions; i++) {
          const existing = [...memories.keys()];
          const id = existing[Math.floor(random() * existing.length)]!;
          expect(await store.deleteMemory(contextId, id)).toBe(true);
          memories.delete(id);
        }
      }
      if (backend.reopen && round % 2 === 1) store = await backend.reopen(store);
      for (const contextId of contexts) {
        const views = [...model.get(contextId)!.values()].flat();
        const reference = Bm25Index.build(views.filter((v) => v.text !== ''));
        for (let q = 0; q < 25; q++) {
          const query = Array.from({ length: 1 + Math.floor(random() * 6) }, word).join(' ');
          const limit = [1, 2, 3, 5, 10, 1000][Math.floor(random() * 6)]!;
          const kinds = random() < 0.4 ? KINDS.filter(() => random() < 0.5) : undefined;
          const options = kinds ? { limit, kinds } : { limit };
          const label = `${backend.name} round ${round} ${contextId} "${query}" ${JSON.stringify(options)}`;
          const expected = reference.search(query, options);
          expectSameHits(await store.searchLexical(contextId, query, options), expected, label);
          if (q < 5) expectSameHits(expected, naive(views, query, limit, kinds), `reference ${label}`);
        }
      }
    }
    expect((await store.integrityCheck()).ok).toBe(true);
    await store.close();
  }, 60_000);
});

describe.each(backends)('searchLexical after deletes', (makeBackend) => {
  const backend = makeBackend();
  it(`${backend.name}: deleting B from A+B scores exactly like a store that only ever held A`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1e6 }),
        fc.integer({ min: 1, max: 30 }),
        async (seed, size) => {
          const { random, word, text } = corpus(seed, 40);
          const views = (id: string): MemoryView[] => [
            { memoryId: id, kind: 'text', key: 'main', text: text(1, 10) },
            { memoryId: id, kind: 'caption', key: 'c', text: text(0, 3) },
          ];
          const a = Array.from({ length: size }, (_, i) => makeWrite('ctx', `a${i}`, views(`a${i}`), 1));
          const b = Array.from({ length: 1 + Math.floor(random() * size) }, (_, i) =>
            makeWrite('ctx', `b${i}`, views(`b${i}`), 1),
          );
          const churned = await backend.open();
          const fresh = await openStore(backend.name === 'memory' ? 'memory:' : ':memory:');
          await churned.writeMemories('ctx', [...b.slice(0, 1), ...a, ...b.slice(1)]);
          for (const write of b) await churned.deleteMemory('ctx', write.record.id);
          await fresh.writeMemories('ctx', a);
          for (let q = 0; q < 8; q++) {
            const query = Array.from({ length: 1 + Math.floor(random() * 4) }, word).join(' ');
            const options = { limit: 1 + Math.floor(random() * 6) };
            expect(await churned.searchLexical('ctx', query, options)).toEqual(
              await fresh.searchLexical('ctx', query, options),
            );
          }
          // Deleting everything leaves nothing to find.
          for (const write of a) await churned.deleteMemory('ctx', write.record.id);
          expect(await churned.searchLexical('ctx', 'wax wbxs wcx', { limit: 5 })).toEqual([]);
          await churned.close();
          await fresh.close();
        },
      ),
      { numRuns: 12 },
    );
  }, 60_000);
});
