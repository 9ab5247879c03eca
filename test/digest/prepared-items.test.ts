import { describe, expect, it } from 'vitest';
import { ingestItems } from '../../src/digest/ingest.ts';
import { plainRecordSize, prepareRecord } from '../../src/digest/prepare-records.ts';
import { PREPARE_HELPER_FROM, type PreparedItem, preparedItems } from '../../src/digest/prepared-items.ts';
import type { ImportItem } from '../../src/importers/importer-spec.ts';
import type { ArchiveStore } from '../../src/store/archive-store-spec.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';

const STAMP = '2026-01-01T00:00:00.000Z';

function recordItem(record: Record<string, unknown>, line: number): ImportItem {
  return { type: 'record', record: record as unknown as MemoryRecord, source: { file: 'in.jsonl', line } };
}

/** A chat of `count` turns with explicit sequences, and every other kind of item a real import carries. */
function mixedImport(count: number): ImportItem[] {
  const items: ImportItem[] = [];
  for (let i = 0; i < count; i++) {
    const record: Record<string, unknown> = {
      id: `m${i}`,
      contextId: i % 5 === 4 ? 'other' : 'ctx',
      kind: 'message',
      sequence: i,
      sessionId: `s${Math.floor(i / 20)}`,
      roundId: `r${Math.floor(i / 2)}`,
      role: i % 2 === 0 ? 'user' : 'assistant',
      timestamp: `2025-03-${String(1 + (i % 28)).padStart(2, '0')}T10:00:00Z`,
      text: `turn ${i} talks about topic ${i % 11} and the lake ${i % 3}`,
      assets: [],
      metadata: { speaker: i % 2 === 0 ? 'Ana' : 'Ben', tags: [`t${i % 4}`] },
      recordedAt: STAMP,
    };
    if (i === 37) record.text = 42; // rejected by the schema
    if (i === 41) record.sequence = -1; // rejected too
    items.push(recordItem(record, i + 1));
    if (i === 50) items.push(recordItem({ ...record, id: 'm50' }, i + 1)); // identical repeat: skipped
    if (i === 60) items.push(recordItem({ ...record, id: 'm60', text: 'changed' }, i + 1)); // DUPLICATE_ID
    if (i % 97 === 3) {
      // No sequence: assigned from the store, in order, by the calling thread.
      items.push(
        recordItem({ id: `free${i}`, kind: 'message', text: `free ${i}`, recordedAt: STAMP }, i + 1),
      );
    }
    if (i % 131 === 7) items.push({ type: 'warning', message: `note ${i}`, source: { file: 'in.jsonl' } });
    if (i === 90) {
      items.push({
        type: 'question',
        question: { id: 'q1', contextId: 'ctx', prompt: 'lake?', answer: { text: 'yes' }, evidence: ['m1'] },
        source: { file: 'in.jsonl' },
      } as ImportItem);
    }
  }
  return items;
}

/**
 * The items, with a pause after the first `at` (past the first chunk, after which the helper starts): it loads
 * in its own thread (~0.3 s from the sources) and its readiness is only received while the caller waits on
 * something, as an import waits on its source.
 */
async function* pausing(items: ImportItem[], at = 300, ms = 2500): AsyncGenerator<ImportItem> {
  for (let i = 0; i < items.length; i++) {
    if (i === at) await new Promise((resolve) => setTimeout(resolve, ms));
    yield items[i]!;
  }
}

async function stored(store: ArchiveStore) {
  const out: Record<string, unknown> = {};
  for (const contextId of ['ctx', 'other', 'default']) {
    const records = await store.listMemories(contextId);
    const ids = records.map((r) => r.id);
    out[contextId] = {
      records,
      views: await store.getViews(contextId, ids),
      edges: (await store.neighbors(contextId, ids)).sort((x, y) => (x.a + x.b < y.a + y.b ? -1 : 1)),
      hashes: [...(await store.getContentHashes(contextId, ids))].sort(),
      questions: await store.listQuestions(contextId),
    };
  }
  return out;
}

async function importWith(items: ImportItem[], prepareHelperFrom: number) {
  const store = await openStore('memory:');
  const report = await ingestItems(store, pausing(items), { prepareHelperFrom });
  const { seconds: _s, stepSeconds: _t, ...counts } = report;
  return { counts, stored: await stored(store) };
}

async function collect(stream: AsyncIterable<PreparedItem[]>): Promise<PreparedItem[]> {
  const out: PreparedItem[] = [];
  for await (const chunk of stream) out.push(...chunk);
  return out;
}

describe('preparedItems: records prepared on a helper thread ahead of the writes', () => {
  it('stores exactly what the calling thread alone stores (records, views, keys, edges, report)', async () => {
    const items = mixedImport(1500);
    const alone = await importWith(items, Number.POSITIVE_INFINITY);
    const helped = await importWith(mixedImport(1500), 16);
    expect(helped).toEqual(alone);
    expect(alone.counts.rejected.map((r) => r.code).sort()).toEqual([
      'DUPLICATE_ID',
      'INVALID_INPUT',
      'INVALID_INPUT',
    ]);
    expect(alone.counts.skipped).toBe(1);
    expect(alone.counts.questions).toBe(1);
  }, 30_000);

  it('hands on every item in order, the helper preparing what prepareRecord makes', async () => {
    const items = mixedImport(1200);
    const out = await collect(
      preparedItems(pausing(items), { contextId: undefined, maxTextBytes: undefined, helperFrom: 8 }),
    );
    expect(out.map((o) => o.item)).toEqual(items);
    const helped = out.filter((o) => o.prepared !== undefined);
    // Everything from the third chunk on (the first is read before the start, the second while it loads),
    // but the items without a sequence.
    expect(helped.length).toBeGreaterThan(600);
    for (const { item, prepared } of helped) {
      const record = item as Extract<ImportItem, { type: 'record' }>;
      const raw = record.record as unknown as { sequence: number };
      expect(record.type).toBe('record');
      expect(prepared).toEqual(
        prepareRecord(
          structuredClone(record),
          { contextId: undefined, maxTextBytes: undefined },
          raw.sequence,
        ),
      );
    }
    // The import's options reach the helper: a context override and a text limit.
    const small = await collect(
      preparedItems(pausing(mixedImport(1000)), { contextId: 'forced', maxTextBytes: 20, helperFrom: 1 }),
    );
    const prepared = small.filter((o) => o.prepared !== undefined).map((o) => o.prepared!.validated);
    expect(prepared.length).toBeGreaterThan(400);
    expect(prepared.filter((v) => v.type === 'record').every((v) => v.record.contextId === 'forced')).toBe(
      true,
    );
    expect(prepared.some((v) => v.type === 'rejected' && v.rejection.code === 'TOO_LARGE')).toBe(true);
  }, 30_000);

  it('prepares nothing ahead before the threshold, or with a helper that fails to start', async () => {
    const few = await collect(
      preparedItems(mixedImport(200), { contextId: undefined, maxTextBytes: undefined }),
    );
    expect(few.every((o) => o.prepared === undefined)).toBe(true);
    const broken = new URL('data:text/javascript,throw new Error("helper cannot load")');
    const failed = await collect(
      preparedItems(mixedImport(600), {
        contextId: undefined,
        maxTextBytes: undefined,
        helperFrom: 4,
        helperEntry: broken,
      }),
    );
    expect(failed).toHaveLength(mixedImport(600).length);
    expect(failed.every((o) => o.prepared === undefined)).toBe(true);
  }, 30_000);

  it('starts the helper at PREPARE_HELPER_FROM records, and never with GRAPHMEMIX_PREPARE_HELPER=0', async () => {
    const items = mixedImport(PREPARE_HELPER_FROM + 4000);
    const options = { contextId: undefined, maxTextBytes: undefined };
    // Paused past the chunk where the records with a sequence reach the threshold (items also hold others).
    const run = async () => collect(preparedItems(pausing(items, PREPARE_HELPER_FROM + 1000), options));
    const helped = (await run()).flatMap((o, at) => (o.prepared === undefined ? [] : [at]));
    expect(helped.length).toBeGreaterThan(1000);
    expect(Math.min(...helped)).toBeGreaterThan(PREPARE_HELPER_FROM);
    const saved = process.env.GRAPHMEMIX_PREPARE_HELPER;
    process.env.GRAPHMEMIX_PREPARE_HELPER = '0';
    try {
      expect((await run()).every((o) => o.prepared === undefined)).toBe(true);
    } finally {
      if (saved === undefined) delete process.env.GRAPHMEMIX_PREPARE_HELPER;
      else process.env.GRAPHMEMIX_PREPARE_HELPER = saved;
    }
  }, 30_000);

  it('a source that fails mid-way hands on what it read first, then its error', async () => {
    async function* failing(): AsyncGenerator<ImportItem> {
      yield* pausing(mixedImport(1700).slice(0, 1700));
      throw new Error('disk gone');
    }
    const seen: ImportItem[] = [];
    await expect(
      (async () => {
        for await (const chunk of preparedItems(failing(), {
          contextId: undefined,
          maxTextBytes: undefined,
          helperFrom: 4,
        }))
          seen.push(...chunk.map((c) => c.item));
      })(),
    ).rejects.toThrow('disk gone');
    expect(seen).toEqual(mixedImport(1700).slice(0, 1700));
  }, 30_000);

  it('a consumer that stops early ends the source', async () => {
    let ended = false;
    async function* source(): AsyncGenerator<ImportItem> {
      try {
        yield* pausing(mixedImport(3000));
      } finally {
        ended = true;
      }
    }
    let n = 0;
    for await (const chunk of preparedItems(source(), {
      contextId: undefined,
      maxTextBytes: undefined,
      helperFrom: 4,
    })) {
      n += chunk.length;
      if (n >= 1500) break;
    }
    expect(ended).toBe(true);
  }, 30_000);
});

describe('plainRecordSize: only data a copy keeps as it is goes to the helper', () => {
  it('takes what JSON.parse makes', () => {
    // 10 values of 8 bytes, keys id/text/n/ok/m/a (11), strings a/x/b (3).
    expect(
      plainRecordSize(JSON.parse('{"id":"a","text":"x","n":1.5,"ok":true,"m":{"a":[1,null,"b"]}}')),
    ).toBe(10 * 8 + 11 + 3);
    expect(plainRecordSize(Object.assign(Object.create(null), { id: 'a' }))).toBe(2 * 8 + 2 + 1);
  });

  it('refuses anything a copy could change or that is not an object record', () => {
    class Rec {
      id = 'a';
      get text() {
        return 'from the prototype';
      }
    }
    const hidden = { id: 'a' };
    Object.defineProperty(hidden, 'text', { value: 'hidden', enumerable: false });
    const deep: Record<string, unknown> = {};
    let at = deep;
    for (let i = 0; i < 40; i++) at = at.next = {} as Record<string, unknown>;
    for (const input of [
      new Rec(),
      hidden,
      { id: 'a', text: undefined },
      { id: 'a', f: () => 1 },
      { id: 'a', big: 10n },
      { id: 'a', when: new Date(0) },
      { id: 'a', list: Array.from({ length: 5000 }, (_, i) => i) },
      deep,
      ['a'],
      'a',
      null,
    ]) {
      expect(plainRecordSize(input)).toBeUndefined();
    }
  });
});
