import { dateForms } from '../digest/build-views.ts';
import { tokenizeCached } from '../retrieval/token-cache.ts';
import { tokenize } from '../retrieval/tokenize.ts';
import type { ViewKind } from '../types/view.ts';
import {
  contextSupportParts,
  MODALITY_WORDS,
  UNIT_RELATIONS,
  verifierDocumentText,
  verifierQueryText,
} from '../verify/context-lexical-node-verifier.ts';
import type { PoolRelation } from '../verify/node-verifier-spec.ts';
import type { VerifierCandidate, VerifierQuestion } from '../verify/verifier-input.ts';

/**
 * Features of the offline ranker, in artifact order. Every continuous feature is divided by its maximum over
 * the question's pool (0 when the pool maximum is 0), so it says "how this candidate compares with the rest
 * of this pool", which means the same on an archive with rounds, without rounds, a mail thread or a photo
 * roll; the binary ones are facts about the pair (question, memory). None needs a model.
 */
export const RANKER_FEATURES = [
  /** s_i, the multi-view retrieval score (max over views). */
  'retrieval',
  /** 1 - rank / L for a seed, 0 for a memory that entered by expansion. */
  'seed_rank',
  /** Best BM25 score (common scale) of each lexical view kind that reached it. */
  'view_text',
  'view_caption',
  'view_metadata',
  'view_ocr',
  /** The offline node verifier's score v_i / 5. */
  'verifier',
  /** Lexical support of the memory read alone. */
  'own_support',
  /** Support of its unit (with same_round / same_record partners in the pool). */
  'unit_support',
  /** Mean and best support of the adjacent units (consecutive_turn / event_bridge). */
  'context_support',
  'best_adjacent_support',
  /** It carries media, and the question asks about a medium (photo, video, recording, file). */
  'has_media',
  'media_asked',
  /** The question names the memory's speaker. */
  'speaker_named',
  /** Share of the question's numbers that the memory states. */
  'number_overlap',
  /** The question names the memory's day, month, year or weekday. */
  'date_named',
  /** A profile / persona record. */
  'profile',
] as const;

export type RankerFeature = (typeof RANKER_FEATURES)[number];

/** Features normalised per pool (maximum) rather than binary. */
const RELATIVE: ReadonlySet<RankerFeature> = new Set([
  'retrieval',
  'view_text',
  'view_caption',
  'view_metadata',
  'view_ocr',
  'own_support',
  'unit_support',
  'context_support',
  'best_adjacent_support',
]);

export interface RankerFeatureInput {
  question: VerifierQuestion;
  candidates: readonly VerifierCandidate[];
  /** Seed rank of each candidate that was a seed. */
  seedRank: ReadonlyMap<string, number>;
  seedCount: number;
  viewScores: ReadonlyMap<string, Partial<Record<ViewKind | 'dense', number>>>;
  verifierScores: ReadonlyMap<string, number>;
  /** Schema relations among the pool members. */
  relations: readonly PoolRelation[];
}

const MEDIA_WORDS: ReadonlySet<string> = new Set(
  Object.values(MODALITY_WORDS).flatMap((words) => tokenize(words)),
);

/** One feature vector per candidate (pool order), in RANKER_FEATURES order. */
export function rankerFeatures(input: RankerFeatureInput): number[][] {
  const queryText = verifierQueryText(input.question);
  const queryTokens = new Set(tokenize(queryText));
  const queryNumbers = [...queryTokens].filter((t) => /^\d+$/.test(t));
  const mediaAsked = [...queryTokens].some((t) => MEDIA_WORDS.has(t));
  const documents = input.candidates.map((c) => ({ id: c.memoryId, text: verifierDocumentText(c.record) }));
  const alone = contextSupportParts(queryText, documents, []);
  const inContext = contextSupportParts(queryText, documents, input.relations);
  const raw = input.candidates.map((candidate, index) => {
    const id = candidate.memoryId;
    const record = candidate.record;
    const views = input.viewScores.get(id) ?? {};
    const rank = input.seedRank.get(id);
    const tokens = new Set(tokenizeCached(documents[index]!.text));
    const speaker = record.speaker === undefined ? [] : tokenize(record.speaker);
    const day = record.timestamp === undefined ? [] : dateForms(record.timestamp.slice(0, 10));
    const dayTokens = day.flatMap((form) => tokenize(form));
    const parts = inContext.get(id)!;
    const values: Record<RankerFeature, number> = {
      retrieval: candidate.retrievalScore,
      seed_rank: rank === undefined ? 0 : 1 - rank / Math.max(1, input.seedCount),
      view_text: views.text ?? 0,
      view_caption: views.caption ?? 0,
      view_metadata: views.metadata ?? 0,
      view_ocr: views.ocr ?? 0,
      verifier: (input.verifierScores.get(id) ?? 0) / 5,
      own_support: alone.get(id)!.unit,
      unit_support: parts.unit,
      context_support: parts.context,
      best_adjacent_support: parts.bestAdjacent,
      has_media: record.assets.length > 0 ? 1 : 0,
      media_asked: mediaAsked && record.assets.length > 0 ? 1 : 0,
      speaker_named: speaker.length > 0 && speaker.some((t) => queryTokens.has(t)) ? 1 : 0,
      number_overlap:
        queryNumbers.length === 0
          ? 0
          : queryNumbers.filter((t) => tokens.has(t)).length / queryNumbers.length,
      date_named: dayTokens.some((t) => queryTokens.has(t) && !/^\d{1,2}$/.test(t)) ? 1 : 0,
      profile: record.kind === 'profile' ? 1 : 0,
    };
    return RANKER_FEATURES.map((name) => values[name]);
  });
  // Per-question normalisation of the relative features: divide by the pool's maximum.
  RANKER_FEATURES.forEach((name, j) => {
    if (!RELATIVE.has(name)) return;
    let max = 0;
    for (const row of raw) max = Math.max(max, row[j]!);
    for (const row of raw) row[j] = max > 0 ? row[j]! / max : 0;
  });
  return raw;
}

/**
 * The pool's shape for the prize calibration: does a round or record relation (same_round / same_record) join
 * members? supersedes, though read as a unit, does not change the shape: the shipped calibrations were fitted
 * on the data's round/record structure, and a correction inside a dialogue does not make it mail-like.
 */
export function poolShape(relations: readonly PoolRelation[]): 'units' | 'turns' {
  return relations.some((r) => r.types.some((t) => UNIT_RELATIONS.has(t) && t !== 'supersedes'))
    ? 'units'
    : 'turns';
}
