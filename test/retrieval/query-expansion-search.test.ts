import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ingestItems } from '../../src/digest/ingest.ts';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { DEFAULT_EXPANSIONS, FEEDBACK_EXPANSION } from '../../src/pipeline/question-expansions.ts';
import { multiViewSearch } from '../../src/retrieval/multi-view-retriever.ts';
import { WeightedHits } from '../../src/retrieval/query-expansion.ts';
import { createMemoryStore } from '../../src/store/memory-store.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';

/** Six shopping notes on six days of June 2024; the one of Tuesday 18 June sorts last by id. */
function shoppingNotes(): MemoryRecord[] {
  const days = ['2024-06-10', '2024-06-11', '2024-06-12', '2024-06-13', '2024-06-14', '2024-06-18'];
  const things = ['a kettle', 'some socks', 'a notebook', 'two plates', 'a candle', 'a lamp'];
  return days.map((day, i) => ({
    id: i === 5 ? 'z-lamp' : `a-note-${i}`,
    contextId: 'alice',
    kind: 'note',
    sequence: i + 1,
    timestamp: `${day}T10:00:00Z`,
    text: `went shopping and bought ${things[i]}`,
    assets: [],
  }));
}

const records = (list: MemoryRecord[]) =>
  list.map((record) => ({ type: 'record' as const, record, source: { file: 'notes' } }));

/** A chat message of Ana's in context c on `day` (YYYY-MM-DD), at 09:00. */
const message = (id: string, day: string, text: string, i: number): MemoryRecord => ({
  id,
  contextId: 'c',
  kind: 'message',
  sequence: i,
  speaker: 'Ana',
  timestamp: `${day}T09:00:00Z`,
  text,
  assets: [],
});

describe('query expansion in retrieval', () => {
  let gm: Graphmemix;
  beforeEach(async () => {
    gm = await openGraphmemix({ db: ':memory:' });
    await ingestItems(gm.store, records(shoppingNotes()));
  });
  afterEach(async () => {
    await gm.close();
  });

  it('a gold memory enters a one-member pool only through the resolved date', async () => {
    const question = { prompt: 'What did I get when shopping last Tuesday?', asOf: '2024-06-20' };
    const options = { seeds: 1, poolSize: 1, anchors: 1, k: 1, verifiers: 'none' as const };
    const plain = await gm.retrieve('alice', question, { ...options, expansion: { temporal: false } });
    expect(plain.pool).toHaveLength(1);
    expect(plain.pool[0]?.memoryId).not.toBe('z-lamp');
    const expanded = await gm.retrieve('alice', question, options);
    expect(expanded.pool.map((c) => c.memoryId)).toEqual(['z-lamp']);
  });

  it('without asOf, relative dates resolve against the context latest memory', async () => {
    // latest memory: Tuesday 18 June, so "yesterday" is Monday 17 June (no note) and "today" the lamp's day.
    const options = { seeds: 1, poolSize: 1, anchors: 1, k: 1, verifiers: 'none' as const };
    const today = await gm.retrieve('alice', 'What did I get when shopping today?', options);
    expect(today.pool.map((c) => c.memoryId)).toEqual(['z-lamp']);
  });
});

describe('weighted lexical search (expansions above the store port)', () => {
  it('keeps the unexpanded scores identical and adds weight x raw BM25 of the expansion', async () => {
    const store = createMemoryStore();
    await ingestItems(store, records(shoppingNotes()));
    const query = { text: 'shopping lamp', imageUris: [] };
    const plain = await multiViewSearch(store, 'alice', query, { limit: 10 });
    const none = await multiViewSearch(store, 'alice', query, { limit: 10, expansions: [] });
    expect(none.ranked).toEqual(plain.ranked);
    expect(plain.expansions).toEqual([]);
    const candle = await multiViewSearch(store, 'alice', { text: 'candle', imageUris: [] }, { limit: 10 });
    const expanded = await multiViewSearch(store, 'alice', query, {
      limit: 10,
      expansions: [{ source: 'synonym', terms: ['candle'], weight: 0.5 }],
    });
    // The candle note had only "shopping"; it gains half of its own "candle" BM25 on its text view.
    const raw = (result: typeof plain, id: string) => result.viewScores.get(id)?.text ?? 0;
    expect(raw(expanded, 'a-note-4')).toBeGreaterThan(raw(plain, 'a-note-4'));
    expect(raw(candle, 'a-note-4')).toBeGreaterThan(0);
    // Notes without "candle" keep exactly their score.
    expect(raw(expanded, 'a-note-0')).toBe(raw(plain, 'a-note-0'));
    expect(raw(expanded, 'z-lamp')).toBe(raw(plain, 'z-lamp'));
  });

  it('feedback adds at most `terms` terms shared by `minDocs` of the top documents', async () => {
    const store = createMemoryStore();
    const notes: MemoryRecord[] = [
      ['n1', 'garden tomato seedlings planted in the greenhouse'],
      ['n2', 'tomato seedlings watered in the greenhouse'],
      ['n3', 'greenhouse heater fixed for the seedlings'],
      ['n4', 'bought a greenhouse thermometer'],
      ['n5', 'the bakery sells rye bread'],
    ].map(([id, text], i) => ({
      id: id!,
      contextId: 'c',
      kind: 'note',
      sequence: i + 1,
      text: text!,
      assets: [],
    }));
    await ingestItems(store, records(notes));
    const result = await multiViewSearch(
      store,
      'c',
      { text: 'tomato', imageUris: [] },
      {
        limit: 10,
        feedback: { docs: 2, terms: 2, minDocs: 2, weight: 0.3 },
      },
    );
    const feedback = result.expansions.find((e) => e.source === 'feedback');
    expect(feedback?.terms.length).toBe(2);
    expect(feedback?.terms.every((t) => ['seedling', 'greenhous', 'greenhouse', 'watered'].includes(t))).toBe(
      true,
    );
    // n3 shares no word with the question: only the feedback brings it in.
    expect(result.ranked.map((m) => m.memoryId)).toContain('n3');
    expect(result.ranked.map((m) => m.memoryId)).not.toContain('n5');
  });

  it('feedback brings the day the top memories share (text and metadata views)', async () => {
    const store = createMemoryStore();
    await ingestItems(
      store,
      records([
        message('m1', '2024-06-17', 'the greenhouse tomatoes are ripe', 1),
        message('m2', '2024-06-17', 'picked tomatoes for the sauce', 2),
        message('m3', '2024-06-17', 'the sauce simmered all afternoon', 3),
        message('m4', '2024-06-21', 'the sauce recipe from grandma', 4),
        message('m5', '2024-06-21', 'bought flour and yeast', 5),
      ]),
    );
    const query = { text: 'tomatoes', imageUris: [] };
    const plain = await multiViewSearch(store, 'c', query, { limit: 10 });
    expect(plain.ranked.map((m) => m.memoryId).sort()).toEqual(['m1', 'm2']);
    const result = await multiViewSearch(store, 'c', query, {
      limit: 10,
      feedback: { docs: 2, terms: 0, minDocs: 2, weight: 0.5 },
    });
    // 17 June 2024 was a Monday: its day number and weekday, searched in the text and metadata views.
    expect(result.expansions).toEqual([
      { source: 'feedback', terms: ['17', 'monday'], weight: 0.5, kinds: ['text', 'metadata'] },
    ]);
    const ranked = result.ranked.map((m) => m.memoryId);
    // m3 (same day, no question word) enters; m4 and m5 (another day) do not.
    expect(ranked).toContain('m3');
    expect(ranked).not.toContain('m4');
    expect(ranked).not.toContain('m5');
    // The shipped feedback searches the day in the text view only ("[17 June 2024] Ana: ..."): m3 still
    // enters, and no metadata view score comes from the feedback.
    const textOnly = await multiViewSearch(store, 'c', query, {
      limit: 10,
      feedback: { ...FEEDBACK_EXPANSION, docs: 2 },
    });
    expect(textOnly.expansions).toEqual([
      { source: 'feedback', terms: ['17', 'monday'], weight: 0.5, kinds: ['text'] },
    ]);
    expect(textOnly.ranked.map((m) => m.memoryId)).toContain('m3');
    expect(textOnly.viewScores.get('m3')?.metadata).toBeUndefined();
    expect(result.viewScores.get('m3')?.metadata).toBeGreaterThan(0);
  });

  it('feedback is off by default (latency), in the text view when on', () => {
    expect(DEFAULT_EXPANSIONS.feedback).toBe(false);
    expect(FEEDBACK_EXPANSION.dayKinds).toEqual(['text']);
  });

  it('WeightedHits sums raw BM25 per view', () => {
    const hits = new WeightedHits();
    hits.add([{ memoryId: 'm', kind: 'text', key: 'main', rawScore: 2 }], 1);
    hits.add(
      [
        { memoryId: 'm', kind: 'text', key: 'main', rawScore: 4 },
        { memoryId: 'm', kind: 'metadata', key: 'main', rawScore: 1 },
      ],
      0.25,
    );
    expect(hits.hits()).toEqual([
      { memoryId: 'm', kind: 'text', key: 'main', rawScore: 3 },
      { memoryId: 'm', kind: 'metadata', key: 'main', rawScore: 0.25 },
    ]);
  });

  it("WeightedHits.bestPerMemory keeps each memory's best scaled view score", () => {
    const hits = new WeightedHits();
    hits.add(
      [
        { memoryId: 'm', kind: 'text', key: 'main', rawScore: 2 },
        { memoryId: 'm', kind: 'metadata', key: 'main', rawScore: 5 },
        { memoryId: 'n', kind: 'caption', key: 'a1', rawScore: 1 },
      ],
      1,
    );
    hits.add([{ memoryId: 'n', kind: 'caption', key: 'a1', rawScore: 4 }], 0.5);
    // Scale: text counts double, metadata half; n's caption sums 1 + 0.5 x 4.
    const scale = (kind: string, raw: number) => raw * (kind === 'text' ? 2 : kind === 'metadata' ? 0.5 : 1);
    expect([...hits.bestPerMemory(scale)]).toEqual([
      ['m', 4],
      ['n', 3],
    ]);
  });
});

describe('query expansion in the trace', () => {
  it('names the expansions and their terms', async () => {
    const gm = await openGraphmemix({ db: ':memory:' });
    try {
      await ingestItems(gm.store, records(shoppingNotes()));
      const result = await gm.retrieve('alice', { prompt: 'shopping last Tuesday?', asOf: '2024-06-20' });
      expect(result.trace.components.queryExpansion).toBe('temporal@1: 2024 06 18 june');
      const plain = await gm.retrieve('alice', 'shopping lamp');
      expect(plain.trace.components.queryExpansion).toBeUndefined();
    } finally {
      await gm.close();
    }
  });

  it('retrieve runs the shared-day feedback when asked, reading the text views off its records', async () => {
    const gm = await openGraphmemix({ db: ':memory:' });
    try {
      await ingestItems(
        gm.store,
        records([
          message('m1', '2024-06-17', 'the greenhouse tomatoes are ripe', 1),
          message('m2', '2024-06-17', 'picked tomatoes for the sauce', 2),
          message('m3', '2024-06-17', 'the sauce simmered all afternoon', 3),
          message('m4', '2024-06-21', 'bought flour and yeast', 4),
        ]),
      );
      expect((await gm.retrieve('c', 'tomatoes')).trace.components.queryExpansion).toBeUndefined();
      const result = await gm.retrieve('c', 'tomatoes', { expansion: { feedback: true } });
      expect(result.trace.components.queryExpansion).toBe('feedback@0.5: 17 monday');
      expect(result.pool.map((c) => c.memoryId)).toContain('m3');
      // The same expansion and scores as the search that reads the stored views.
      const stored = await multiViewSearch(
        gm.store,
        'c',
        { text: 'tomatoes', imageUris: [] },
        { limit: 48, feedback: FEEDBACK_EXPANSION },
      );
      expect(stored.expansions).toEqual([
        { source: 'feedback', terms: ['17', 'monday'], weight: 0.5, kinds: ['text'] },
      ]);
      for (const c of result.pool) {
        expect(c.retrievalScore).toBe(stored.ranked.find((m) => m.memoryId === c.memoryId)?.score ?? 0);
      }
      const off = await gm.retrieve('c', 'tomatoes', { expansion: { feedback: false } });
      expect(off.trace.components.queryExpansion).toBeUndefined();
    } finally {
      await gm.close();
    }
  });
});
