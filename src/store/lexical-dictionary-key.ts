import { createHash } from 'node:crypto';

/**
 * What lex_terms stores for a term: the first 16 bytes of sha256(term), base64url. Deterministic (every
 * process maps a term to the same row) and not the word itself (forget means forget: the dictionary keeps
 * entries of deleted memories). 128 bits make a collision of two terms negligible.
 */
export function dictionaryKey(term: string): string {
  return createHash('sha256').update(term).digest().subarray(0, 16).toString('base64url');
}
