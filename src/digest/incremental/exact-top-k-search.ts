import type {
  SemanticNeighbour,
  SemanticPosting,
  SemanticPostingFilter,
  SemanticTermBound,
} from '../../store/semantic-index-spec.ts';
import { rankableScore } from '../semantic/top-k-lists.ts';
import { type SparseDoc, sparseDocDot } from './frozen-tfidf.ts';

/** What the exact searches read: the store's semantic port bound to one context, or a compaction scratch. */
export interface KnnSource {
  termBounds(terms: readonly string[]): Promise<Map<string, SemanticTermBound>>;
  postings(term: string, filter: SemanticPostingFilter): Promise<readonly SemanticPosting[]>;
  vectors(ids: readonly string[]): Promise<Map<string, SparseDoc>>;
}

/**
 * Slack for float summation order: scores are rounded to 1e-9 (rankableScore), so a pair whose exact sum
 * is within 1e-8 of a cutoff is always read. Only makes the searches read a little more, never less.
 */
const SLACK = 1e-8;

/**
 * Exact top-k of `query` among the documents of `source` (itself excluded), score desc then id asc.
 *
 * MaxScore with a split budget: seeds (given ids plus the k heaviest postings of each term) give a
 * provisional k-th score θ. A document reaching θ must have Σ_t q_t w_t >= θ. Terms are sorted by their upper
 * bound q_t * maxWeight_t; the longest prefix whose bounds sum B stays below θ is skipped entirely (its
 * postings cannot lift a document to θ alone), and the rest R = θ - B is split over the remaining terms in
 * proportion to their document frequency: a document reaching θ has, for some kept term, q_t w_t >= α_t,
 * so reading only postings with w_t >= α_t / q_t finds it. Long (common-term) lists get the largest share
 * and are read least. Exact whatever the split; no document-frequency cap.
 */
export async function exactTopK(
  source: KnnSource,
  query: SparseDoc,
  k: number,
  df: ReadonlyMap<string, number>,
  seeds: readonly string[] = [],
): Promise<SemanticNeighbour[]> {
  if (query.terms.length === 0 || k < 1) return [];
  const bounds = await source.termBounds(query.terms);
  const terms = termsWithBounds(query, bounds);
  const candidates = new Set(seeds);
  for (const { term } of terms) {
    for (const posting of await source.postings(term, { top: k })) candidates.add(posting.memoryId);
  }
  candidates.delete(query.memoryId);
  const scores = await scoreAll(source, query, candidates);
  const theta = kthScore(scores, k);

  const more = new Set<string>();
  if (theta <= SLACK) {
    for (const { term } of terms) {
      for (const posting of await source.postings(term, { minWeight: 0 })) more.add(posting.memoryId);
    }
  } else {
    for (const { term, weight, cutoff } of splitBudget(terms, (b) => b.maxWeight, theta - SLACK, df)) {
      for (const posting of await source.postings(term, { minWeight: cutoff / weight })) {
        more.add(posting.memoryId);
      }
    }
  }
  for (const id of candidates) more.delete(id);
  more.delete(query.memoryId);
  for (const [id, score] of await scoreAll(source, query, more)) scores.set(id, score);
  return topOf(scores, k);
}

/**
 * Documents whose list `query` may enter: every y with score(query, y) >= threshold(y) is returned (a
 * superset; the caller checks each list). The stored ratio w / threshold turns "reaches y's own threshold"
 * into one inequality Σ_t q_t ratio_yt >= 1, bounded exactly like exactTopK with θ = 1 and maxRatio.
 * Open lists (threshold 0) have ratio Infinity and are always returned.
 */
export async function reverseCandidates(
  source: KnnSource,
  query: SparseDoc,
  df: ReadonlyMap<string, number>,
): Promise<Set<string>> {
  const found = new Set<string>();
  if (query.terms.length === 0) return found;
  const bounds = await source.termBounds(query.terms);
  const terms = termsWithBounds(query, bounds);
  for (const { term, weight, cutoff } of splitBudget(terms, (b) => b.maxRatio, 1 - SLACK, df)) {
    for (const posting of await source.postings(term, { minRatio: cutoff / weight })) {
      found.add(posting.memoryId);
    }
  }
  found.delete(query.memoryId);
  return found;
}

/** True when (id, score) enters a list of capacity k: it beats the k-th entry, or the list has room. */
export function entersList(
  list: readonly SemanticNeighbour[],
  k: number,
  id: string,
  score: number,
): boolean {
  if (!(score > 0)) return false;
  if (list.length < k) return true;
  const last = list[k - 1]!;
  return score > last.score || (score === last.score && id < last.memoryId);
}

/** The list with (id, score) inserted in order and cut to k. */
export function insertIntoList(
  list: readonly SemanticNeighbour[],
  k: number,
  id: string,
  score: number,
): SemanticNeighbour[] {
  const out = list.filter((n) => n.memoryId !== id);
  out.push({ memoryId: id, score });
  out.sort(compareNeighbours);
  return out.slice(0, k);
}

export function compareNeighbours(x: SemanticNeighbour, y: SemanticNeighbour): number {
  return y.score - x.score || (x.memoryId < y.memoryId ? -1 : x.memoryId > y.memoryId ? 1 : 0);
}

export function pairScore(x: SparseDoc, y: SparseDoc): number {
  return rankableScore(sparseDocDot(x, y));
}

interface TermEntry {
  term: string;
  weight: number;
  bound: SemanticTermBound;
}

function termsWithBounds(query: SparseDoc, bounds: Map<string, SemanticTermBound>): TermEntry[] {
  const out: TermEntry[] = [];
  query.terms.forEach((term, at) => {
    const bound = bounds.get(term);
    if (bound && query.weights[at]! > 0) out.push({ term, weight: query.weights[at]!, bound });
  });
  return out;
}

/**
 * Skips the prefix of terms (by ascending upper bound) whose bounds sum below `target`, then gives each
 * remaining term a share α_t of what is left, proportional to its document frequency (Σ α_t = the rest).
 * Returns the kept terms with α_t as `cutoff` on q_t * value.
 */
function splitBudget(
  terms: readonly TermEntry[],
  value: (bound: SemanticTermBound) => number,
  target: number,
  df: ReadonlyMap<string, number>,
): Array<{ term: string; weight: number; cutoff: number }> {
  const ordered = terms
    .map((entry) => ({ ...entry, upper: entry.weight * value(entry.bound) }))
    .sort((x, y) => x.upper - y.upper || (x.term < y.term ? -1 : 1));
  let skipped = 0;
  let at = 0;
  while (at < ordered.length && skipped + ordered[at]!.upper < target) skipped += ordered[at++]!.upper;
  const kept = ordered.slice(at);
  const rest = target - skipped;
  const mass = kept.reduce((sum, entry) => sum + (df.get(entry.term) ?? 1), 0);
  return kept.map((entry) => ({
    term: entry.term,
    weight: entry.weight,
    cutoff: (rest * (df.get(entry.term) ?? 1)) / mass,
  }));
}

async function scoreAll(
  source: KnnSource,
  query: SparseDoc,
  ids: Iterable<string>,
): Promise<Map<string, number>> {
  const list = [...ids];
  const scores = new Map<string, number>();
  if (list.length === 0) return scores;
  const vectors = await source.vectors(list);
  for (const [id, vector] of vectors) {
    const score = pairScore(query, vector);
    if (score > 0) scores.set(id, score);
  }
  return scores;
}

function kthScore(scores: Map<string, number>, k: number): number {
  if (scores.size < k) return 0;
  return [...scores.values()].sort((x, y) => y - x)[k - 1]!;
}

function topOf(scores: Map<string, number>, k: number): SemanticNeighbour[] {
  return [...scores]
    .map(([memoryId, score]) => ({ memoryId, score }))
    .sort(compareNeighbours)
    .slice(0, k);
}
