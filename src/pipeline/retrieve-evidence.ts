import { type CandidateEdge, type CandidateGraph, DEFAULT_SOLVER_PARAMS } from '../core/candidate-graph.ts';
import { ecvEdgeWeight, edgeCostFromWeight, solveForest } from '../core/index.ts';
import type { ModelSet, TokenUsage } from '../providers/model-spec.ts';
import {
  expandCandidates,
  type PoolEntry,
  poolScores,
  type ScoredMemory,
} from '../retrieval/expand-candidates.ts';
import { multiViewSearch, retrieverName } from '../retrieval/multi-view-retriever.ts';
import type { ArchiveStore, MemoryFilter } from '../store/archive-store-spec.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import type { MemoryEdge, SchemaRelationType } from '../types/relation.ts';
import type { EdgeVerifierResult } from '../verify/edge-verifier-spec.ts';
import type { NodeVerifierResult, PoolRelation } from '../verify/node-verifier-spec.ts';
import { candidateAlias, type VerifierCall, type VerifierCandidate } from '../verify/verifier-input.ts';
import { eligibleRelations } from './eligible-relations.ts';
import { buildEvidence, renderPacketText } from './evidence-packet.ts';
import { calibrationKey, nodePrize, resolveCalibration } from './prize-calibration.ts';
import { questionImageCaptions } from './question-captions.ts';
import { type QuestionDeadline, startQuestionDeadline } from './question-deadline.ts';
import type {
  ModelCallRecord,
  PipelineFlag,
  PipelineTrace,
  PoolCandidate,
  QuestionInput,
  RetrievalResult,
  RetrieveOptions,
  StageName,
  VerifiedEdge,
} from './retrieval-result.ts';
import { selectVerifiers } from './select-verifiers.ts';

/** Method defaults (method notes 1). */
export const PIPELINE_DEFAULTS = { k: 10, seeds: 24, poolSize: 48, anchors: 10 } as const;

export interface PipelineDeps {
  store: ArchiveStore;
  models: ModelSet;
  /** Default question deadline of this archive (RetrieveOptions.deadlineMs wins). */
  questionDeadlineMs?: number;
}

/**
 * The question pipeline up to the evidence packet: multi-view retrieval -> top-L seeds -> one-hop expansion
 * to M -> anchors -> node verifier and ECV IN PARALLEL -> prizes -> forest solver -> packet. Never throws for
 * a model fault (verifier failures fall back to retrieval-only prizes / no edges, flagged); returns at least
 * one memory whenever the context has any. Every model call gets one signal that aborts on the client's signal
 * or the question deadline (`deadline`, started here unless `answer` shares its own with the reader).
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
  const started = performance.now();
  const k = options.k ?? PIPELINE_DEFAULTS.k;
  const seedCount = options.seeds ?? PIPELINE_DEFAULTS.seeds;
  const poolSize = Math.max(options.poolSize ?? PIPELINE_DEFAULTS.poolSize, 1);
  const anchorCount = options.anchors ?? PIPELINE_DEFAULTS.anchors;
  const timings: PipelineTrace['timings'] = {};
  const flags = new Set<PipelineFlag>();
  const modelCalls: ModelCallRecord[] = [];
  const verifiers = selectVerifiers(options.verifiers, deps.models);
  const signal = deadline.signal;
  let clock = performance.now();
  const lap = (stage: StageName): void => {
    const now = performance.now();
    timings[stage] = (timings[stage] ?? 0) + (now - clock);
    clock = now;
  };

  // 1. Multi-view retrieval (question-image captions join the query text).
  const captions = await questionImageCaptions(question.images ?? [], deps.models.vision, signal);
  modelCalls.push(...captions.calls);
  if (captions.failed) flags.add('question_caption_failed');
  const queryText = [
    question.prompt,
    ...(question.choices ?? []).map((c) => c.text),
    ...captions.captions,
  ].join('\n');
  const search = await multiViewSearch(
    deps.store,
    contextId,
    {
      text: queryText,
      imageUris: (question.images ?? []).flatMap((i) => (i.uri === undefined ? [] : [i.uri])),
    },
    {
      limit: Math.max(poolSize, seedCount * 2),
      ...(deps.models.embedding ? { embedding: deps.models.embedding } : {}),
      ...(signal ? { signal } : {}),
      ...(options.filter ? { filter: options.filter } : {}),
    },
  );
  if (search.embeddingCall) {
    modelCalls.push({
      stage: 'embedding',
      model: search.embeddingCall.model,
      attempts: 1,
      ok: search.embeddingCall.error === undefined,
      cached: search.embeddingCall.cached,
      latencyMs: search.embeddingCall.latencyMs,
      usage: search.embeddingCall.usage,
      ...(search.embeddingCall.error === undefined ? {} : { error: search.embeddingCall.error }),
    });
  }
  if (search.denseFailed) flags.add('dense_retrieval_failed');
  let ranked = search.ranked;
  if (ranked.length === 0) {
    ranked = await fallbackSeeds(deps.store, contextId, seedCount, options.filter);
    flags.add(ranked.length === 0 ? 'empty_context' : 'no_lexical_match');
  }
  const retrievedScore = new Map(ranked.map((m) => [m.memoryId, m.score]));
  const seeds = ranked.slice(0, seedCount);
  lap('retrieve');

  // 2. One-hop expansion, the cut to M, pool records, anchors.
  const allEdges =
    seeds.length > 0
      ? await deps.store.neighbors(
          contextId,
          seeds.map((s) => s.memoryId),
        )
      : [];
  // A filtered question expands only into memories that pass the filter (checked by id: cost per edge).
  const edges = options.filter
    ? await edgesWithin(deps.store, contextId, allEdges, options.filter)
    : allEdges;
  const entries = expandCandidates(seeds, edges, poolSize);
  const { scores } = poolScores(entries, retrievedScore);
  const records = new Map(
    (
      await deps.store.getMemories(
        contextId,
        entries.map((e) => e.memoryId),
      )
    ).map((r) => [r.id, r] as const),
  );
  const present = entries
    .map((entry, index) => ({ entry, score: scores[index]! }))
    .filter(({ entry }) => records.has(entry.memoryId));
  const candidates: VerifierCandidate[] = present.map(({ entry, score }, position) => ({
    memoryId: entry.memoryId,
    alias: candidateAlias(position),
    record: records.get(entry.memoryId)!,
    retrievalScore: score,
    isAnchor: position < anchorCount,
  }));
  const anchors = candidates.filter((c) => c.isAnchor);
  const eligible = eligibleRelations(
    candidates.map((c) => c.memoryId),
    anchors.map((a) => a.memoryId),
    edges,
  );
  const byId = new Map(candidates.map((c) => [c.memoryId, c]));
  lap('expand');

  // 3. Node verifier and ECV, in parallel.
  const verifierQuestion = {
    prompt: question.prompt,
    ...(question.instruction === undefined ? {} : { instruction: question.instruction }),
    ...(question.choices === undefined ? {} : { choices: question.choices }),
    ...(question.type === undefined ? {} : { type: question.type }),
    imageCaptions: captions.captions,
  };
  const edgeInput = {
    question: verifierQuestion,
    anchors,
    candidates: [...eligible].map(([id, relations]) => ({ candidate: byId.get(id)!, relations })),
    ...(signal ? { signal } : {}),
  };
  if (verifiers.edge && edgeInput.candidates.length === 0) flags.add('no_eligible_edges');
  const relations =
    verifiers.node?.kind === 'offline' ? await poolRelations(deps.store, contextId, candidates) : [];
  const [nodeResult, edgeResult] = await Promise.all([
    verifiers.node && candidates.length > 0
      ? verifiers.node.verify({
          question: verifierQuestion,
          candidates,
          relations,
          ...(signal ? { signal } : {}),
        })
      : Promise.resolve<NodeVerifierResult | undefined>(undefined),
    verifiers.edge && edgeInput.candidates.length > 0
      ? verifiers.edge.verify(edgeInput)
      : Promise.resolve<EdgeVerifierResult | undefined>(undefined),
  ]);
  if (!verifiers.node && !verifiers.edge) flags.add('no_verifier');
  if (verifiers.node?.kind === 'offline') flags.add('node_verifier_offline');
  if (verifiers.edge?.kind === 'offline') flags.add('edge_verifier_offline');
  if (nodeResult?.call) modelCalls.push(callRecord('node_verifier', nodeResult.call));
  if (edgeResult?.call) modelCalls.push(callRecord('edge_verifier', edgeResult.call));
  if (nodeResult && !nodeResult.ok) flags.add('node_verifier_failed');
  if (edgeResult && !edgeResult.ok) flags.add('edge_verifier_failed');
  const verifierScores = nodeResult?.ok ? nodeResult.scores : new Map<string, number>();
  lap('verify');

  // 4. Prizes, verified edges, forest.
  const key = calibrationKey({
    retriever: retrieverName(deps.models.embedding),
    nodeVerifier: verifiers.node?.name ?? 'none',
    edgeVerifier: verifiers.edge?.name ?? 'none',
  });
  const calibration = await resolveCalibration(deps.store, key);
  const pool: PoolCandidate[] = present.map(({ entry }, position) => {
    const candidate = candidates[position]!;
    const v = verifierScores.get(entry.memoryId) ?? 0;
    return {
      memoryId: entry.memoryId,
      position,
      origin: originOf(entry, search.ranked),
      retrievalScore: candidate.retrievalScore,
      verifierScore: v,
      prize: nodePrize(calibration, candidate.retrievalScore, v),
      isAnchor: candidate.isAnchor,
    };
  });
  const verifiedEdges: VerifiedEdge[] = [];
  if (edgeResult?.ok) {
    for (const judgement of edgeResult.judgements) {
      const relations = eligible.get(judgement.candidateId) ?? [];
      const relation = relations.find((r) => r.anchorId === judgement.anchorId) ?? relations[0];
      if (!relation) continue;
      const weight = judgement.kept ? ecvEdgeWeight(judgement.incrementalSupport) : 0;
      verifiedEdges.push({
        a: relation.anchorId,
        b: judgement.candidateId,
        weight,
        cost: edgeCostFromWeight(weight),
        relationTypes: relation.relationTypes,
        role: judgement.role,
        incrementalSupport: judgement.incrementalSupport,
        kept: judgement.kept,
      });
    }
  }
  const graph: CandidateGraph = {
    nodes: pool.map((c) => ({ id: c.memoryId, position: c.position, prize: c.prize })),
    edges: verifiedEdges.filter((e) => e.kept).map(({ kept: _kept, ...edge }): CandidateEdge => edge),
  };
  const forest = solveForest(graph, {
    k,
    lambda: options.solver?.lambda ?? DEFAULT_SOLVER_PARAMS.lambda,
    kappaProposal: options.solver?.kappaProposal ?? DEFAULT_SOLVER_PARAMS.kappaProposal,
    kappa: options.solver?.kappa ?? DEFAULT_SOLVER_PARAMS.kappa,
  });
  if (pool.length < k && pool.length > 0) flags.add('pool_smaller_than_k');
  if (deadline.exceeded()) flags.add('deadline_exceeded');
  lap('solve');

  // 5. Evidence packet.
  const poolById = new Map(pool.map((c) => [c.memoryId, c]));
  const evidence = buildEvidence(forest, records, poolById, queryText);
  const packetText = renderPacketText(evidence);
  lap('packet');

  return {
    contextId,
    question,
    evidence,
    packetText,
    pool,
    verifiedEdges,
    forest,
    trace: {
      timings,
      totalMs: performance.now() - started,
      modelCalls,
      usage: sumUsage(modelCalls),
      flags: [...flags],
      components: {
        retriever: retrieverName(deps.models.embedding),
        nodeVerifier: verifiers.node?.name ?? 'none',
        edgeVerifier: verifiers.edge?.name ?? 'none',
        solver: 'forest: 1-swap proposal + exact refinement',
        store: deps.store.backend,
      },
      calibration: {
        a: calibration.a,
        b: calibration.b,
        c: calibration.c,
        key: `${calibration.key} (${calibration.source})`,
      },
    },
  };
}

export function sumUsage(calls: readonly { usage: TokenUsage }[]): TokenUsage {
  const total: TokenUsage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  for (const call of calls) {
    total.promptTokens += call.usage.promptTokens;
    total.completionTokens += call.usage.completionTokens;
    total.totalTokens += call.usage.totalTokens;
  }
  return total;
}

function callRecord(stage: ModelCallRecord['stage'], call: VerifierCall): ModelCallRecord {
  return { stage, ...call };
}

function originOf(entry: PoolEntry, ranked: readonly ScoredMemory[]): PoolCandidate['origin'] {
  if (entry.kind === 'expanded') {
    return {
      kind: 'expanded',
      parentId: entry.parentId,
      relationTypes: entry.relationTypes,
      strength: entry.strength,
    };
  }
  const hit = ranked[entry.rank];
  const bestView = hit?.memoryId === entry.memoryId ? hit.bestView : 'text';
  return {
    kind: 'seed',
    rank: entry.rank,
    bestView,
    viewKey: hit?.memoryId === entry.memoryId ? hit.viewKey : 'main',
  };
}

/** Schema relations among pool members (for verifiers that read a memory in its context). */
async function poolRelations(
  store: ArchiveStore,
  contextId: string,
  candidates: readonly VerifierCandidate[],
): Promise<PoolRelation[]> {
  const ids = candidates.map((c) => c.memoryId);
  const inPool = new Set(ids);
  const relations: PoolRelation[] = [];
  for (const edge of await store.neighbors(contextId, ids)) {
    if (!inPool.has(edge.a) || !inPool.has(edge.b)) continue;
    const types = edge.types.filter((t): t is SchemaRelationType => t !== 'semantic_knn');
    if (types.length > 0) relations.push({ a: edge.a, b: edge.b, types });
  }
  return relations;
}

/** The edges whose both ends pass the filter. */
async function edgesWithin(
  store: ArchiveStore,
  contextId: string,
  edges: readonly MemoryEdge[],
  filter: MemoryFilter,
): Promise<MemoryEdge[]> {
  if (edges.length === 0) return [];
  const ids = new Set<string>();
  for (const edge of edges) {
    ids.add(edge.a);
    ids.add(edge.b);
  }
  const allowed = new Set(await store.matchMemories(contextId, filter, { ids: [...ids] }));
  return edges.filter((edge) => allowed.has(edge.a) && allowed.has(edge.b));
}

/** No view matched: the most recent memories (score 0) so the packet is never silently empty. */
async function fallbackSeeds(
  store: ArchiveStore,
  contextId: string,
  count: number,
  filter?: MemoryFilter,
): Promise<ScoredMemory[]> {
  if (filter) {
    // The first matching memories (an index read); a filter never falls back to foreign ones.
    const ids = await store.matchMemories(contextId, filter, { limit: count });
    return ids.map((id) => ({ memoryId: id, score: 0, bestView: 'metadata' as const, viewKey: 'main' }));
  }
  const maxSequence = await store.maxSequence(contextId);
  if (maxSequence === undefined) return [];
  const after = maxSequence - count * 4 - 1;
  // The record holding maxSequence is always past `after`: one bounded page, never the whole context.
  const recent: MemoryRecord[] = await store.listMemories(contextId, { afterSequence: after });
  return recent
    .slice(-count)
    .reverse()
    .map((r) => ({ memoryId: r.id, score: 0, bestView: 'metadata' as const, viewKey: 'main' }));
}
