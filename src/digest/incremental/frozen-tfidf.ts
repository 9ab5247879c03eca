import { tokenize } from '../../retrieval/tokenize.ts';
import { compareStrings } from '../../store/store-rules.ts';

/** A memory's sparse vector by term string: terms ascending by code unit, weights L2-normalised. */
export interface SparseDoc {
  memoryId: string;
  terms: readonly string[];
  weights: readonly number[];
}

/** Distinct tokens of a text (what `frozenVector` needs document frequencies for). */
export function distinctTerms(text: string): string[] {
  return [...new Set(tokenize(text))];
}

/**
 * The TF-IDF vector of a text under a FROZEN snapshot: the same weighting as TfidfSpace (sublinear tf times
 * ln((1 + N) / (1 + df)) + 1, L2-normalised, stored as float32) but with N and df taken from the snapshot, so
 * the vectors of stored memories stay valid between compactions. A term the snapshot never saw counts as if
 * df = 1 at snapshot time: as rare as a term can be, which is what a new word is until the next compaction.
 */
export function frozenVector(
  memoryId: string,
  text: string,
  documents: number,
  df: ReadonlyMap<string, number>,
): SparseDoc {
  const counts = new Map<string, number>();
  for (const token of tokenize(text)) counts.set(token, (counts.get(token) ?? 0) + 1);
  const terms = [...counts.keys()].sort(compareStrings);
  const raw = terms.map((term) => {
    const idf = Math.log((1 + documents) / (1 + (df.get(term) ?? 1))) + 1;
    return (1 + Math.log(counts.get(term)!)) * idf;
  });
  let norm = 0;
  for (const weight of raw) norm += weight * weight;
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  return { memoryId, terms, weights: raw.map((weight) => Math.fround(weight * scale)) };
}

/** Same terms and weights (an update that leaves the semantic text alone changes nothing). */
export function sameVector(x: SparseDoc, y: SparseDoc): boolean {
  return (
    x.terms.length === y.terms.length &&
    x.terms.every((term, at) => y.terms[at] === term && y.weights[at] === x.weights[at])
  );
}
