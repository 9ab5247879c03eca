import { describe, expect, it } from 'vitest';
import { buildTfidfSpace, sparseDot, TfidfSpace } from '../../../src/digest/semantic/tfidf-space.ts';
import { tokenize } from '../../../src/retrieval/tokenize.ts';
import type { MemoryRecord } from '../../../src/types/memory-record.ts';

const doc = (id: string, text: string) => ({ id, text });

describe('TfidfSpace', () => {
  const space = new TfidfSpace([
    doc('a', 'red bicycle red bicycle'),
    doc('b', 'red car'),
    doc('c', 'blue bicycle in the garden'),
    doc('d', ''),
  ]);

  it('uses sublinear tf and smoothed idf, L2-normalised', () => {
    const red = space.vocabulary.get('red')!;
    const bicycle = space.vocabulary.get('bicycle')!;
    const n = 4;
    expect(space.idf[red]).toBeCloseTo(Math.log((1 + n) / (1 + 2)) + 1, 12);
    const a = space.vector(0);
    expect([...a.terms].sort()).toEqual([red, bicycle].sort());
    const norm = Math.hypot(...a.weights);
    expect(norm).toBeCloseTo(1, 6);
    // same tf (2 each, sublinear 1 + ln 2) and same df: equal weights.
    expect(a.weights[0]).toBeCloseTo(a.weights[1]!, 6);
    expect(space.vector(3).terms).toHaveLength(0);
  });

  it('drops stopwords through the shared tokenizer', () => {
    expect(space.vocabulary.has('the')).toBe(false);
    expect(space.vocabulary.has('garden')).toBe(true);
  });

  it('gives cosines in [0, 1] with 1 for a document with itself', () => {
    expect(sparseDot(space.vector(0), space.vector(0))).toBeCloseTo(1, 6);
    const ab = sparseDot(space.vector(0), space.vector(1));
    expect(ab).toBeGreaterThan(0);
    expect(ab).toBeLessThan(1);
    expect(sparseDot(space.vector(1), space.vector(2))).toBe(0);
  });

  it('embeds queries with the context idf and searches by cosine', () => {
    const query = space.queryVector('bicycle garden unknownword');
    expect(query.terms).toHaveLength(2);
    const hits = space.search('bicycle garden', 2);
    expect(hits.map((hit) => hit.id)).toEqual(['c', 'a']);
    expect(hits[0]!.score).toBeCloseTo(sparseDot(space.queryVector('bicycle garden'), space.vector(2)), 6);
  });

  it('reads record text, captions and OCR (buildTfidfSpace)', () => {
    const record: MemoryRecord = {
      id: 'p',
      contextId: 'c',
      kind: 'photo',
      sequence: 0,
      text: '',
      assets: [{ id: 'a', kind: 'image', derived: { captions: ['lighthouse'], ocr: 'ferry timetable' } }],
    };
    const built = buildTfidfSpace([record]);
    expect([...built.vocabulary.keys()].sort()).toEqual(['ferry', 'lighthous', 'timetable']);
    expect(built.name).toBe('tfidf');
  });
});

describe('TfidfSpace past its first array (grown entries)', () => {
  // ~150k entries: the builder's arrays (65,536 entries at first) grow twice. Weights are checked against a
  // per-document computation that shares nothing with the builder.
  let seed = 7;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed;
  };
  const words = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}x`);
  const documents = Array.from({ length: 6000 }, (_, d) => ({
    id: `m${String(d).padStart(5, '0')}`,
    text: Array.from(
      { length: 12 + (next() % 30) },
      () => words[Math.floor(((next() % 1000) / 1000) ** 2 * 3000)],
    ).join(' '),
  }));
  const space = new TfidfSpace(documents);

  it('keeps every entry, with the weights a direct computation gives', () => {
    expect(space.docTerm.length).toBeGreaterThan(1 << 17);
    const df = new Map<string, number>();
    const counts = documents.map((document) => {
      const tf = new Map<string, number>();
      for (const token of tokenize(document.text)) tf.set(token, (tf.get(token) ?? 0) + 1);
      for (const token of tf.keys()) df.set(token, (df.get(token) ?? 0) + 1);
      return tf;
    });
    const n = documents.length;
    const wrong: string[] = [];
    for (let d = 0; d < n; d++) {
      const raw = [...counts[d]!].map(
        ([token, tf]) =>
          [token, (1 + Math.log(tf)) * (Math.log((1 + n) / (1 + df.get(token)!)) + 1)] as const,
      );
      const norm = Math.hypot(...raw.map(([, weight]) => weight));
      const vector = space.vector(d);
      if (vector.terms.length !== raw.length) wrong.push(`${documents[d]!.id}: ${vector.terms.length} terms`);
      for (const [token, weight] of raw) {
        const at = vector.terms.indexOf(space.vocabulary.get(token)!);
        // One expect per document would take seconds over ~150k entries: mismatches are collected instead.
        if (at < 0 || Math.abs(vector.weights[at]! - weight / norm) > 1e-6)
          wrong.push(`${documents[d]!.id}: ${token}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('keeps its entries on shared buffers (a kNN thread reads them, not copies)', () => {
    expect(space.docTerm.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(space.docWeight.buffer).toBeInstanceOf(SharedArrayBuffer);
  });
});
