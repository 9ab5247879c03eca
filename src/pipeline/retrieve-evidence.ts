import { semanticPending } from '../digest/incremental/semantic-compaction-mark.ts';
import type { ModelSet } from '../providers/model-spec.ts';
import { type ArchiveStore, inUnitOfWork } from '../store/archive-store-spec.ts';
import type { EdgeVerifierResult } from '../verify/edge-verifier-spec.ts';
import type { NodeVerifierResult, PoolRelation } from '../verify/node-verifier-spec.ts';
import type { VerifierQuestion } from '../verify/verifier-input.ts';
import { renderPacketText } from './evidence-packet.ts';
import {
  buildPacket,
  type ExpandedPool,
  expandPool,
  poolFeatureRows,
  prizePool,
  type RetrievedViews,
  recordVerifierOutcome,
  retrieveViews,
  type StageContext,
  solveEvidenceForest,
  verifiedEdgesOf,
  verifierQuestionOf,
  verifyEdges,
  verifyNodes,
} from './evidence-stages.ts';
import { rankerPrizes, resolveRanker } from './offline-ranker.ts';
import { calibrationKey, calibrationParts, resolveCalibration } from './prize-calibration.ts';
import { type QuestionDeadline, startQuestionDeadline } from './question-deadline.ts';
import { poolShape } from './ranker-features.ts';
import { rankerPoolAndEdges } from './ranker-refinement.ts';
import type { QuestionInput, RetrievalResult, RetrieveOptions } from './retrieval-result.ts';
import { selectVerifiers, type VerifierPair } from './select-verifiers.ts';
import { type Clock, systemClock, TraceBuilder } from './trace-builder.ts';
import { applyVersionMarks, packetVersionLinks } from './version-marks.ts';

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
  // Without a model call to wait on, the whole question's reads share ONE read transaction (PostgreSQL: one
  // snapshot, one BEGIN and COMMIT instead of one per store call); else retrieval with expansion and the
  // stages after the verifiers each get one (verifiedPool, below).
  // (selectVerifiers' rule: 'auto' and 'model' use the verifier model when one is configured.)
  const verifierMode = options.verifiers ?? 'auto';
  const remote =
    deps.models.embedding !== undefined ||
    deps.models.vision !== undefined ||
    ((verifierMode === 'auto' || verifierMode === 'model') && deps.models.verifier !== undefined);
  return inUnitOfWork(
    deps.store,
    contextId,
    async () => {
      // Only a model call reads the signal: an offline question never makes the deadline's timer.
      const signal = remote ? deadline.signal : undefined;
      const verified = await verifiedPool(deps, contextId, question, options, signal, trace);
      const stage = { contextId, question, options, deadline, trace, verified };
      return inUnitOfWork(deps.store, contextId, () => packetStages(deps, stage), { read: true });
    },
    { read: true, remote },
  );
}

/** Prizes, solve and packet (stages 4-6), after the verifiers. */
async function packetStages(
  deps: PipelineDeps,
  stage: {
    contextId: string;
    question: QuestionInput;
    options: RetrieveOptions;
    deadline: QuestionDeadline;
    trace: TraceBuilder;
    verified: VerifiedPool;
  },
): Promise<RetrievalResult> {
  const { contextId, question, options, deadline, trace, verified } = stage;
  const k = options.k ?? PIPELINE_DEFAULTS.k;
  const { retrieved, expanded, verifiers, nodeResult, edgeResult } = verified;

  const components = calibrationParts(deps.models.embedding, verifiers);
  const key = calibrationKey(components);
  const calibration = await resolveCalibration(deps.store, key);
  trace.flag('semantic_pending', await semanticPending(deps.store, contextId));
  trace.flag('relations_pending', await deps.store.hasRelationWork(contextId));
  // The shipped offline ranker replaces the SHIPPED (a, b, c) only where it was fitted: the offline node
  // verifier's configuration. A calibration fitted on this archive (`graphmemix calibrate`, source 'store')
  // is the user's own fit on their own dev questions and wins, as it wins over the shipped defaults.
  const ranker =
    verifiers.node?.kind === 'offline' && nodeResult?.ok === true && calibration.source !== 'store'
      ? resolveRanker(key)
      : undefined;
  // Unfitted: the paper's values on another score scale. Only flagged where (a, b, c) make the prizes.
  trace.flag('calibration_unfitted', ranker === undefined && calibration.source === 'paper');
  const shape = poolShape(verified.relations);
  const prized = prizePool(expanded, retrieved.search.ranked, nodeResult, {
    calibration,
    ...(ranker
      ? {
          rankerPrizes: rankerPrizes(
            ranker,
            poolFeatureRows(retrieved, expanded, verified.question, nodeResult, verified.relations),
            shape,
          ),
        }
      : {}),
  });
  const judgedEdges = verifiedEdgesOf(edgeResult, expanded.eligible);
  // With the ranker's prizes, the offline ECV's cross-unit edges get the reliability fitted with it, repeats
  // lose their prize, and the refinement uses the kappa fitted for these prizes (a caller's kappa wins).
  const { pool, edges: verifiedEdges } = ranker
    ? rankerPoolAndEdges(ranker, prized, judgedEdges, shape, expanded.records)
    : { pool: prized, edges: judgedEdges };
  const rankerKappa = options.solver?.kappa === undefined ? ranker?.refinement?.kappa : undefined;
  const forest = solveEvidenceForest(
    pool,
    verifiedEdges,
    k,
    rankerKappa === undefined ? options.solver : { ...options.solver, kappa: rankerKappa },
  );
  trace.flag('pool_smaller_than_k', pool.length < k && pool.length > 0);
  trace.flag('deadline_exceeded', deadline.exceeded());
  trace.lap('solve');

  const packet = buildPacket(forest, expanded.records, pool, retrieved.queryText);
  // Versions of one fact (supersedes): both dates, which one is current, oldest first.
  const versions = await packetVersionLinks(
    deps.store,
    contextId,
    packet.evidence,
    expanded.records,
    options.filter,
    expanded.seedEdges,
  );
  const evidence = applyVersionMarks(packet.evidence, versions.links, versions.records);
  const packetText = versions.links.length === 0 ? packet.packetText : renderPacketText(evidence);
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
        prizes: ranker ? `${ranker.name} v${ranker.version}` : 'calibration sigmoid(a s + b v + c)',
        solver:
          rankerKappa === undefined
            ? 'forest: 1-swap proposal + exact refinement'
            : `forest: 1-swap proposal + exact refinement (kappa ${rankerKappa}, fitted with the ranker)`,
        store: deps.store.backend,
        // Which query expansions the lexical search used, with their terms (src/retrieval/query-expansion.ts).
        ...(retrieved.search.expansions.length === 0
          ? {}
          : {
              queryExpansion: retrieved.search.expansions
                .map((e) => `${e.source}@${e.weight}: ${e.terms.join(' ')}`)
                .join('; '),
            }),
      },
      // With the ranker, (a, b, c) made no prize: the key names the shipped ranker artifact instead.
      calibration: ranker
        ? {
            a: calibration.a,
            b: calibration.b,
            c: calibration.c,
            key: `${key} (shipped ${ranker.name} v${ranker.version})`,
            source: 'default',
            fitted: true,
          }
        : {
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

/** Stages 1-3 (retrieve views, expand, verify nodes and edges), shared by retrieve and the ranker's fit. */
export interface VerifiedPool {
  retrieved: RetrievedViews;
  expanded: ExpandedPool;
  question: VerifierQuestion;
  verifiers: VerifierPair;
  nodeResult: NodeVerifierResult | undefined;
  edgeResult: EdgeVerifierResult | undefined;
  /** Schema relations among the pool members (read by the offline verifier and ranker). */
  relations: PoolRelation[];
}

export async function verifiedPool(
  deps: PipelineDeps,
  contextId: string,
  question: QuestionInput,
  options: RetrieveOptions,
  signal: AbortSignal | undefined,
  trace: TraceBuilder,
): Promise<VerifiedPool> {
  const seeds = options.seeds ?? PIPELINE_DEFAULTS.seeds;
  const poolSize = Math.max(options.poolSize ?? PIPELINE_DEFAULTS.poolSize, 1);
  const anchors = options.anchors ?? PIPELINE_DEFAULTS.anchors;
  const verifiers = selectVerifiers(options.verifiers, deps.models);
  const ctx: StageContext = {
    store: deps.store,
    models: deps.models,
    contextId,
    signal,
    trace,
    // The question's scope: retrieval and expansion stay inside it (filtered-candidates.ts).
    ...(options.filter ? { filter: options.filter } : {}),
  };

  // The reads of retrieval and expansion share one read transaction (PostgreSQL: one snapshot, one BEGIN and
  // COMMIT instead of one per store call), unless a model call (query embedding, captions) waits inside. Inside
  // a caller's read unit (retrieveEvidence, all offline) it joins that one.
  const remote = deps.models.embedding !== undefined || deps.models.vision !== undefined;
  const { retrieved, expanded } = await inUnitOfWork(
    deps.store,
    contextId,
    async () => {
      const retrieved = await retrieveViews(ctx, question, { seeds, poolSize }, options.expansion);
      trace.lap('retrieve');
      const expanded = await expandPool(ctx, retrieved, {
        poolSize,
        anchors,
        relations: verifiers.node?.kind === 'offline',
      });
      trace.lap('expand');
      return { retrieved, expanded };
    },
    { read: true, remote },
  );

  const verifierQuestion = verifierQuestionOf(question, retrieved.captions);
  const [node, edgeResult] = await Promise.all([
    verifyNodes(ctx, verifiers.node, verifierQuestion, expanded),
    verifyEdges(ctx, verifiers.edge, verifierQuestion, expanded),
  ]);
  recordVerifierOutcome(trace, verifiers, node.result, edgeResult);
  trace.lap('verify');
  return {
    retrieved,
    expanded,
    question: verifierQuestion,
    verifiers,
    nodeResult: node.result,
    edgeResult,
    relations: node.relations,
  };
}
