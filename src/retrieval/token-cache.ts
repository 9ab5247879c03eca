import { tokenize } from './tokenize.ts';

/** Bound of the cache: total characters of the cached texts (tokens take about as much again). */
const MAX_CACHED_CHARS = 8_000_000;

const cache = new Map<string, { tokens: readonly string[]; used: boolean }>();
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
  const hit = cache.get(text);
  if (hit) {
    hit.used = true;
    return hit.tokens;
  }
  const tokens = tokenize(text);
  if (text.length > MAX_CACHED_CHARS / 100) return tokens;
  cache.set(text, { tokens, used: false });
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
  return tokens;
}

/** Share of the bound an eviction leaves: batches amortise the walk. */
const EVICT_TO = 0.875;
