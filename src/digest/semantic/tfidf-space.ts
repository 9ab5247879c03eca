import { tokenize } from '../../retrieval/tokenize.ts';
import type { MemoryRecord } from '../../types/memory-record.ts';
import { semanticText } from './semantic-text.ts';
import { sharedArray, sharedCopy } from './shared-array.ts';

/** A sparse vector: term ids ascending, with their weights. */
export interface SparseVector {
  terms: Uint32Array;
  weights: Float32Array;
}

/**
 * What a kNN pass reads of a space: CSR entries (term ids ascending per document, L2-normalised weights) and
 * the document frequency per term. Plain typed arrays, so a worker thread can be handed them.
 */
export interface KnnSpace {
  readonly size: number;
  readonly docStart: Uint32Array;
  readonly docTerm: Uint32Array;
  readonly docWeight: Float32Array;
  readonly df: Uint32Array;
}

/** One document of a TF-IDF space. */
export interface TfidfDocument {
  id: string;
  text: string;
}

/**
 * The offline semantic space of one context: TF-IDF over the shared tokenizer's tokens (the same terms BM25
 * uses). Weights: sublinear tf (1 + ln tf) times smoothed idf (ln((1 + N) / (1 + df)) + 1, so a term in every
 * document still counts a little), each document L2-normalised, so a dot product is a cosine. IDF is per
 * context (isolation). Named for what it is: this is lexical similarity, not a learned embedding.
 *
 * Storage is CSR (one flat array of term ids and one of weights, with a start offset per document), which
 * keeps 100k documents in a few tens of MB and makes the kNN loops allocation-free.
 */
export class TfidfSpace implements KnnSpace {
  readonly name = 'tfidf';
  readonly ids: readonly string[];
  readonly vocabulary: ReadonlyMap<string, number>;
  /** Document frequency per term id. */
  readonly df: Uint32Array;
  readonly idf: Float64Array;
  /** Document d owns entries docStart[d] .. docStart[d + 1] - 1 of docTerm / docWeight. */
  readonly docStart: Uint32Array;
  readonly docTerm: Uint32Array;
  readonly docWeight: Float32Array;
  private postings: { start: Uint32Array; doc: Uint32Array; weight: Float32Array } | undefined;

  constructor(documents: Iterable<TfidfDocument> | TfidfSpaceBuilder) {
    let built: TfidfSpaceBuilder;
    if (documents instanceof TfidfSpaceBuilder) built = documents;
    else {
      built = new TfidfSpaceBuilder();
      for (const document of documents) built.add(document);
    }
    const { ids, vocabulary, flatTerms, flatCounts, flatEnd } = built;
    let { dfList, offsets } = built;
    built.release();
    const n = ids.length;
    this.ids = ids;
    this.vocabulary = vocabulary;
    // On SharedArrayBuffers: the threads of a parallel kNN pass read these, not copies (parallel-knn-lists.ts).
    this.df = sharedCopy(Uint32Array, dfList);
    dfList = [];
    this.idf = new Float64Array(this.df.length);
    for (let t = 0; t < this.df.length; t++) this.idf[t] = Math.log((1 + n) / (1 + this.df[t]!)) + 1;

    this.docStart = sharedCopy(Uint32Array, offsets);
    offsets = [];
    this.docTerm = sharedCopy(Uint32Array, flatTerms.subarray(0, flatEnd));
    this.docWeight = sharedArray(Float32Array, flatEnd);
    for (let d = 0; d < n; d++) {
      const begin = this.docStart[d]!;
      const end = this.docStart[d + 1]!;
      let norm = 0;
      for (let e = begin; e < end; e++) {
        const weight = (1 + Math.log(flatCounts[e]!)) * this.idf[this.docTerm[e]!]!;
        this.docWeight[e] = weight;
        norm += weight * weight;
      }
      const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
      for (let e = begin; e < end; e++) this.docWeight[e] = this.docWeight[e]! * scale;
    }
  }

  get size(): number {
    return this.ids.length;
  }

  /** The stored vector of document `index` (a view, not a copy). */
  vector(index: number): SparseVector {
    const start = this.docStart[index]!;
    const end = this.docStart[index + 1]!;
    return { terms: this.docTerm.subarray(start, end), weights: this.docWeight.subarray(start, end) };
  }

  /** A query in this space: same tokenizer and idf; terms unknown to the context are dropped. */
  queryVector(text: string): SparseVector {
    const counts = new Map<number, number>();
    for (const token of tokenize(text)) {
      const id = this.vocabulary.get(token);
      if (id !== undefined) counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    const terms = Uint32Array.from([...counts.keys()].sort((x, y) => x - y));
    const weights = new Float32Array(terms.length);
    let norm = 0;
    terms.forEach((term, i) => {
      const weight = (1 + Math.log(counts.get(term)!)) * this.idf[term]!;
      weights[i] = weight;
      norm += weight * weight;
    });
    const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    for (let i = 0; i < weights.length; i++) weights[i] = weights[i]! * scale;
    return { terms, weights };
  }

  /** Cosine search of a query string over the context's documents (exact, via the inverted index). */
  search(text: string, limit: number): Array<{ id: string; score: number }> {
    const query = this.queryVector(text);
    const postings = this.invertedIndex();
    const scores = new Map<number, number>();
    for (let q = 0; q < query.terms.length; q++) {
      const term = query.terms[q]!;
      const weight = query.weights[q]!;
      for (let p = postings.start[term]!; p < postings.start[term + 1]!; p++) {
        const doc = postings.doc[p]!;
        scores.set(doc, (scores.get(doc) ?? 0) + weight * postings.weight[p]!);
      }
    }
    return [...scores]
      .sort((x, y) => y[1] - x[1] || x[0] - y[0])
      .slice(0, limit)
      .map(([doc, score]) => ({ id: this.ids[doc]!, score }));
  }

  /** Postings of every term (doc ascending), built on first use. */
  invertedIndex(): { start: Uint32Array; doc: Uint32Array; weight: Float32Array } {
    if (this.postings) return this.postings;
    const start = new Uint32Array(this.df.length + 1);
    for (let t = 0; t < this.df.length; t++) start[t + 1] = start[t]! + this.df[t]!;
    const fill = start.slice(0, this.df.length);
    const doc = new Uint32Array(this.docTerm.length);
    const weight = new Float32Array(this.docTerm.length);
    for (let d = 0; d < this.size; d++) {
      for (let e = this.docStart[d]!; e < this.docStart[d + 1]!; e++) {
        const slot = fill[this.docTerm[e]!]!++;
        doc[slot] = d;
        weight[slot] = this.docWeight[e]!;
      }
    }
    this.postings = { start, doc, weight };
    return this.postings;
  }
}

/**
 * The first pass of a TfidfSpace, one document at a time (`new TfidfSpace(builder)` then computes the weights):
 * a caller can go back to its event loop between documents (a compaction in steps) instead of tokenising the
 * whole context in one synchronous call. The documents must come in the space's order.
 */
export class TfidfSpaceBuilder {
  // One pass over the documents, their distinct term ids kept in ONE growing flat array with an offset per
  // document: a typed array per document cost ~200 bytes of overhead each (~200 MB at 1M memories, issue #10).
  readonly vocabulary = new Map<string, number>();
  readonly ids: string[] = [];
  dfList: number[] = [];
  flatTerms = new Uint32Array(1 << 16);
  flatCounts = new Uint32Array(1 << 16);
  flatEnd = 0;
  offsets: number[] = [0];

  add(document: TfidfDocument): void {
    const { vocabulary } = this;
    const tokens = tokenize(document.text);
    const termIds = new Uint32Array(tokens.length);
    for (let t = 0; t < tokens.length; t++) {
      const token = tokens[t]!;
      let id = vocabulary.get(token);
      if (id === undefined) {
        id = vocabulary.size;
        vocabulary.set(token, id);
        this.dfList.push(0);
      }
      termIds[t] = id;
    }
    termIds.sort();
    if (this.flatEnd + termIds.length > this.flatTerms.length) {
      const capacity = Math.max(this.flatTerms.length * 2, this.flatEnd + termIds.length);
      const terms = new Uint32Array(capacity);
      terms.set(this.flatTerms.subarray(0, this.flatEnd));
      this.flatTerms = terms;
      const counts = new Uint32Array(capacity);
      counts.set(this.flatCounts.subarray(0, this.flatEnd));
      this.flatCounts = counts;
    }
    for (let t = 0; t < termIds.length; ) {
      const term = termIds[t]!;
      let run = 1;
      while (t + run < termIds.length && termIds[t + run] === term) run++;
      this.dfList[term]!++;
      this.flatTerms[this.flatEnd] = term;
      this.flatCounts[this.flatEnd] = run;
      this.flatEnd++;
      t += run;
    }
    this.offsets.push(this.flatEnd);
    this.ids.push(document.id);
  }

  /** Drops the builder's arrays once a space took them (a caller may keep the builder). */
  release(): void {
    this.dfList = [];
    this.offsets = [];
    this.flatTerms = new Uint32Array(0);
    this.flatCounts = new Uint32Array(0);
    this.flatEnd = 0;
  }
}

/** TF-IDF space over records (text, captions, OCR: `semanticText`), in the given order. */
export function buildTfidfSpace(records: Iterable<MemoryRecord>): TfidfSpace {
  return new TfidfSpace(
    (function* () {
      for (const record of records) yield { id: record.id, text: semanticText(record) };
    })(),
  );
}

/**
 * Dot product of two sparse vectors whose terms (ids or strings) are sorted ascending by `<` (cosine when both
 * are L2-normalised). Shared by the TF-IDF space (term ids) and the frozen-IDF kNN state (term strings).
 */
export function sparseDot<T extends number | string>(
  x: { terms: ArrayLike<T>; weights: ArrayLike<number> },
  y: { terms: ArrayLike<T>; weights: ArrayLike<number> },
): number {
  let sum = 0;
  let i = 0;
  let j = 0;
  while (i < x.terms.length && j < y.terms.length) {
    const a = x.terms[i]!;
    const b = y.terms[j]!;
    if (a === b) sum += x.weights[i++]! * y.weights[j++]!;
    else if (a < b) i++;
    else j++;
  }
  return sum;
}
