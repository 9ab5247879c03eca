import type { EdgeRole } from '../core/candidate-graph.ts';
import { tokenize } from '../retrieval/tokenize.ts';
import { recordFullText } from './candidate-snippet.ts';
import { normalizeJudgement } from './ecv-protocol.ts';
import type {
  EdgeJudgement,
  EdgeVerifier,
  EdgeVerifierInput,
  EdgeVerifierResult,
} from './edge-verifier-spec.ts';
import { termWeights } from './lexical-node-verifier.ts';

/** Token-set overlap (Jaccard) at or above which a candidate only repeats its anchor. */
export const NEAR_DUPLICATE_JACCARD = 0.8;
/**
 * Relations that put two memories in ONE unit (the two halves of a round, one email thread, an email and the
 * photos it talks about): the candidate completes the anchor's fact, so it inherits the anchor's relevance.
 * Across units (adjacent turns of different rounds, nearby photos) a candidate must be relevant on its own.
 */
const SAME_UNIT: ReadonlySet<string> = new Set(['same_round', 'same_record', 'record_grounding']);
/** Words that mark a later memory as revising an earlier one: differing values are then an update, not a conflict. */
const UPDATE_CUES =
  /\b(update[ds]?|revis(?:ed|ion)|correct(?:ed|ion)|chang(?:e|ed)|moved|postponed|rescheduled|extended|delayed|brought forward|instead|now|new (?:date|deadline|time))\b/i;

/**
 * Offline edge verifier `anchor-novelty` (no model). For each candidate and each eligible anchor:
 * - near-duplicate of the anchor (token Jaccard >= 0.8) -> redundant;
 * - both state dates or numbers, the values differ, the texts share a topic, and the candidate carries no
 *   update cue -> conflict; with an update cue -> clarification (the revision is the evidence);
 * - otherwise incremental support = 5 x novelty x relevance, where novelty = share of the candidate's distinct
 *   terms absent from the anchor, and relevance = the better question-term coverage of the two (rarity-weighted)
 *   relative to the best-covered memory of the pool when the relation puts both in one unit (same_round,
 *   same_record, record_grounding: the candidate completes the anchor's fact), else the candidate's own
 *   relative coverage (an adjacent turn of another round must be relevant by itself).
 *   Role: new_fact when the candidate adds question terms the anchor lacks, else clarification.
 * The best anchor is the one with the highest support (ties: earlier anchor). Rules of method notes 5 apply.
 */
export function createAnchorNoveltyEdgeVerifier(): EdgeVerifier {
  return {
    specificationVersion: 'v1',
    name: 'anchor-novelty',
    kind: 'offline',
    async verify(input: EdgeVerifierInput): Promise<EdgeVerifierResult> {
      const question = [input.question.prompt, ...(input.question.choices ?? []).map((c) => c.text)].join(
        '\n',
      );
      const terms = [...new Set(tokenize(question))];
      const texts = new Map<string, string>();
      for (const anchor of input.anchors) texts.set(anchor.memoryId, recordFullText(anchor.record));
      for (const { candidate } of input.candidates)
        texts.set(candidate.memoryId, recordFullText(candidate.record));
      const tokenSets = new Map([...texts].map(([id, text]) => [id, new Set(tokenize(text))]));
      const weights = termWeights(terms, [...tokenSets.values()]);
      // Relevance is relative to the best-covered memory of this question, so "relevant" means the same
      // thing for a question whose best match shares one term and one whose best match shares five.
      const coverage = new Map(
        [...tokenSets].map(([id, tokens]) => [id, weightedCoverage(tokens, terms, weights)]),
      );
      const bestCoverage = Math.max(1e-9, ...coverage.values());
      const judgements: EdgeJudgement[] = input.candidates.map(({ candidate, relations }) => {
        let best: { anchorId: string; score: number; role: EdgeRole } | undefined;
        for (const relation of relations) {
          const verdict = judgePair(
            { tokens: tokenSets.get(candidate.memoryId)!, text: texts.get(candidate.memoryId)! },
            {
              tokens: tokenSets.get(relation.anchorId) ?? new Set(),
              text: texts.get(relation.anchorId) ?? '',
            },
            terms,
            weights,
            (relation.relationTypes.some((t) => SAME_UNIT.has(t))
              ? Math.max(coverage.get(candidate.memoryId)!, coverage.get(relation.anchorId) ?? 0)
              : coverage.get(candidate.memoryId)!) / bestCoverage,
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

interface PairSide {
  tokens: Set<string>;
  text: string;
}

/** One candidate-anchor pair on plain data (exported for tests). */
export function judgePair(
  candidate: PairSide,
  anchor: PairSide,
  terms: readonly string[],
  weights: readonly number[],
  pairRelevance: number,
): { score: number; role: EdgeRole } {
  if (candidate.tokens.size === 0) return { score: 0, role: 'irrelevant' };
  let shared = 0;
  for (const token of candidate.tokens) if (anchor.tokens.has(token)) shared++;
  const jaccard = shared / (candidate.tokens.size + anchor.tokens.size - shared);
  if (jaccard >= NEAR_DUPLICATE_JACCARD) return { score: 0, role: 'redundant' };

  const candidateValues = valuesOf(candidate.text);
  const anchorValues = valuesOf(anchor.text);
  const valuesDiffer =
    candidateValues.size > 0 &&
    anchorValues.size > 0 &&
    ![...candidateValues].some((v) => anchorValues.has(v));
  if (valuesDiffer && jaccard >= 0.2) {
    return UPDATE_CUES.test(candidate.text)
      ? { score: 5, role: 'clarification' }
      : { score: 0, role: 'conflict' };
  }

  let added = 0;
  for (const [index, term] of terms.entries()) {
    if (candidate.tokens.has(term) && !anchor.tokens.has(term)) added += weights[index]!;
  }
  const novelty = 1 - shared / candidate.tokens.size;
  const score = Math.round(Math.min(5, 5 * novelty * Math.min(1, Math.max(0, pairRelevance))) * 10) / 10;
  if (score <= 0) return { score: 0, role: 'irrelevant' };
  return { score, role: added > 0 ? 'new_fact' : 'clarification' };
}

/** Rarity-weighted share of the question terms a token set contains. */
function weightedCoverage(tokens: Set<string>, terms: readonly string[], weights: readonly number[]): number {
  let covered = 0;
  let total = 0;
  for (const [index, term] of terms.entries()) {
    total += weights[index]!;
    if (tokens.has(term)) covered += weights[index]!;
  }
  return total > 0 ? covered / total : 0;
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

/** Dates, amounts and quantities stated in a text, normalised ("March 15" and "15 March" both -> "15 mar"). */
function valuesOf(text: string): Set<string> {
  const values = new Set<string>();
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
