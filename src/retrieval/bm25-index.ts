import type { ViewHit, ViewKind } from '../types/view.ts';
import { tokenize } from './tokenize.ts';

/** Okapi BM25 constants (the usual defaults: Robertson & Zaragoza 2009; Lucene, Elasticsearch). */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

export interface Bm25Document {
  memoryId: string;
  kind: ViewKind;
  key: string;
  text: string;
}

/**
 * In-memory BM25 over the view documents of ONE context.
 *
 * Statistics (document count, IDF, average length) are kept per view kind: a metadata view ("June 2024
 * Monday Lisbon") and a message text are different kinds of document, and the paper builds one index per
 * view (3.3). Hence raw scores of different kinds are not comparable, and `limit` applies per kind: a search
 * without a kind filter returns up to `limit` hits of EACH kind, every (memory, view) at most once.
 *
 * IDF is Lucene's non-negative form log(1 + (N - n + 0.5) / (n + 0.5)); query terms are deduplicated.
 * Ties are broken by memory id then view key, so results are deterministic.
 */
export class Bm25Index {
  private readonly byKind = new Map<ViewKind, KindIndex>();

  static build(documents: Iterable<Bm25Document>): Bm25Index {
    const index = new Bm25Index();
    for (const document of documents) {
      const tokens = tokenize(document.text);
      if (tokens.length === 0) continue;
      let kindIndex = index.byKind.get(document.kind);
      if (!kindIndex) {
        kindIndex = new KindIndex();
        index.byKind.set(document.kind, kindIndex);
      }
      kindIndex.add(document, tokens);
    }
    return index;
  }

  /** Number of indexed (non-empty) view documents. */
  get size(): number {
    let total = 0;
    for (const kindIndex of this.byKind.values()) total += kindIndex.documents.length;
    return total;
  }

  search(query: string, options: { limit: number; kinds?: readonly ViewKind[] }): ViewHit[] {
    const terms = [...new Set(tokenize(query))];
    if (terms.length === 0 || options.limit <= 0) return [];
    const kinds = options.kinds ?? [...this.byKind.keys()];
    const hits: ViewHit[] = [];
    for (const kind of new Set(kinds)) {
      const kindIndex = this.byKind.get(kind);
      if (kindIndex) hits.push(...kindIndex.search(kind, terms, options.limit));
    }
    return hits.sort(compareHits);
  }
}

class KindIndex {
  readonly documents: { memoryId: string; key: string; length: number }[] = [];
  private readonly postings = new Map<string, { docs: number[]; tfs: number[] }>();
  private totalLength = 0;

  add(document: Bm25Document, tokens: string[]): void {
    const docIndex = this.documents.length;
    this.documents.push({ memoryId: document.memoryId, key: document.key, length: tokens.length });
    this.totalLength += tokens.length;
    const counts = new Map<string, number>();
    for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
    for (const [term, tf] of counts) {
      let posting = this.postings.get(term);
      if (!posting) {
        posting = { docs: [], tfs: [] };
        this.postings.set(term, posting);
      }
      posting.docs.push(docIndex);
      posting.tfs.push(tf);
    }
  }

  search(kind: ViewKind, terms: readonly string[], limit: number): ViewHit[] {
    const n = this.documents.length;
    const averageLength = this.totalLength / n;
    const scores = new Float64Array(n);
    const touched: number[] = [];
    for (const term of terms) {
      const posting = this.postings.get(term);
      if (!posting) continue;
      const df = posting.docs.length;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      for (let i = 0; i < df; i++) {
        const doc = posting.docs[i]!;
        const tf = posting.tfs[i]!;
        const length = this.documents[doc]!.length;
        const norm = tf + BM25_K1 * (1 - BM25_B + (BM25_B * length) / averageLength);
        if (scores[doc] === 0) touched.push(doc);
        scores[doc]! += (idf * tf * (BM25_K1 + 1)) / norm;
      }
    }
    const hits = touched.map((doc) => {
      const document = this.documents[doc]!;
      return { memoryId: document.memoryId, kind, key: document.key, rawScore: scores[doc]! };
    });
    return hits.sort(compareHits).slice(0, limit);
  }
}

function compareHits(x: ViewHit, y: ViewHit): number {
  return (
    y.rawScore - x.rawScore ||
    compareStrings(x.memoryId, y.memoryId) ||
    compareStrings(x.kind, y.kind) ||
    compareStrings(x.key, y.key)
  );
}

function compareStrings(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}
