import { tokenize } from './tokenize.ts';

/** Bound of the cache: total characters of the cached texts (tokens take about as much again). */
const MAX_CACHED_CHARS = 8_000_000;

interface CachedTokens {
  tokens: readonly string[];
  used: boolean;
  /** The text's TermVector, made on first request. */
  vector?: TermVector;
}

const cache = new Map<string, CachedTokens>();
let cachedChars = 0;

/**
 * `tokenize` with a process-wide cache keyed by the exact text, for the query path: the offline verifiers
 * read the same pool memories question after question, and re-tokenising ~48 documents per question was a
 * fixed cost of every retrieve. Bounded by MAX_CACHED_CHARS; eviction keeps the recently read (CLOCK: a hit
 * sets a flag, the eviction walk spares a flagged entry once). A hit changes no Map: moving the key to the
 * back (a true LRU, as before) made V8 rehash the table on most hits of a key read again and again (a
 * speaker's name, 48 times a question: 10-50 us each at 10k entries). The result is shared and must not be
 * mutated. Keyed by content, so an edited memory simply misses.
 */
export function tokenizeCached(text: string): readonly string[] {
  return cachedEntry(text).tokens;
}

function cachedEntry(text: string): CachedTokens {
  const hit = cache.get(text);
  if (hit) {
    hit.used = true;
    return hit;
  }
  const entry: CachedTokens = { tokens: tokenize(text), used: false };
  if (text.length > MAX_CACHED_CHARS / 100) return entry;
  cache.set(text, entry);
  cachedChars += text.length;
  while (cachedChars > MAX_CACHED_CHARS) {
    // One walk per pass, oldest first; a pass that only cleared flags is followed by one that evicts.
    for (const [key, entry] of cache) {
      if (cachedChars <= MAX_CACHED_CHARS * EVICT_TO) break;
      if (entry.used) {
        entry.used = false;
        continue;
      }
      cache.delete(key);
      cachedChars -= key.length;
    }
  }
  return entry;
}

/** Share of the bound an eviction leaves: batches amortise the walk. */
const EVICT_TO = 0.875;

/**
 * A text's distinct terms in ascending (code unit) order with their counts, and its length in tokens. The
 * offline verifiers read every pool text against each question's terms: counting a text's tokens with string
 * lookups again per question (node verifier) and building a Set of its tokens per question (edge verifier) cost
 * more than the questions' few terms need. A vector is made once per text from its cached tokens (a sort of
 * ~20 short strings: no dictionary of the vocabulary, whose lookups of fresh token strings cost ~10 us a text)
 * and kept with them in the token cache (it goes when they go); it holds the tokens' own strings.
 */
export interface TermVector {
  readonly terms: readonly string[];
  readonly counts: readonly number[];
  readonly length: number;
}

/** tokenizeCached's tokens of `text` as a TermVector, made once per cached text. Shared: never mutate it. */
export function termVectorCached(text: string): TermVector {
  const entry = cachedEntry(text);
  entry.vector ??= termVector(entry.tokens);
  return entry.vector;
}

function termVector(tokens: readonly string[]): TermVector {
  const sorted = [...tokens].sort();
  const terms: string[] = [];
  const counts: number[] = [];
  for (const term of sorted) {
    if (terms.length > 0 && terms[terms.length - 1] === term) counts[counts.length - 1]!++;
    else {
      terms.push(term);
      counts.push(1);
    }
  }
  return { terms, counts, length: tokens.length };
}

/** The count of `term` in `vector` (0 when absent): a binary search over its ascending terms. */
export function termCount(vector: TermVector, term: string): number {
  const terms = vector.terms;
  let lo = 0;
  let hi = terms.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const at = terms[mid]!;
    if (at === term) return vector.counts[mid]!;
    if (at < term) lo = mid + 1;
    else hi = mid - 1;
  }
  return 0;
}

/** Distinct terms two vectors share (both ascending: one merge). */
export function sharedTerms(x: TermVector, y: TermVector): number {
  let shared = 0;
  let i = 0;
  let j = 0;
  while (i < x.terms.length && j < y.terms.length) {
    const a = x.terms[i]!;
    const b = y.terms[j]!;
    if (a === b) {
      shared++;
      i++;
      j++;
    } else if (a < b) i++;
    else j++;
  }
  return shared;
}
