import { tokenize } from './tokenize.ts';

/** Bound of the cache: total characters of the cached texts (tokens take about as much again). */
const MAX_CACHED_CHARS = 8_000_000;

interface CachedTokens {
  tokens: readonly string[];
  used: boolean;
  /** The text's TermVector, made on first request (of the dictionary's epoch `epoch`). */
  vector?: TermVector;
  epoch?: number;
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
 * A text's distinct terms as ids of the process-wide term dictionary (ascending), with their counts, and its
 * length in tokens. The offline verifiers read every pool text against each question's terms: counting a
 * text's tokens with string lookups again per question (node verifier) and building a Set of its tokens per
 * question (edge verifier) cost more than the questions' few terms need. A vector is made once per text (kept
 * with its tokens in the token cache, so it goes when they go) and compared by integer ids. Ids are valid
 * within one batch (`startTermBatch`): callers resolve all the ids one computation compares after starting
 * one, and never keep ids across computations.
 */
export interface TermVector {
  readonly ids: readonly number[];
  readonly counts: readonly number[];
  readonly length: number;
}

/** Term -> id of the current epoch; emptied (a new epoch) by startTermBatch once it holds MAX_TERMS. */
const dictionary = new Map<string, number>();
let epoch = 0;
/** Bound of the dictionary (~60 bytes a term): a vocabulary past it starts afresh, vectors made anew. */
const MAX_TERMS = 1 << 18;

/** Starts a computation comparing term ids: the dictionary is only reset here, never within one. */
export function startTermBatch(): void {
  if (dictionary.size < MAX_TERMS) return;
  dictionary.clear();
  epoch++;
}

/** The id of `term` in the current batch (added to the dictionary when new). */
export function termId(term: string): number {
  let id = dictionary.get(term);
  if (id === undefined) {
    id = dictionary.size;
    dictionary.set(term, id);
  }
  return id;
}

/** tokenizeCached's tokens of `text` as a TermVector of the current batch, made once per text and epoch. */
export function termVectorCached(text: string): TermVector {
  const entry = cachedEntry(text);
  if (entry.vector === undefined || entry.epoch !== epoch) {
    entry.vector = termVector(entry.tokens);
    entry.epoch = epoch;
  }
  return entry.vector;
}

function termVector(tokens: readonly string[]): TermVector {
  const all = tokens.map(termId).sort((x, y) => x - y);
  const ids: number[] = [];
  const counts: number[] = [];
  for (const id of all) {
    if (ids.length > 0 && ids[ids.length - 1] === id) counts[counts.length - 1]!++;
    else {
      ids.push(id);
      counts.push(1);
    }
  }
  return { ids, counts, length: tokens.length };
}

/** The count of term `id` in `vector` (0 when absent): a binary search over its ascending ids. */
export function termCount(vector: TermVector, id: number): number {
  const ids = vector.ids;
  let lo = 0;
  let hi = ids.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const at = ids[mid]!;
    if (at === id) return vector.counts[mid]!;
    if (at < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return 0;
}

/** Distinct terms two vectors share (both ascending: one merge). */
export function sharedTerms(x: TermVector, y: TermVector): number {
  let shared = 0;
  let i = 0;
  let j = 0;
  while (i < x.ids.length && j < y.ids.length) {
    const a = x.ids[i]!;
    const b = y.ids[j]!;
    if (a === b) {
      shared++;
      i++;
      j++;
    } else if (a < b) i++;
    else j++;
  }
  return shared;
}
