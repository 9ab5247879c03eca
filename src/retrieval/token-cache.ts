import { tokenize } from './tokenize.ts';

/** Bound of the cache: total characters of the cached texts (tokens take about as much again). */
const MAX_CACHED_CHARS = 8_000_000;

const cache = new Map<string, readonly string[]>();
let cachedChars = 0;

/**
 * `tokenize` with a process-wide LRU cache keyed by the exact text, for the query path: the offline
 * verifiers read the same pool memories question after question, and re-tokenising ~48 documents per
 * question was a fixed cost of every retrieve. Bounded by MAX_CACHED_CHARS; the result is shared and
 * must not be mutated. Keyed by content, so an edited memory simply misses.
 */
export function tokenizeCached(text: string): readonly string[] {
  const hit = cache.get(text);
  if (hit) {
    // Move to the back (most recently used).
    cache.delete(text);
    cache.set(text, hit);
    return hit;
  }
  const tokens = tokenize(text);
  if (text.length > MAX_CACHED_CHARS / 100) return tokens;
  cache.set(text, tokens);
  cachedChars += text.length;
  while (cachedChars > MAX_CACHED_CHARS) {
    const oldest = cache.keys().next().value as string;
    cache.delete(oldest);
    cachedChars -= oldest.length;
  }
  return tokens;
}
