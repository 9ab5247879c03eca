import { tokenize } from '../retrieval/tokenize.ts';
import type { SchemaRelationType } from '../types/relation.ts';
import { recordFullText } from './candidate-snippet.ts';
import { termWeights } from './lexical-node-verifier.ts';
import type {
  NodeVerifier,
  NodeVerifierInput,
  NodeVerifierResult,
  PoolRelation,
} from './node-verifier-spec.ts';

/**
 * Relations that make two memories one unit of evidence: the two halves of a dialogue round, one email thread.
 * A unit is read as a whole (a reply is judged with the message it answers).
 */
const UNIT_RELATIONS: ReadonlySet<SchemaRelationType> = new Set(['same_round', 'same_record']);
/** Relations that place a unit in its immediate context: the neighbouring turns of a session, a photo burst. */
const CONTEXT_RELATIONS: ReadonlySet<SchemaRelationType> = new Set(['consecutive_turn', 'event_bridge']);
/**
 * Weight of the best neighbouring unit's support. Conversations keep a topic over several turns, so a turn next
 * to a strongly matching one is more likely relevant than an isolated lexical match. Set once, on the Mem-Gallery
 * and M3Exam dev folds (like the prize calibration); see docs/offline-verifiers.md.
 */
export const CONTEXT_WEIGHT = Number(process.env.GMX_CW ?? 0.5);

/**
 * Offline node verifier `lexical-context-support` (no model). Lexical support of the question (prompt,
 * options, and the question images' captions) by a memory read in its context:
 *   unit(i)    = rarity-weighted share of question terms found in the memory together with its unit partners
 *                (same_round / same_record members present in the pool);
 *   context(i) = the best unit(j) over units j adjacent to i's unit (consecutive_turn / event_bridge);
 *   v_i        = 5 x (unit(i) + CONTEXT_WEIGHT x context(i)) / the best such value in the pool (listwise).
 * Rarity weights are ln(1 + M / df) over the pool, so a term every candidate shares says little. It measures
 * lexical support only: it cannot read negation or time, which is why it is named for what it is.
 */
export function createContextLexicalNodeVerifier(): NodeVerifier {
  return {
    specificationVersion: 'v1',
    name: 'lexical-context-support',
    kind: 'offline',
    async verify(input: NodeVerifierInput): Promise<NodeVerifierResult> {
      const question = [
        input.question.prompt,
        ...(input.question.choices ?? []).map((c) => c.text),
        ...input.question.imageCaptions,
      ].join('\n');
      return {
        ok: true,
        scores: contextSupportScores(
          question,
          input.candidates.map((c) => ({ id: c.memoryId, text: recordFullText(c.record) })),
          input.relations ?? [],
        ),
      };
    },
  };
}

/** The scoring rule on plain data (exported for tests). */
export function contextSupportScores(
  question: string,
  documents: readonly { id: string; text: string }[],
  relations: readonly PoolRelation[],
): Map<string, number> {
  const terms = [...new Set(tokenize(question))];
  const tokens = new Map(documents.map((d) => [d.id, new Set(tokenize(d.text))]));
  const weights = termWeights(terms, [...tokens.values()]);
  const total = weights.reduce((sum, w) => sum + w, 0);
  const partners = adjacency(relations, UNIT_RELATIONS, tokens);
  const neighbours = adjacency(relations, CONTEXT_RELATIONS, tokens);

  const unitMembers = (id: string): string[] => [id, ...(partners.get(id) ?? [])];
  const unitSupport = new Map<string, number>();
  for (const { id } of documents) {
    let covered = 0;
    for (const [t, term] of terms.entries()) {
      if (unitMembers(id).some((member) => tokens.get(member)?.has(term))) covered += weights[t]!;
    }
    unitSupport.set(id, total > 0 ? covered / total : 0);
  }
  const raw = documents.map(({ id }) => {
    let context = 0;
    for (const member of unitMembers(id)) {
      for (const neighbour of neighbours.get(member) ?? []) {
        if (unitMembers(id).includes(neighbour)) continue;
        context = Math.max(context, unitSupport.get(neighbour) ?? 0);
      }
    }
    return (unitSupport.get(id) ?? 0) + CONTEXT_WEIGHT * context;
  });
  const best = Math.max(0, ...raw);
  const scores = new Map<string, number>();
  documents.forEach(({ id }, index) => {
    scores.set(id, best > 0 ? Math.round((50 * raw[index]!) / best) / 10 : 0);
  });
  return scores;
}

function adjacency(
  relations: readonly PoolRelation[],
  types: ReadonlySet<SchemaRelationType>,
  present: ReadonlyMap<string, unknown>,
): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const relation of relations) {
    if (!relation.types.some((t) => types.has(t))) continue;
    if (!present.has(relation.a) || !present.has(relation.b)) continue;
    map.set(relation.a, [...(map.get(relation.a) ?? []), relation.b]);
    map.set(relation.b, [...(map.get(relation.b) ?? []), relation.a]);
  }
  return map;
}
