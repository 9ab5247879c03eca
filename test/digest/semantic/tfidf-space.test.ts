import { describe, expect, it } from 'vitest';
import { buildTfidfSpace, sparseDot, TfidfSpace } from '../../../src/digest/semantic/tfidf-space.ts';
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
