import type {
  SemanticNeighbour,
  SemanticPosting,
  SemanticPostingFilter,
  SemanticTermBound,
} from '../../store/semantic-index-spec.ts';
import { sparseDot } from '../semantic/tfidf-space.ts';
import { rankableScore } from '../semantic/top-k-lists.ts';
import { BoundSums, type BoundView } from './bound-sums.ts';
import type { SparseDoc } from './frozen-tfidf.ts';

/** What the exact searches read: the store's semantic port bound to one context, or a compaction scratch. */
export interface KnnSource {
  /** maxRatio only with `{ ratio: true }` (Infinity otherwise: SemanticIndexStore.termBounds). */
  termBounds(
    terms: readonly string[],
    options?: { ratio?: boolean },
  ): Promise<Map<string, SemanticTermBound>>;
  postings(term: string, filter: SemanticPostingFilter): Promise<readonly SemanticPosting[]>;
  /** `postings(term, { top: n })` of several terms at once, when the source can (one round trip). */
  topPostings?(terms: readonly string[], n: number): Promise<ReadonlyMap<string, readonly SemanticPosting[]>>;
  vectors(ids: readonly string[]): Promise<Map<string, SparseDoc>>;
}

/**
 * Slack for float summation order: scores are rounded to 1e-9 (rankableScore), so a pair whose exact sum
 * is within 1e-8 of a cutoff is always read. Only makes the searches read a little more, never less.
 */
const SLACK = 1e-8;

/** Candidates scored exactly per round (one vectors call), best upper bound first. */
const BATCH = 32;
/** Deepen the posting reads (halving the budget share γ) while more candidates than this survive... */
const MAX_CANDIDATES = 64;
/** ...at most this many times: reading postings is cheap, reading a vector per candidate is not. */
const MAX_ROUNDS = 5;

/**
 * Exact top-k of `query` among the documents of `source` (itself excluded), score desc then id asc.
 *
 * MaxScore with a split budget, on posting prefixes (postings are read by weight desc, so what was not read
 * of a term weighs at most the last weight read, its cap):
 * 1. the k heaviest postings of each term give partial sums, lower bounds of the true scores; their k-th
 *    largest is a provisional threshold θ (no vector read yet);
 * 2. budget γθ (γ = 1 first): terms sorted by upper bound q_t * maxWeight_t, the longest prefix whose bounds
 *    sum to B below the budget is not read further, the rest γθ - B is split over the other terms in
 *    proportion to their document frequency (α_t) and each is read down to weight α_t / q_t. The caps then
 *    sum to at most γθ <= θ, so a document seen in no read cannot reach θ: no df cap, nothing missed;
 * 3. a seen document's upper bound is its partial sum plus q_t * cap_t for each term it was not seen in.
 *    While more than MAX_CANDIDATES bounds reach θ, γ is halved and the reads deepened (caps shrink,
 *    partial sums and θ grow); the survivors are scored exactly (vectors), best bound first, θ rising.
 */
export async function exactTopK(
  source: KnnSource,
  query: SparseDoc,
  k: number,
  df: ReadonlyMap<string, number>,
  seeds: readonly string[] = [],
  options: TopKSearchOptions = {},
): Promise<SemanticNeighbour[]> {
  if (query.terms.length === 0 || k < 1) return [];
  // The term bounds and each term's top k are independent reads, issued together (one round trip where the
  // store pipelines them); the top reads of terms without a bound (no postings) come back empty, unused.
  const positive = query.terms.filter((_, at) => query.weights[at]! > 0);
  const [bounds, tops] = await Promise.all([
    source.termBounds(query.terms),
    source.topPostings ? source.topPostings(positive, k) : undefined,
  ]);
  const terms = termsWithBounds(query, bounds);
  const limit = options.maxPostingsPerTerm ?? Number.POSITIVE_INFINITY;
  // A term's cap bounds the weight of every posting not read: the last weight of a top-k read (0 when that
  // was the whole list), the cutoff of a minWeight read (what it left out is strictly below). A truncated
  // term (more than `limit` postings at the snapshot) is read once, its `limit` heaviest postings, and its
  // cap is then 0: the search is exact over the index truncated to those postings.
  const prefixes = new Map<string, readonly SemanticPosting[]>();
  const caps = new Map<string, number>();
  const truncated = new Set<string>();
  for (const { term } of terms) {
    const rows = tops ? (tops.get(term) ?? []) : await source.postings(term, { top: k });
    prefixes.set(term, rows);
    caps.set(term, rows.length < k ? 0 : rows.at(-1)!.weight);
  }
  const exact = await scoreAll(
    source,
    query,
    seeds.filter((id) => id !== query.memoryId),
  );
  const capOf = (term: string): number => caps.get(term)!;
  const windows = new Map<string, number>();
  const sums = new BoundSums(terms, query.memoryId);
  sums.update(prefixes);
  let view = sums.view(capOf, exact, k, SLACK);
  for (let round = 0, gamma = 1; round < MAX_ROUNDS; round++, gamma /= 2) {
    const plan =
      view.theta > 0
        ? splitBudget(terms, (b) => b.maxWeight, gamma * view.theta, df)
        : terms.map((entry) => ({ ...entry, cutoff: 0 }));
    // The round's reads do not depend on each other (one per term): issued together, so a networked store
    // can answer them in one round trip, then applied in plan order.
    const reads: Array<{ term: string; minWeight?: number; below?: number | undefined }> = [];
    const pending: Array<Promise<readonly SemanticPosting[]>> = [];
    for (const { term, weight, cutoff } of plan) {
      const minWeight = cutoff / weight;
      if (minWeight >= capOf(term)) continue;
      if ((df.get(term) ?? 1) > limit) {
        if (truncated.has(term)) continue;
        truncated.add(term);
        reads.push({ term });
        pending.push(source.postings(term, { top: limit }));
        continue;
      }
      // After a minWeight read only the window below its cutoff is new (a top-k read may have cut a tie).
      const below = windows.get(term);
      reads.push({ term, minWeight, below });
      pending.push(source.postings(term, below === undefined ? { minWeight } : { minWeight, below }));
    }
    const fetched = await Promise.all(pending);
    reads.forEach(({ term, minWeight, below }, at) => {
      const rows = fetched[at]!;
      if (minWeight === undefined) {
        prefixes.set(term, rows);
        caps.set(term, 0);
        return;
      }
      prefixes.set(term, below === undefined ? rows : [...prefixes.get(term)!, ...rows]);
      windows.set(term, minWeight);
      caps.set(term, Math.max(0, minWeight));
    });
    sums.update(prefixes);
    view = sums.view(capOf, exact, k, SLACK);
    if (view.pendingCount <= MAX_CANDIDATES || view.theta <= 0) break;
  }
  return refine(source, query, k, view, exact);
}

export interface TopKSearchOptions {
  /**
   * Read at most this many postings (the heaviest) of a term whose snapshot document frequency exceeds it;
   * candidates are still scored exactly from their full vectors. Default: no limit (exact).
   */
  maxPostingsPerTerm?: number;
}

/**
 * Documents whose list `query` may enter: every y with score(query, y) >= listThreshold(y) is returned (a
 * superset; the caller checks each list). The stored ratio w / threshold turns "reaches y's own threshold"
 * into one inequality Σ_t q_t ratio_yt >= 1, bounded like exactTopK with θ = 1 and maxRatio (a term's cap:
 * its read cutoff, or maxRatio when not read), deepening while more than MAX_CANDIDATES survive.
 * Open lists (threshold 0) have ratio Infinity and are always returned.
 */
export async function reverseCandidates(
  source: KnnSource,
  query: SparseDoc,
  df: ReadonlyMap<string, number>,
): Promise<string[]> {
  if (query.terms.length === 0) return [];
  const terms = termsWithBounds(query, await source.termBounds(query.terms, { ratio: true }));
  const caps = new Map(terms.map((entry) => [entry.term, entry.bound.maxRatio]));
  const rows = new Map<string, readonly SemanticPosting[]>();
  let out: string[] = [];
  for (let round = 0, gamma = 1; round < MAX_ROUNDS; round++, gamma /= 2) {
    for (const { term, weight, cutoff } of splitBudget(terms, (b) => b.maxRatio, gamma * (1 - SLACK), df)) {
      const minRatio = cutoff / weight;
      const previous = caps.get(term)!;
      if (minRatio >= previous) continue;
      const read = rows.get(term);
      const fresh = await source.postings(term, read ? { minRatio, below: previous } : { minRatio });
      rows.set(term, read ? [...read, ...fresh] : fresh);
      caps.set(term, minRatio);
    }
    let capSum = 0;
    for (const { term, weight } of terms) capSum += weight * caps.get(term)!;
    const sums = new Map<string, { partial: number; seenCap: number }>();
    for (const { term, weight } of terms) {
      for (const posting of rows.get(term) ?? []) {
        if (posting.memoryId === query.memoryId) continue;
        const entry = sums.get(posting.memoryId) ?? { partial: 0, seenCap: 0 };
        entry.partial += weight * (posting.ratio ?? Number.POSITIVE_INFINITY);
        entry.seenCap += weight * caps.get(term)!;
        sums.set(posting.memoryId, entry);
      }
    }
    // Unseen terms: ratio below the read cutoff (read terms) or at most maxRatio (terms not read).
    out = [...sums]
      .filter(([, { partial, seenCap }]) => !(partial + (capSum - seenCap) < 1 - SLACK))
      .map(([id]) => id);
    if (out.length <= MAX_CANDIDATES) break;
  }
  return out;
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
  return rankableScore(sparseDot(x, y));
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

/** Scores the pending documents exactly, best upper bound first, while their bound reaches the threshold. */
async function refine(
  source: KnnSource,
  query: SparseDoc,
  k: number,
  view: BoundView,
  exact: Map<string, number>,
): Promise<SemanticNeighbour[]> {
  const { lower } = view;
  const pending = view.pending();
  let at = 0;
  while (at < pending.length) {
    const theta = lower.kth(k) - SLACK;
    if (pending[at]!.upper < theta) break;
    const batch = pending.slice(at, at + BATCH).filter((entry) => entry.upper >= theta);
    at += BATCH;
    for (const [id, score] of await scoreAll(
      source,
      query,
      batch.map((entry) => entry.id),
    )) {
      lower.set(id, score);
    }
  }
  return [...exact]
    .filter(([, score]) => score > 0)
    .map(([memoryId, score]) => ({ memoryId, score }))
    .sort(compareNeighbours)
    .slice(0, k);
}

async function scoreAll(
  source: KnnSource,
  query: SparseDoc,
  ids: readonly string[],
): Promise<Map<string, number>> {
  const scores = new Map<string, number>();
  if (ids.length === 0) return scores;
  for (const [id, vector] of await source.vectors(ids)) scores.set(id, pairScore(query, vector));
  return scores;
}
