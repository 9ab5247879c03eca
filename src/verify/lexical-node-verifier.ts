import { tokenize } from '../retrieval/tokenize.ts';
import { recordFullText } from './candidate-snippet.ts';
import type { NodeVerifier, NodeVerifierInput, NodeVerifierResult } from './node-verifier-spec.ts';

/**
 * Offline node verifier `lexical-support` (no model): coverage = the share of the question's terms that the
 * memory's full text (text, captions, OCR, speaker, place) contains, each term weighted by its rarity IN THE
 * POOL (ln(1 + M / df)), so a term every candidate shares says little; v_i = 5 x coverage / best coverage in
 * the pool (listwise, like the model verifier). One decimal. It measures lexical
 * support only; it cannot read negation or time, which is why it is named for what it is.
 */
export function createLexicalNodeVerifier(): NodeVerifier {
  return {
    specificationVersion: 'v1',
    name: 'lexical-support',
    kind: 'offline',
    async verify(input: NodeVerifierInput): Promise<NodeVerifierResult> {
      const question = [input.question.prompt, ...(input.question.choices ?? []).map((c) => c.text)].join(
        '\n',
      );
      return {
        ok: true,
        scores: lexicalSupportScores(
          question,
          input.candidates.map((c) => ({ id: c.memoryId, text: recordFullText(c.record) })),
        ),
      };
    },
  };
}

/** The scoring rule on plain data (exported for tests and for the edge verifier's relevance term). */
export function lexicalSupportScores(
  question: string,
  documents: readonly { id: string; text: string }[],
): Map<string, number> {
  const terms = [...new Set(tokenize(question))];
  const sets = documents.map((d) => new Set(tokenize(d.text)));
  const weights = termWeights(terms, sets);
  const total = weights.reduce((sum, w) => sum + w, 0);
  const covered = sets.map((tokens) => {
    let sum = 0;
    for (const [t, term] of terms.entries()) if (tokens.has(term)) sum += weights[t]!;
    return total > 0 ? sum / total : 0;
  });
  // Relative to the best-covered candidate: the verifier ranks within the list (listwise), like a model would.
  const best = Math.max(0, ...covered);
  const scores = new Map<string, number>();
  for (const [index, document] of documents.entries()) {
    scores.set(document.id, best > 0 ? Math.round((50 * covered[index]!) / best) / 10 : 0);
  }
  return scores;
}

/** Rarity weight of each term across the given token sets: ln(1 + N / df), df counted with add-one. */
export function termWeights(terms: readonly string[], sets: readonly Set<string>[]): number[] {
  return terms.map((term) => {
    let df = 0;
    for (const set of sets) if (set.has(term)) df++;
    return Math.log(1 + (sets.length + 1) / (df + 1));
  });
}
