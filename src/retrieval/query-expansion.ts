import type { ViewHit, ViewKind } from '../types/view.ts';
import { STOPWORDS, tokenize } from './tokenize.ts';
import type { SynonymLexicon } from './wordnet-synonyms.ts';

/**
 * Query expansion above the store port: extra terms searched as a second lexical query whose raw BM25 is
 * added, times `weight`, to the first query's raw BM25 of the same view. BM25 is a sum over query terms and
 * both queries use the same per-(context, kind) statistics, so the result is the BM25 of one weighted query
 * (original terms weight 1, expansion terms `weight`), on every backend, without a port change. The one
 * approximation: each query returns its own top `limit` per kind, so a view outside the expansion's top
 * `limit` gets no expansion score. A question without expansions makes exactly the old single call.
 */
export interface QueryExpansion {
  source: 'temporal' | 'synonym' | 'feedback' | 'name';
  /** Terms in index form (tokenizer output), deduplicated, none of them in the question already. */
  terms: string[];
  weight: number;
  /** Search only these view kinds (all when absent). */
  kinds?: readonly ViewKind[];
}

/** Only this much of a question is read for expansions (a 100k-character question costs no more). */
export const EXPANSION_INPUT_CHARS = 4_000;

/**
 * Bounds and weight of WordNet synonyms. Weight 0.3 means a synonym match counts 0.3 of the word the user
 * wrote (fitted on fold 0, docs/offline-verifiers.md "Pool recall, third round").
 */
export const SYNONYM_EXPANSION = { perWord: 2, words: 12, total: 16, weight: 0.3 } as const;

/**
 * Synonyms of the question's own content words (lowercase words of 3+ letters, not stopwords; capitalised
 * words are names and are left alone), bounded per word, in words and in total. Undefined when none.
 */
export function synonymExpansion(
  text: string,
  lexicon: SynonymLexicon,
  limits: { perWord: number; words: number; total: number; weight: number } = SYNONYM_EXPANSION,
): QueryExpansion | undefined {
  const input = text.slice(0, EXPANSION_INPUT_CHARS);
  const known = new Set(tokenize(input));
  const seenWords = new Set<string>();
  const terms: string[] = [];
  for (const match of input.matchAll(/\b[A-Za-z][a-z]{2,}\b/g)) {
    if (seenWords.size >= limits.words || terms.length >= limits.total) break;
    const word = match[0];
    if (word[0] !== word[0]!.toLowerCase() || STOPWORDS.has(word) || seenWords.has(word)) continue;
    seenWords.add(word);
    let added = 0;
    for (const synonym of lexicon.synonyms(word, limits.perWord * 3)) {
      if (added >= limits.perWord || terms.length >= limits.total) break;
      const [term, ...rest] = tokenize(synonym);
      if (term === undefined || rest.length > 0 || known.has(term)) continue;
      known.add(term);
      terms.push(term);
      added += 1;
    }
  }
  return terms.length === 0 ? undefined : { source: 'synonym', terms, weight: limits.weight };
}

/** Raw BM25 per view, summed over queries: the weighted query's score (see QueryExpansion). */
export class WeightedHits {
  private readonly views = new Map<string, { hit: ViewHit; raw: number }>();

  add(hits: readonly ViewHit[], weight: number): void {
    for (const hit of hits) {
      if (!(hit.rawScore > 0)) continue;
      const key = `${hit.memoryId}\u0000${hit.kind}\u0000${hit.key}`;
      const current = this.views.get(key);
      if (current) current.raw += weight * hit.rawScore;
      else this.views.set(key, { hit, raw: weight * hit.rawScore });
    }
  }

  /** Each memory's best view score on a scale (`score(kind, summed raw)`), without copying the hits. */
  bestPerMemory(score: (kind: ViewHit['kind'], raw: number) => number): Map<string, number> {
    const best = new Map<string, number>();
    for (const { hit, raw } of this.views.values()) {
      const value = score(hit.kind, raw);
      if (value > (best.get(hit.memoryId) ?? 0)) best.set(hit.memoryId, value);
    }
    return best;
  }

  /** Every view reached, with its summed raw score. */
  hits(): ViewHit[] {
    return [...this.views.values()].map(({ hit, raw }) => ({ ...hit, rawScore: raw }));
  }
}
