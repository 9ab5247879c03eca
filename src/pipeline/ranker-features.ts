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
  /** Best retrieval score s and best verifier score v / 5 of the pool members it is related to (round partner, adjacent turns). */
  'neighbour_retrieval',
  'neighbour_verifier',
  /** 1 / (1 + turns between it and its session's best-supported pool member): a topic runs over nearby turns. */
  'session_proximity',
  /** How many pool members share its session (a session the retrieval keeps hitting). */
  'session_hits',
  /** The question asks for the latest / earliest (last, recent, first, originally...) and the memory is it. */
  'temporal_order',
  /** Share of the question's proper nouns (capitalised inside a sentence) that the memory states. */
  'entity_overlap',
  /**
   * The user's own message (role user) rather than the assistant's reply; 0 for named participants. One
   * feature, not two: with rounds every member is one or the other, and a shift shared by a whole pool says
   * nothing to a listwise model.
   */
  'role_user',
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
  'neighbour_retrieval',
  'session_hits',
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
  const queryTokens = new Set(tokenizeCached(queryText));
  const queryNumbers = [...queryTokens].filter((t) => /^\d+$/.test(t));
  const mediaAsked = [...queryTokens].some((t) => MEDIA_WORDS.has(t));
  const documents = input.candidates.map((c) => ({ id: c.memoryId, text: verifierDocumentText(c.record) }));
  const alone = contextSupportParts(queryText, documents, []);
  const inContext = contextSupportParts(queryText, documents, input.relations);
  const neighbours = poolNeighbours(input.relations);
  const retrievalOf = new Map(input.candidates.map((c) => [c.memoryId, c.retrievalScore]));
  const verifierOf = (id: string) => (input.verifierScores.get(id) ?? 0) / 5;
  const sessions = sessionStats(input.candidates, verifierOf);
  const temporal = temporalOrder(input.question, input.candidates);
  const entities = properNouns(input.question);
  const numberSet = new Set(queryNumbers);
  const entitySet = new Set(entities);
  const raw = input.candidates.map((candidate, index) => {
    const id = candidate.memoryId;
    const record = candidate.record;
    const views = input.viewScores.get(id) ?? {};
    const rank = input.seedRank.get(id);
    // Only questions with numbers or proper nouns read the memory's tokens.
    const found =
      queryNumbers.length === 0 && entities.length === 0
        ? { numbers: 0, entities: 0 }
        : termsFound(tokenizeCached(documents[index]!.text), numberSet, entitySet);
    const speaker = record.speaker === undefined ? [] : tokenizeCached(record.speaker);
    const dayTokens = record.timestamp === undefined ? [] : dayTerms(record.timestamp.slice(0, 10));
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
      number_overlap: queryNumbers.length === 0 ? 0 : found.numbers / queryNumbers.length,
      date_named: dayTokens.some((t) => queryTokens.has(t) && !/^\d{1,2}$/.test(t)) ? 1 : 0,
      profile: record.kind === 'profile' ? 1 : 0,
      neighbour_retrieval: maxOver(neighbours.get(id), (n) => retrievalOf.get(n) ?? 0),
      neighbour_verifier: maxOver(neighbours.get(id), (n) => (retrievalOf.has(n) ? verifierOf(n) : 0)),
      session_proximity: sessions.proximity(candidate),
      session_hits: sessions.hits(candidate),
      temporal_order: temporal.get(id) ?? 0,
      entity_overlap: entities.length === 0 ? 0 : found.entities / entities.length,
      role_user: record.role === 'user' ? 1 : 0,
    };
    return featureRow(values);
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
 * A candidate's features as a row in RANKER_FEATURES order: one named load each from one object shape (a
 * load by a varying name, as `RANKER_FEATURES.map((name) => values[name])` did, is a slow generic lookup, 25
 * per pool member). test/pipeline/offline-ranker.test.ts checks the order against RANKER_FEATURES.
 */
export function featureRow(values: Readonly<Record<RankerFeature, number>>): number[] {
  return [
    values.retrieval,
    values.seed_rank,
    values.view_text,
    values.view_caption,
    values.view_metadata,
    values.view_ocr,
    values.verifier,
    values.own_support,
    values.unit_support,
    values.context_support,
    values.best_adjacent_support,
    values.has_media,
    values.media_asked,
    values.speaker_named,
    values.number_overlap,
    values.date_named,
    values.profile,
    values.neighbour_retrieval,
    values.neighbour_verifier,
    values.session_proximity,
    values.session_hits,
    values.temporal_order,
    values.entity_overlap,
    values.role_user,
  ];
}

/** Terms of a day's date forms, by day: a pool has a few distinct days, each tokenised once per process. */
const dayTermCache = new Map<string, readonly string[]>();

function dayTerms(day: string): readonly string[] {
  let terms = dayTermCache.get(day);
  if (terms === undefined) {
    terms = dateForms(day).flatMap((form) => tokenize(form));
    // Bounded: a day is ~40 bytes of terms; an archive spanning decades stays under the cap.
    if (dayTermCache.size >= 20_000) dayTermCache.clear();
    dayTermCache.set(day, terms);
  }
  return terms;
}

/** Pool members joined to each member by any schema relation (round partner, adjacent turn, thread). */
function poolNeighbours(relations: readonly PoolRelation[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const link = (a: string, b: string) => {
    const list = out.get(a);
    if (list) list.push(b);
    else out.set(a, [b]);
  };
  for (const r of relations) {
    link(r.a, r.b);
    link(r.b, r.a);
  }
  return out;
}

/**
 * How many of `numbers` and of `entities` (each without repeats) occur among `tokens`: one pass over the
 * memory's tokens, no set of them built per memory.
 */
function termsFound(
  tokens: readonly string[],
  numbers: ReadonlySet<string>,
  entities: ReadonlySet<string>,
): { numbers: number; entities: number } {
  const seen = new Set<string>();
  let numbersFound = 0;
  let entitiesFound = 0;
  for (const token of tokens) {
    if ((!numbers.has(token) && !entities.has(token)) || seen.has(token)) continue;
    seen.add(token);
    if (numbers.has(token)) numbersFound++;
    if (entities.has(token)) entitiesFound++;
  }
  return { numbers: numbersFound, entities: entitiesFound };
}

function maxOver(ids: readonly string[] | undefined, value: (id: string) => number): number {
  let best = 0;
  for (const id of ids ?? []) best = Math.max(best, value(id));
  return best;
}

/**
 * Session facts of each pool member: the distance (in ingestion order) to the best-supported member of its
 * session (highest v, then s, then earliest), and how many pool members its session holds. A memory without
 * a session counts as one session of its own (nothing to be near).
 */
function sessionStats(candidates: readonly VerifierCandidate[], verifierOf: (id: string) => number) {
  const best = new Map<string, VerifierCandidate>();
  const count = new Map<string, number>();
  for (const c of candidates) {
    const session = c.record.sessionId;
    if (session === undefined) continue;
    count.set(session, (count.get(session) ?? 0) + 1);
    const current = best.get(session);
    const better =
      current === undefined ||
      verifierOf(c.memoryId) > verifierOf(current.memoryId) ||
      (verifierOf(c.memoryId) === verifierOf(current.memoryId) && c.retrievalScore > current.retrievalScore);
    if (better) best.set(session, c);
  }
  return {
    proximity(c: VerifierCandidate): number {
      const top = c.record.sessionId === undefined ? undefined : best.get(c.record.sessionId);
      return top === undefined ? 0 : 1 / (1 + Math.abs(c.record.sequence - top.record.sequence));
    },
    hits(c: VerifierCandidate): number {
      return c.record.sessionId === undefined ? 1 : (count.get(c.record.sessionId) ?? 1);
    },
  };
}

/** Words by which a question asks for the most recent or the earliest of several memories. */
const LATEST_WORDS: ReadonlySet<string> = new Set([
  'latest',
  'last',
  'recent',
  'recently',
  'lately',
  'newest',
  'current',
  'currently',
  'now',
  'today',
]);
const EARLIEST_WORDS: ReadonlySet<string> = new Set([
  'first',
  'earliest',
  'initially',
  'originally',
  'oldest',
  'initial',
  'original',
  'began',
]);

/**
 * When the question asks for the latest (earliest) of something, each dated pool member's rank in time over
 * the pool's dated members: 1 for the newest (oldest), 0 for the other end. Undated memories and questions
 * without such a word get 0. Ties on the date (a day with several turns) share a value.
 */
function temporalOrder(
  question: VerifierQuestion,
  candidates: readonly VerifierCandidate[],
): Map<string, number> {
  const words = question.prompt.toLowerCase().split(/[^a-z]+/);
  const latest = words.some((w) => LATEST_WORDS.has(w));
  const earliest = words.some((w) => EARLIEST_WORDS.has(w));
  const out = new Map<string, number>();
  if (latest === earliest) return out; // neither, or both (no direction)
  const dated = candidates.flatMap((c) => {
    const t = c.record.timestamp === undefined ? Number.NaN : Date.parse(c.record.timestamp);
    return Number.isFinite(t) ? [{ id: c.memoryId, t }] : [];
  });
  if (dated.length === 0) return out;
  // A loop, not Math.min(...): a library caller may ask for a pool far larger than M = 48.
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const { t } of dated) {
    min = Math.min(min, t);
    max = Math.max(max, t);
  }
  for (const { id, t } of dated) {
    const recency = max === min ? 1 : (t - min) / (max - min);
    out.set(id, latest ? recency : 1 - recency);
  }
  return out;
}

/**
 * Proper nouns of the question (prompt and options): capitalised words that do not open a sentence, as terms
 * of the shared tokenizer ("Did Caroline go to Paris?" -> caroline, paris). "I" and sentence openers are
 * skipped because their capital says nothing.
 */
export function properNouns(question: VerifierQuestion): string[] {
  const text = [question.prompt, ...(question.choices ?? []).map((c) => c.text)].join('\n');
  const out = new Set<string>();
  for (const sentence of text.split(/[.!?\n:;]+/)) {
    const words = sentence.trim().split(/\s+/).slice(1);
    for (const word of words) {
      if (!/^[A-Z][\p{L}'’-]*[\p{Ll}]/u.test(word)) continue;
      for (const term of tokenize(word)) out.add(term);
    }
  }
  return [...out];
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
