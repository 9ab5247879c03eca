import type { ViewHit, ViewKind } from '../types/view.ts';
import { tokenize } from './tokenize.ts';
import { compareHits, TopHits } from './top-hits.ts';

/** Okapi BM25 constants (the usual defaults: Robertson & Zaragoza 2009; Lucene, Elasticsearch). */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

export interface Bm25Document {
  memoryId: string;
  kind: ViewKind;
  key: string;
  text: string;
}

/** Lucene's non-negative IDF. Shared by every BM25 implementation so scores agree to the last bit. */
export function bm25Idf(documents: number, df: number): number {
  return Math.log(1 + (documents - df + 0.5) / (df + 0.5));
}

/** One term's BM25 contribution; the exact expression every backend uses (same rounding everywhere). */
export function bm25TermScore(idf: number, tf: number, length: number, averageLength: number): number {
  const norm = tf + BM25_K1 * (1 - BM25_B + (BM25_B * length) / averageLength);
  return (idf * tf * (BM25_K1 + 1)) / norm;
}

/**
 * Share of a kind's documents above which a query term is common: its idf is below ln 4 (bm25Idf at df = N / 4).
 * Set by hand, not tuned: each participant of a two-person chat is named in about half of its memories' metadata,
 * a quarter leaves room for uneven chats and three-person groups; month names (1/12) and weekdays (1/7) stay
 * below it. See commonOnlyKinds.
 */
export const COMMON_TERM_SHARE = 0.25;

/**
 * The view kinds a question's search leaves out (LexicalSearchOptions.skipCommonOnlyKinds): those in which
 * every query term the kind holds is in more than COMMON_TERM_SHARE of its documents, provided some other kind
 * holds a query term that is not (a question of common words alone keeps every kind, so it still finds what
 * those words match). `kinds`: per kind, its document count and the df (> 0) of each query term it holds.
 * Why: such a kind's exact top k is a tie among a large share of it (equal tf in views of equal length score
 * alike) broken by write order, which says nothing about the question, and at scale it is the costliest search
 * there is: a two-person chat's metadata view names the speaker in every memory, so each question naming a
 * participant was one in that kind (docs/store-lexical-index.md "Common-only kinds").
 */
export function commonOnlyKinds<K>(kinds: ReadonlyMap<K, { docs: number; dfs: readonly number[] }>): Set<K> {
  const common = new Set<K>();
  let informative = false;
  for (const [kind, { docs, dfs }] of kinds) {
    if (dfs.length === 0) continue;
    if (dfs.every((df) => df > docs * COMMON_TERM_SHARE)) common.add(kind);
    else informative = true;
  }
  return informative ? common : new Set();
}

/**
 * Most distinct terms one lexical search uses. Why: a search's cost grows with its terms' posting lists and
 * pruning fails once hundreds of common words are asked at once; a 4,000-character question of 515 distinct
 * common words took 13 s of CPU at 1M memories, 4.2 s with the cut (bench/worst-question-probe.ts). The
 * longest dev question has 50 distinct terms (Mem-Gallery; M3Exam 43), so no dev result changes. Every
 * backend applies the same cut.
 */
export const MAX_QUERY_TERMS = 64;

/**
 * Distinct query terms in first-occurrence order, the first MAX_QUERY_TERMS of them: scores are summed in this
 * order by every backend.
 */
export function queryTerms(query: string): string[] {
  const terms: string[] = [];
  const seen = new Set<string>();
  for (const token of tokenize(query)) {
    if (seen.has(token)) continue;
    seen.add(token);
    terms.push(token);
    if (terms.length === MAX_QUERY_TERMS) break;
  }
  return terms;
}

/** Term frequencies of a tokenized document, in first-occurrence order. */
export function termCounts(tokens: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
  return counts;
}

/**
 * In-memory BM25 over the view documents of ONE context, maintained incrementally (add / removeMemory) so a
 * write never forces a rebuild; the result is always the one a fresh build over the current views gives.
 *
 * Statistics (document count, IDF, average length) are kept per view kind: a metadata view ("June 2024
 * Monday Lisbon") and a message text are different kinds of document, and the paper builds one index per
 * view (3.3). Hence raw scores of different kinds are not comparable, and `limit` applies per kind: a search
 * without a kind filter returns up to `limit` hits of EACH kind, every (memory, view) at most once.
 *
 * IDF is Lucene's non-negative form log(1 + (N - n + 0.5) / (n + 0.5)); query terms are deduplicated.
 * Ties are broken by memory id, view kind then view key (compareHits), so results are deterministic.
 */
export class Bm25Index {
  private readonly byKind = new Map<ViewKind, KindIndex>();
  /** memory id -> its indexed documents, for removeMemory. */
  private readonly byMemory = new Map<string, { kind: ViewKind; doc: number }[]>();
  private nextDoc = 0;

  static build(documents: Iterable<Bm25Document>): Bm25Index {
    const index = new Bm25Index();
    for (const document of documents) index.add(document);
    return index;
  }

  /** Number of indexed (non-empty) view documents. */
  get size(): number {
    let total = 0;
    for (const kindIndex of this.byKind.values()) total += kindIndex.documents.size;
    return total;
  }

  /** Indexes one view document; one without tokens is skipped (it could never match). */
  add(document: Bm25Document): void {
    const tokens = tokenize(document.text);
    if (tokens.length === 0) return;
    let kindIndex = this.byKind.get(document.kind);
    if (!kindIndex) {
      kindIndex = new KindIndex();
      this.byKind.set(document.kind, kindIndex);
    }
    const doc = this.nextDoc++;
    kindIndex.add(doc, document, tokens);
    let docs = this.byMemory.get(document.memoryId);
    if (!docs) {
      docs = [];
      this.byMemory.set(document.memoryId, docs);
    }
    docs.push({ kind: document.kind, doc });
  }

  /** Removes every document of a memory (all its views); statistics follow. */
  removeMemory(memoryId: string): void {
    for (const { kind, doc } of this.byMemory.get(memoryId) ?? []) {
      const kindIndex = this.byKind.get(kind)!;
      kindIndex.remove(doc);
      if (kindIndex.documents.size === 0) this.byKind.delete(kind);
    }
    this.byMemory.delete(memoryId);
  }

  /**
   * With `memoryIds` only those memories' views are scored (statistics stay the whole index's, so each
   * score equals the unrestricted one); cost follows the ids, not the index.
   */
  search(
    query: string,
    options: {
      limit: number;
      kinds?: readonly ViewKind[];
      memoryIds?: readonly string[];
      skipCommonOnlyKinds?: boolean;
    },
  ): ViewHit[] {
    const terms = queryTerms(query);
    if (terms.length === 0 || options.limit <= 0) return [];
    const kinds = options.kinds ?? [...this.byKind.keys()];
    const hits: ViewHit[] = [];
    let subset: Map<ViewKind, number[]> | undefined;
    if (options.memoryIds !== undefined) {
      subset = new Map();
      for (const id of new Set(options.memoryIds)) {
        for (const { kind, doc } of this.byMemory.get(id) ?? []) {
          const docs = subset.get(kind) ?? [];
          docs.push(doc);
          subset.set(kind, docs);
        }
      }
    }
    const skipped = options.skipCommonOnlyKinds ? this.commonOnly(kinds, terms) : new Set<ViewKind>();
    for (const kind of new Set(kinds)) {
      const kindIndex = this.byKind.get(kind);
      if (!kindIndex || skipped.has(kind)) continue;
      if (subset) hits.push(...kindIndex.searchDocs(kind, terms, options.limit, subset.get(kind) ?? []));
      else hits.push(...kindIndex.search(kind, terms, options.limit, this.nextDoc));
    }
    return hits.sort(compareHits);
  }

  /** The kinds commonOnlyKinds leaves out of this search. */
  private commonOnly(kinds: readonly ViewKind[], terms: readonly string[]): Set<ViewKind> {
    const stats = new Map<ViewKind, { docs: number; dfs: number[] }>();
    for (const kind of kinds) {
      const kindIndex = this.byKind.get(kind);
      if (kindIndex) stats.set(kind, { docs: kindIndex.documents.size, dfs: kindIndex.dfs(terms) });
    }
    return commonOnlyKinds(stats);
  }
}

class KindIndex {
  readonly documents = new Map<number, { memoryId: string; key: string; length: number; terms: string[] }>();
  /** term -> doc -> tf */
  private readonly postings = new Map<string, Map<number, number>>();
  private totalLength = 0;

  add(doc: number, document: Bm25Document, tokens: string[]): void {
    const counts = termCounts(tokens);
    this.documents.set(doc, {
      memoryId: document.memoryId,
      key: document.key,
      length: tokens.length,
      terms: [...counts.keys()],
    });
    this.totalLength += tokens.length;
    for (const [term, tf] of counts) {
      let posting = this.postings.get(term);
      if (!posting) {
        posting = new Map();
        this.postings.set(term, posting);
      }
      posting.set(doc, tf);
    }
  }

  /** Document frequencies of the terms this kind holds. */
  dfs(terms: readonly string[]): number[] {
    return terms.flatMap((term) => {
      const posting = this.postings.get(term);
      return posting ? [posting.size] : [];
    });
  }

  remove(doc: number): void {
    const document = this.documents.get(doc);
    if (!document) return;
    this.documents.delete(doc);
    this.totalLength -= document.length;
    for (const term of document.terms) {
      const posting = this.postings.get(term)!;
      posting.delete(doc);
      if (posting.size === 0) this.postings.delete(term);
    }
  }

  /** BM25 of the given documents only, with this kind's statistics. */
  searchDocs(kind: ViewKind, terms: readonly string[], limit: number, docs: readonly number[]): ViewHit[] {
    const n = this.documents.size;
    const averageLength = this.totalLength / n;
    const idfs = terms.map((term) => {
      const posting = this.postings.get(term);
      return posting ? bm25Idf(n, posting.size) : 0;
    });
    const top = new TopHits(limit);
    for (const doc of docs) {
      const document = this.documents.get(doc);
      if (!document) continue;
      let rawScore = 0;
      terms.forEach((term, at) => {
        const tf = this.postings.get(term)?.get(doc);
        if (tf !== undefined) rawScore += bm25TermScore(idfs[at]!, tf, document.length, averageLength);
      });
      if (rawScore > 0) top.offer({ memoryId: document.memoryId, kind, key: document.key, rawScore });
    }
    return top.sorted();
  }

  search(kind: ViewKind, terms: readonly string[], limit: number, docSpace: number): ViewHit[] {
    const n = this.documents.size;
    const averageLength = this.totalLength / n;
    const scores = new Float64Array(docSpace);
    const touched: number[] = [];
    for (const term of terms) {
      const posting = this.postings.get(term);
      if (!posting) continue;
      const idf = bm25Idf(n, posting.size);
      for (const [doc, tf] of posting) {
        const length = this.documents.get(doc)!.length;
        if (scores[doc] === 0) touched.push(doc);
        scores[doc]! += bm25TermScore(idf, tf, length, averageLength);
      }
    }
    const top = new TopHits(limit);
    for (const doc of touched) {
      const rawScore = scores[doc]!;
      // Cheap pre-check before allocating a hit: a lower score than the worst kept can never enter.
      if (top.full && rawScore < top.worst!.rawScore) continue;
      const document = this.documents.get(doc)!;
      top.offer({ memoryId: document.memoryId, kind, key: document.key, rawScore });
    }
    return top.sorted();
  }
}
