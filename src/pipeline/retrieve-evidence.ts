import type { ModelSet } from '../providers/model-spec.ts';
import { retrieverName } from '../retrieval/multi-view-retriever.ts';
import type { ArchiveStore } from '../store/archive-store-spec.ts';
import {
  buildPacket,
  expandPool,
  prizePool,
  recordVerifierOutcome,
  retrieveViews,
  type StageContext,
  solveEvidenceForest,
  verifiedEdgesOf,
  verifierQuestionOf,
  verifyEdges,
  verifyNodes,
} from './evidence-stages.ts';
import { calibrationKey, resolveCalibration } from './prize-calibration.ts';
import { type QuestionDeadline, startQuestionDeadline } from './question-deadline.ts';
import type { QuestionInput, RetrievalResult, RetrieveOptions } from './retrieval-result.ts';
import { selectVerifiers } from './select-verifiers.ts';
import { type Clock, systemClock, TraceBuilder } from './trace-builder.ts';

export { sumUsage } from './trace-builder.ts';

/** Method defaults (method notes 1). */
export const PIPELINE_DEFAULTS = { k: 10, seeds: 24, poolSize: 48, anchors: 10 } as const;

export interface PipelineDeps {
  store: ArchiveStore;
  models: ModelSet;
  /** Default question deadline of this archive (RetrieveOptions.deadlineMs wins). */
  questionDeadlineMs?: number;
  /** Clock of the stage timings (default `performance.now`); tests inject one to make timings exact. */
  clock?: Clock;
}

/**
 * The question pipeline up to the evidence packet, as its named stages (src/pipeline/evidence-stages.ts):
 * retrieve views (top-L seeds) -> expand (one hop, cut to M, anchors) -> verify nodes and verify edges IN
 * PARALLEL -> prizes -> solve (forest) -> packet. Never throws for a model fault (verifier failures fall back
 * to retrieval-only prizes / no edges, flagged); returns at least one memory whenever the context has any.
 * Every model call gets one signal that aborts on the client's signal or the question deadline (`deadline`,
 * started here unless `answer` shares its own with the reader).
 */
export async function retrieveEvidence(
  deps: PipelineDeps,
  contextId: string,
  question: QuestionInput,
  options: RetrieveOptions = {},
  deadline: QuestionDeadline = startQuestionDeadline(
    options.deadlineMs ?? deps.questionDeadlineMs,
    options.signal,
  ),
): Promise<RetrievalResult> {
  const trace = new TraceBuilder(deps.clock ?? systemClock);
  const k = options.k ?? PIPELINE_DEFAULTS.k;
  const seeds = options.seeds ?? PIPELINE_DEFAULTS.seeds;
  const poolSize = Math.max(options.poolSize ?? PIPELINE_DEFAULTS.poolSize, 1);
  const anchors = options.anchors ?? PIPELINE_DEFAULTS.anchors;
  const verifiers = selectVerifiers(options.verifiers, deps.models);
  const ctx: StageContext = {
    store: deps.store,
    models: deps.models,
    contextId,
    signal: deadline.signal,
    trace,
    ...(options.filter ? { filter: options.filter } : {}),
  };

  const retrieved = await retrieveViews(ctx, question, { seeds, poolSize });
  trace.lap('retrieve');

  const expanded = await expandPool(ctx, retrieved, { poolSize, anchors });
  trace.lap('expand');

  const verifierQuestion = verifierQuestionOf(question, retrieved.captions);
  const [nodeResult, edgeResult] = await Promise.all([
    verifyNodes(ctx, verifiers.node, verifierQuestion, expanded),
    verifyEdges(ctx, verifiers.edge, verifierQuestion, expanded),
  ]);
  recordVerifierOutcome(trace, verifiers, nodeResult, edgeResult);
  trace.lap('verify');

  const components = {
    retriever: retrieverName(deps.models.embedding),
    nodeVerifier: verifiers.node?.name ?? 'none',
    edgeVerifier: verifiers.edge?.name ?? 'none',
  };
  const calibration = await resolveCalibration(deps.store, calibrationKey(components));
  trace.flag('calibration_unfitted', calibration.source === 'paper');
  const pool = prizePool(expanded, retrieved.search.ranked, nodeResult, calibration);
  const verifiedEdges = verifiedEdgesOf(edgeResult, expanded.eligible);
  const forest = solveEvidenceForest(pool, verifiedEdges, k, options.solver);
  trace.flag('pool_smaller_than_k', pool.length < k && pool.length > 0);
  trace.flag('deadline_exceeded', deadline.exceeded());
  trace.lap('solve');

  const { evidence, packetText } = buildPacket(forest, expanded.records, pool, retrieved.queryText);
  trace.lap('packet');

  return {
    contextId,
    question,
    evidence,
    packetText,
    pool,
    verifiedEdges,
    forest,
    trace: trace.build({
      components: {
        ...components,
        solver: 'forest: 1-swap proposal + exact refinement',
        store: deps.store.backend,
      },
      calibration: {
        a: calibration.a,
        b: calibration.b,
        c: calibration.c,
        key: `${calibration.key} (${calibration.source})`,
        source: calibration.source,
        fitted: calibration.source !== 'paper',
      },
    }),
  };
}
