import type { EdgeRole } from '../core/candidate-graph.ts';
import {
  sharedTerms,
  startTermBatch,
  type TermVector,
  termCount,
  termId,
  termVectorCached,
  tokenizeCached,
} from '../retrieval/token-cache.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import type { SchemaRelationType } from '../types/relation.ts';
import { recordFullText } from './candidate-snippet.ts';
import { unitSupport, verifierDocumentText, verifierQueryText } from './context-lexical-node-verifier.ts';
import { normalizeJudgement } from './ecv-protocol.ts';
import type {
  EdgeJudgement,
  EdgeVerifier,
  EdgeVerifierInput,
  EdgeVerifierResult,
} from './edge-verifier-spec.ts';
import type { PoolRelation } from './node-verifier-spec.ts';
import { isReplyTurn } from './reply-turn.ts';

/** Token-set overlap (Jaccard) at or above which a candidate only repeats its anchor (a true near-duplicate). */
export const NEAR_DUPLICATE_JACCARD = 0.8;
/** Token overlap above which two memories of DIFFERENT units with differing dates/amounts talk about one thing. */
const CONFLICT_TOPIC_JACCARD = 0.2;
/**
 * Exponent applied to a cross-unit candidate's relative relevance. An edge buys its candidate into the
 * proposal (up to ~kappa of bonus), so edges must be precise: squaring keeps a strongly matching neighbour
 * unit near full support while a half-matching one drops to a quarter (and is then cut by the refinement).
 */
export const CROSS_UNIT_EXPONENT = 2;
/**
 * Incremental support of the reply to a relevant message when the reply itself shares nothing with the
 * question (src/verify/reply-turn.ts): the smallest positive score (the ECV's resolution is 0.1), so the edge
 * is KEPT and its reliability is left to the data (the ranker's fitted edge reliability, which reads "is a
 * reply" apart from s_inc). Without it, the reply edges were rejected although, on the fold-0 turns-shape
 * pools of Mem-Gallery, the reply to a gold message was gold in 78% of them (docs/offline-verifiers.md).
 */
export const REPLY_SUPPORT = 0.1;
/**
 * Relations that put two memories in ONE unit (the two halves of a round, one email thread, an email and the
 * photos it talks about): the candidate completes the anchor's fact, so it inherits the anchor unit's relevance.
 * Across units (adjacent turns of different rounds, nearby photos) a candidate must be relevant on its own.
 */
const SAME_UNIT: ReadonlySet<SchemaRelationType> = new Set([
  'same_round',
  'same_record',
  'record_grounding',
  'supersedes',
]);
/**
 * Relations that make two memories ONE exchange (a message and its reply in one round): they state different
 * things by design, so differing values between them are never a conflict. Separate records of one thread
 * (same_record) can revise each other and are still checked.
 */
const ONE_EXCHANGE: ReadonlySet<SchemaRelationType> = new Set(['same_round']);
/** Words that mark a later memory as revising an earlier one: differing values are then an update, not a conflict. */
const UPDATE_CUES =
  /\b(update[ds]?|revis(?:ed|ion)|correct(?:ed|ion)|chang(?:e|ed)|moved|postponed|rescheduled|extended|delayed|brought forward|instead|now|new (?:date|deadline|time))\b/i;

/**
 * Offline edge verifier `anchor-novelty` (no model). Reads every anchor and candidate as part of its UNIT (the
 * memories joined by same_round / same_record / record_grounding among them) and scores each unit's lexical
 * support of the question (prompt, options, question-image captions) the way the offline node verifier does
 * (BM25-style, src/verify/context-lexical-node-verifier.ts), relative to the best unit: rel(u) in [0, 1].
 * For each candidate and each eligible anchor:
 * - versions of one fact (supersedes: one replaces the other): an update, never redundant nor a conflict ->
 *   clarification with support 5 when the unit supports the question (rel > 0), else irrelevant. Both versions
 *   can then enter the forest (method notes 5: clarification "updates, corrects"); the packet marks which one
 *   is current;
 * - near-duplicate of the anchor (token Jaccard >= 0.8) -> redundant;
 * - not one exchange (anything but same_round): both state dates or numbers, the values differ, the texts
 *   share a topic, and the candidate carries no update cue -> conflict; with an update cue -> clarification
 *   (5: the revision is the evidence);
 * - same unit (the candidate completes the anchor: the reply to a question, the rest of a thread):
 *   incremental support 5 whenever the unit supports the question at all (rel > 0), else irrelevant. The
 *   edge only counts once its anchor is selected, and a unit is one piece of evidence: the anchor's partner
 *   is then exactly as relevant as the anchor, so there is nothing to discount;
 * - different units: incremental support = 5 x rel(candidate's unit)^CROSS_UNIT_EXPONENT (a neighbouring turn
 *   must be relevant by itself; squaring keeps these edges precise);
 * - different units, but the candidate is the anchor's reply (next message of the session by the other
 *   participant) and shares no question word: clarification at REPLY_SUPPORT while the anchor's unit supports
 *   the question (a message and its reply are one exchange, round id or not). Where the paper's linear
 *   w = 0.99 s_inc / 5 applies (no fitted edge reliability) such an edge costs more than it saves and never joins.
 * Role: new_fact when the candidate adds question terms the anchor lacks, else clarification; support that
 * rounds to 0 -> irrelevant. The best anchor is the one with the highest support (ties: earlier anchor).
 * Rules of method notes 5 apply.
 */
export function createAnchorNoveltyEdgeVerifier(): EdgeVerifier {
  return {
    specificationVersion: 'v1',
    name: 'anchor-novelty',
    kind: 'offline',
    async verify(input: EdgeVerifierInput): Promise<EdgeVerifierResult> {
      const query = verifierQueryText(input.question);
      const terms = [...new Set(tokenizeCached(query))];
      // Support reads the verifier document (content, media words, day); the pair checks read the content
      // only: every record's own date would otherwise be a "stated value" (two thread emails of different days
      // would conflict), and shared media words would make two short photo messages near-duplicates.
      const texts = new Map<string, string>();
      const contents = new Map<string, string>();
      const records = new Map<string, MemoryRecord>();
      for (const { memoryId, record } of [...input.anchors, ...input.candidates.map((c) => c.candidate)]) {
        records.set(memoryId, record);
        texts.set(memoryId, verifierDocumentText(record));
        contents.set(memoryId, recordFullText(record));
      }
      const pairs: PoolRelation[] = input.candidates.flatMap(({ candidate, relations }) =>
        relations.map((r) => ({ a: r.anchorId, b: candidate.memoryId, types: r.relationTypes })),
      );
      const support = unitSupport(
        query,
        [...texts].map(([id, text]) => ({ id, text })),
        pairs,
      );
      // One side per memory: an anchor met in several pairs has its values scanned once (valuesOf runs five
      // regular expressions over the text; per pair it was most of this verifier's own time). Made after
      // unitSupport, in a batch of their own: the sides' term vectors and the question's term ids in judgePair
      // must come from one dictionary (unitSupport may start a new one).
      startTermBatch();
      const sides = new Map([...contents].map(([id, text]) => [id, pairSide(text)]));
      // Relative to the best unit of this question, so "relevant" means the same thing for a question whose
      // best match shares one term and one whose best match shares five.
      const bestUnit = Math.max(1e-9, ...support.byUnit);
      const relevance = (id: string): number =>
        (support.byUnit[support.unitOf.get(id) ?? -1] ?? 0) / bestUnit;
      const judgements: EdgeJudgement[] = input.candidates.map(({ candidate, relations }) => {
        let best: { anchorId: string; score: number; role: EdgeRole } | undefined;
        for (const relation of relations) {
          const sameUnit = relation.relationTypes.some((t) => SAME_UNIT.has(t));
          const anchorRecord = records.get(relation.anchorId);
          const verdict = judgePair(
            sides.get(candidate.memoryId)!,
            sides.get(relation.anchorId) ?? pairSide(''),
            terms,
            {
              sameUnit,
              versions: relation.relationTypes.includes('supersedes'),
              oneExchange: relation.relationTypes.some((t) => ONE_EXCHANGE.has(t)),
              relevance: sameUnit ? relevance(relation.anchorId) : relevance(candidate.memoryId),
              ...(!sameUnit &&
              anchorRecord !== undefined &&
              isReplyTurn(anchorRecord, candidate.record, relation.relationTypes)
                ? { replyTo: relevance(relation.anchorId) }
                : {}),
            },
          );
          if (best === undefined || rank(verdict) > rank(best))
            best = { anchorId: relation.anchorId, ...verdict };
        }
        const raw = best
          ? {
              candidateId: candidate.memoryId,
              anchorId: best.anchorId,
              incrementalSupport: best.score,
              role: best.role,
            }
          : {
              candidateId: candidate.memoryId,
              anchorId: null,
              incrementalSupport: 0,
              role: 'irrelevant' as const,
            };
        return normalizeJudgement(raw, new Set(relations.map((r) => r.anchorId)));
      });
      return { ok: true, judgements };
    },
  };
}

export interface PairSide {
  /** The content's distinct terms (termVectorCached: made once per text, compared by term id). */
  terms: TermVector;
  text: string;
  /** valuesOf(text), remembered by the side (judgePair computes it when absent). */
  values?: () => ReadonlySet<string>;
}

/**
 * A memory's side of its pairs: its content's terms (the text's cached vector: no Set of its tokens built per
 * question), and its stated values computed once when first asked.
 */
export function pairSide(text: string): PairSide {
  let values: ReadonlySet<string> | undefined;
  return { terms: termVectorCached(text), text, values: () => (values ??= valuesOf(text)) };
}

/**
 * One candidate-anchor pair on plain data (exported for tests). `link.relevance` is the relative support in
 * [0, 1] of the unit that carries the pair: the anchor's unit for a same-unit pair, the candidate's own unit
 * otherwise.
 */
export function judgePair(
  candidate: PairSide,
  anchor: PairSide,
  terms: readonly string[],
  link: {
    sameUnit: boolean;
    oneExchange: boolean;
    relevance: number;
    versions?: boolean;
    /** Set when the candidate is the reply to the anchor (src/verify/reply-turn.ts): the anchor unit's relevance. */
    replyTo?: number;
  },
): { score: number; role: EdgeRole } {
  if (link.versions) {
    // An older and a newer version differ in one value by design and may share every other word: the pair is
    // an update (clarification), judged before the near-duplicate and conflict checks that would drop it.
    return link.relevance > 0 ? { score: 5, role: 'clarification' } : { score: 0, role: 'irrelevant' };
  }
  const size = candidate.terms.ids.length;
  if (size === 0) return { score: 0, role: 'irrelevant' };
  const shared = sharedTerms(candidate.terms, anchor.terms);
  const jaccard = shared / (size + anchor.terms.ids.length - shared);
  if (jaccard >= NEAR_DUPLICATE_JACCARD) return { score: 0, role: 'redundant' };

  if (!link.oneExchange) {
    // The two halves of one exchange state different things by design (question and answer); any other pair
    // can disagree about a value.
    const candidateValues = candidate.values?.() ?? valuesOf(candidate.text);
    // The anchor's values only matter when the candidate states some.
    const anchorValues =
      candidateValues.size > 0 ? (anchor.values?.() ?? valuesOf(anchor.text)) : candidateValues;
    const valuesDiffer =
      candidateValues.size > 0 &&
      anchorValues.size > 0 &&
      ![...candidateValues].some((v) => anchorValues.has(v));
    if (valuesDiffer && jaccard >= CONFLICT_TOPIC_JACCARD) {
      return UPDATE_CUES.test(candidate.text)
        ? { score: 5, role: 'clarification' }
        : { score: 0, role: 'conflict' };
    }
  }

  const relevance = Math.min(1, Math.max(0, link.relevance));
  const score = link.sameUnit
    ? relevance > 0
      ? 5
      : 0
    : Math.round(5 * relevance ** CROSS_UNIT_EXPONENT * 10) / 10;
  if (score <= 0) {
    // The reply to a relevant message completes its exchange even when it repeats no question word.
    return link.replyTo !== undefined && link.replyTo > 0
      ? { score: REPLY_SUPPORT, role: 'clarification' }
      : { score: 0, role: 'irrelevant' };
  }
  const addsTerm = terms.some((term) => {
    const id = termId(term);
    return termCount(candidate.terms, id) > 0 && termCount(anchor.terms, id) === 0;
  });
  return { score, role: addsTerm ? 'new_fact' : 'clarification' };
}

/** Positive roles beat non-positive ones; then the higher score. */
function rank(verdict: { score: number; role: EdgeRole }): number {
  const positive =
    verdict.role === 'new_fact' || verdict.role === 'clarification' || verdict.role === 'corroboration';
  return (positive ? 10 : 0) + verdict.score;
}

const MONTH = '(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*';
const VALUE_PATTERNS = [
  /\b\d{4}-\d{2}-\d{2}\b/g,
  new RegExp(`\\b\\d{1,2}(?:st|nd|rd|th)?\\s+${MONTH}\\b`, 'gi'),
  new RegExp(`\\b${MONTH}\\s+\\d{1,2}(?:st|nd|rd|th)?\\b`, 'gi'),
  /[$€£]\s?\d+(?:[.,]\d+)?/g,
  /\b\d+(?:[.,]\d+)?\s?(?:%|percent|am|pm|h|hours?|days?|weeks?)\b/gi,
];

const DIGIT = /\d/;

/** Dates, amounts and quantities stated in a text, normalised ("March 15" and "15 March" both -> "15 mar"). */
function valuesOf(text: string): Set<string> {
  const values = new Set<string>();
  // Every pattern needs a digit: one scan instead of five for a text without any.
  if (!DIGIT.test(text)) return values;
  for (const pattern of VALUE_PATTERNS) {
    for (const match of text.matchAll(pattern)) values.add(normalizeValue(match[0]));
  }
  return values;
}

function normalizeValue(value: string): string {
  const lower = value.toLowerCase().replace(/\s+/g, ' ').trim();
  const dayMonth = /^(\d{1,2})(?:st|nd|rd|th)? ([a-z]{3})/.exec(lower);
  if (dayMonth) return `${Number(dayMonth[1])} ${dayMonth[2]}`;
  const monthDay = /^([a-z]{3})[a-z]* (\d{1,2})/.exec(lower);
  if (monthDay) return `${Number(monthDay[2])} ${monthDay[1]}`;
  return lower.replace(/\s/g, '');
}
