import { type CandidateEdge, type CandidateGraph, DEFAULT_SOLVER_PARAMS } from '../core/candidate-graph.ts';
import { ecvEdgeWeight, edgeCostFromWeight, type ForestSolution, solveForest } from '../core/index.ts';
import { buildViews } from '../digest/build-views.ts';
import type { ModelSet } from '../providers/model-spec.ts';
import {
  expandCandidates,
  type PoolEntry,
  poolScores,
  type ScoredMemory,
} from '../retrieval/expand-candidates.ts';
import { type MultiViewSearchResult, multiViewSearch } from '../retrieval/multi-view-retriever.ts';
import type { ArchiveStore, MemoryFilter } from '../store/archive-store-spec.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import type { MemoryEdge, SchemaRelationType } from '../types/relation.ts';
import type { EdgeVerifier, EdgeVerifierResult, EligibleRelation } from '../verify/edge-verifier-spec.ts';
import type { NodeVerifier, NodeVerifierResult, PoolRelation } from '../verify/node-verifier-spec.ts';
import {
  candidateAlias,
  type VerifierCall,
  type VerifierCandidate,
  type VerifierQuestion,
} from '../verify/verifier-input.ts';
import { eligibleRelations } from './eligible-relations.ts';
import { buildEvidence, renderPacketText } from './evidence-packet.ts';
import { edgesAmongIds, type SeedEdges } from './pool-edges.ts';
import { poolRecords } from './pool-records.ts';
import { nodePrize, type ResolvedCalibration } from './prize-calibration.ts';
import { questionImageCaptions } from './question-captions.ts';
import { type ExpansionSwitches, questionExpansions } from './question-expansions.ts';
import { rankerFeatures } from './ranker-features.ts';
import type {
  EvidenceItem,
  JudgedEdge,
  ModelCallRecord,
  PoolCandidate,
  QuestionInput,
  RetrieveOptions,
} from './retrieval-result.ts';
import type { TraceBuilder } from './trace-builder.ts';

/**
 * The stages of the question pipeline (method notes 3-9), each a function of the previous stage's output.
 * `retrieveEvidence` chains them; every stage reports flags and model calls into the one TraceBuilder.
 */

/** What every stage may read: the archive, the models and the question's context. */
export interface StageContext {
  store: ArchiveStore;
  models: ModelSet;
  contextId: string;
  signal: AbortSignal | undefined;
  trace: TraceBuilder;
  /** The question's scope (RetrieveOptions.filter): retrieval and expansion stay inside it. */
  filter?: MemoryFilter;
}

export interface RetrievedViews {
  /** Prompt, options and question-image captions: the query of every lexical view. */
  queryText: string;
  captions: string[];
  search: MultiViewSearchResult;
  /** Every memory reached (fallback: the most recent ones), by s desc. */
  ranked: ScoredMemory[];
  /** The top-L seeds. */
  seeds: ScoredMemory[];
}

/**
 * The text views of some memories, built from the question path's cached records (pool-records.ts) by the
 * digest's own `buildViews`: the same texts as the stored views (of the current VIEWS_VERSION) without a
 * view read; the feedback's top memories are seeds, whose records the pool reads next anyway.
 */
async function poolTextViews(ctx: StageContext, ids: readonly string[]): Promise<string[]> {
  const texts: string[] = [];
  for (const record of await poolRecords(ctx.store, ctx.contextId, ids)) {
    for (const view of buildViews(record)) if (view.kind === 'text') texts.push(view.text);
  }
  return texts;
}

/** Stage 1: multi-view retrieval (question-image captions join the query text), top-L seeds. */
export async function retrieveViews(
  ctx: StageContext,
  question: QuestionInput,
  sizes: { seeds: number; poolSize: number },
  expansion: ExpansionSwitches = {},
): Promise<RetrievedViews> {
  const captions = await questionImageCaptions(question.images ?? [], ctx.models.vision, ctx.signal);
  for (const call of captions.calls) ctx.trace.call(call);
  ctx.trace.flag('question_caption_failed', captions.failed);
  const queryText = [
    question.prompt,
    ...(question.choices ?? []).map((c) => c.text),
    ...captions.captions,
  ].join('\n');
  const { expansions, feedback } = await questionExpansions(
    ctx.store,
    ctx.contextId,
    queryText,
    expansion,
    question.asOf,
  );
  const search = await multiViewSearch(
    ctx.store,
    ctx.contextId,
    {
      text: queryText,
      imageUris: (question.images ?? []).flatMap((i) => (i.uri === undefined ? [] : [i.uri])),
    },
    {
      limit: Math.max(sizes.poolSize, sizes.seeds * 2),
      skipCommonOnlyKinds: true,
      ...(ctx.models.embedding ? { embedding: ctx.models.embedding } : {}),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      ...(ctx.filter ? { filter: ctx.filter } : {}),
      expansions,
      ...(feedback ? { feedback, textViews: (ids) => poolTextViews(ctx, ids) } : {}),
    },
  );
  const embedding = search.embeddingCall;
  if (embedding) {
    ctx.trace.call({
      stage: 'embedding',
      model: embedding.model,
      attempts: 1,
      ok: embedding.error === undefined,
      cached: embedding.cached,
      latencyMs: embedding.latencyMs,
      usage: embedding.usage,
      ...(embedding.error === undefined ? {} : { error: embedding.error }),
    });
  }
  ctx.trace.flag('dense_retrieval_failed', search.denseFailed);
  ctx.trace.flag('lexical_search_bounded', search.lexicalBounded.length > 0);
  let ranked = search.ranked;
  if (ranked.length === 0) {
    ranked = await fallbackSeeds(ctx.store, ctx.contextId, sizes.seeds, ctx.filter);
    ctx.trace.flag(ranked.length === 0 ? 'empty_context' : 'no_lexical_match');
  }
  return { queryText, captions: captions.captions, search, ranked, seeds: ranked.slice(0, sizes.seeds) };
}

export interface ExpandedPool {
  /** Schema and kNN edges touching the seeds. */
  edges: MemoryEdge[];
  /** Pool entries whose record exists, with their s on the common scale, in pool order. */
  present: { entry: PoolEntry; score: number }[];
  records: Map<string, MemoryRecord>;
  candidates: VerifierCandidate[];
  anchors: VerifierCandidate[];
  /** Candidate id -> its eligible relations to anchors (the ECV's input). */
  eligible: Map<string, EligibleRelation[]>;
  /** `edges` with the seeds they cover: later stages read only the edges this read did not cover. */
  seedEdges: SeedEdges;
  /** Every edge among the expanded entries (read with the records when `relations` was asked). */
  innerEdges?: readonly MemoryEdge[];
}

/** Stage 2: one-hop expansion, the cut to M, pool records, anchors and their eligible relations. */
export async function expandPool(
  ctx: StageContext,
  retrieved: RetrievedViews,
  sizes: {
    poolSize: number;
    anchors: number;
    /** The node verifier reads the pool's schema relations (offline): read them with the records. */
    relations?: boolean;
  },
): Promise<ExpandedPool> {
  const { seeds, ranked } = retrieved;
  const allEdges =
    seeds.length > 0
      ? await ctx.store.neighbors(
          ctx.contextId,
          seeds.map((s) => s.memoryId),
        )
      : [];
  // A filtered question expands only into memories that pass the filter (checked by id: cost per edge).
  const edges = ctx.filter ? await edgesWithin(ctx.store, ctx.contextId, allEdges, ctx.filter) : allEdges;
  const entries = expandCandidates(seeds, edges, sizes.poolSize);
  const retrievedScore = new Map(ranked.map((m) => [m.memoryId, m.score]));
  const { scores } = poolScores(entries, retrievedScore);
  const seedEdges = { edges, seedIds: new Set(seeds.map((s) => s.memoryId)) };
  const ids = entries.map((e) => e.memoryId);
  // Both reads at once: a backend with round trips (PostgreSQL) sends them in one.
  const [recordList, innerEdges] = await Promise.all([
    poolRecords(ctx.store, ctx.contextId, ids),
    sizes.relations ? edgesAmongIds(ctx.store, ctx.contextId, ids, seedEdges) : undefined,
  ]);
  const records = new Map(recordList.map((r) => [r.id, r] as const));
  const present = entries
    .map((entry, index) => ({ entry, score: scores[index]! }))
    .filter(({ entry }) => records.has(entry.memoryId));
  const candidates: VerifierCandidate[] = present.map(({ entry, score }, position) => ({
    memoryId: entry.memoryId,
    alias: candidateAlias(position),
    record: records.get(entry.memoryId)!,
    retrievalScore: score,
    isAnchor: position < sizes.anchors,
  }));
  const anchors = candidates.filter((c) => c.isAnchor);
  const eligible = eligibleRelations(
    candidates.map((c) => c.memoryId),
    anchors.map((a) => a.memoryId),
    edges,
  );
  return {
    edges,
    present,
    records,
    candidates,
    anchors,
    eligible,
    seedEdges,
    ...(innerEdges ? { innerEdges } : {}),
  };
}

/** The question as the verifiers read it (gold and answers never reach them). */
export function verifierQuestionOf(question: QuestionInput, captions: string[]): VerifierQuestion {
  return {
    prompt: question.prompt,
    ...(question.instruction === undefined ? {} : { instruction: question.instruction }),
    ...(question.choices === undefined ? {} : { choices: question.choices }),
    ...(question.type === undefined ? {} : { type: question.type }),
    imageCaptions: captions,
  };
}

/** Stage 3a: the node verifier over the pool (offline verifiers also read the pool's schema relations). */
export async function verifyNodes(
  ctx: StageContext,
  verifier: NodeVerifier | undefined,
  question: VerifierQuestion,
  pool: ExpandedPool,
): Promise<{ result: NodeVerifierResult | undefined; relations: PoolRelation[] }> {
  if (!verifier) return { result: undefined, relations: [] };
  const relations = verifier.kind === 'offline' ? await poolRelations(ctx.store, ctx.contextId, pool) : [];
  if (pool.candidates.length === 0) return { result: undefined, relations };
  const result = await verifier.verify({
    question,
    candidates: pool.candidates,
    relations,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
  return { result, relations };
}

/** Stage 3b: the ECV over the anchor-candidate relations (runs in parallel with stage 3a). */
export async function verifyEdges(
  ctx: StageContext,
  verifier: EdgeVerifier | undefined,
  question: VerifierQuestion,
  pool: ExpandedPool,
): Promise<EdgeVerifierResult | undefined> {
  const byId = new Map(pool.candidates.map((c) => [c.memoryId, c]));
  const candidates = [...pool.eligible].map(([id, relations]) => ({ candidate: byId.get(id)!, relations }));
  ctx.trace.flag('no_eligible_edges', verifier !== undefined && candidates.length === 0);
  if (!verifier || candidates.length === 0) return undefined;
  return verifier.verify({
    question,
    anchors: pool.anchors,
    candidates,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
}

/** Records the verifiers' calls and failures in the trace (after both ran, in a fixed order). */
export function recordVerifierOutcome(
  trace: TraceBuilder,
  verifiers: { node?: NodeVerifier | undefined; edge?: EdgeVerifier | undefined },
  node: NodeVerifierResult | undefined,
  edge: EdgeVerifierResult | undefined,
): void {
  trace.flag('no_verifier', !verifiers.node && !verifiers.edge);
  trace.flag('node_verifier_offline', verifiers.node?.kind === 'offline');
  trace.flag('edge_verifier_offline', verifiers.edge?.kind === 'offline');
  if (node?.call) trace.call(callRecord('node_verifier', node.call));
  if (edge?.call) trace.call(callRecord('edge_verifier', edge.call));
  trace.flag('node_verifier_failed', node !== undefined && !node.ok);
  trace.flag('edge_verifier_failed', edge !== undefined && !edge.ok);
}

/**
 * Stage 4: prizes. With the offline node verifier and a fitted `listwise-logistic-offline-ranker` for this
 * configuration, p_i is the ranker's probability over pool-relative features (src/pipeline/ranker-features.ts);
 * otherwise p_i = sigmoid(a s_i + b v_i + c) (method notes 6).
 */
export function prizePool(
  pool: ExpandedPool,
  ranked: readonly ScoredMemory[],
  node: NodeVerifierResult | undefined,
  prizing: { calibration: ResolvedCalibration; rankerPrizes?: readonly number[] },
): PoolCandidate[] {
  const verifierScores = node?.ok ? node.scores : new Map<string, number>();
  return pool.present.map(({ entry }, position) => {
    const candidate = pool.candidates[position]!;
    const v = verifierScores.get(entry.memoryId) ?? 0;
    return {
      memoryId: entry.memoryId,
      position,
      origin: originOf(entry, ranked),
      retrievalScore: candidate.retrievalScore,
      verifierScore: v,
      prize: prizing.rankerPrizes?.[position] ?? nodePrize(prizing.calibration, candidate.retrievalScore, v),
      isAnchor: candidate.isAnchor,
    };
  });
}

/** The ranker's feature rows of a verified pool (pool order). */
export function poolFeatureRows(
  retrieved: RetrievedViews,
  pool: ExpandedPool,
  question: VerifierQuestion,
  node: NodeVerifierResult | undefined,
  relations: readonly PoolRelation[],
): number[][] {
  const seedRank = new Map<string, number>();
  for (const { entry } of pool.present) if (entry.kind === 'seed') seedRank.set(entry.memoryId, entry.rank);
  return rankerFeatures({
    question,
    candidates: pool.candidates,
    seedRank,
    seedCount: retrieved.seeds.length,
    viewScores: retrieved.search.viewScores,
    verifierScores: node?.ok ? node.scores : new Map(),
    relations,
  });
}

/** Stage 4b: the ECV judgements as edges (rejected ones kept for inspection, weight 0). */
export function verifiedEdgesOf(
  edge: EdgeVerifierResult | undefined,
  eligible: ReadonlyMap<string, EligibleRelation[]>,
): JudgedEdge[] {
  const verified: JudgedEdge[] = [];
  if (!edge?.ok) return verified;
  for (const judgement of edge.judgements) {
    const relations = eligible.get(judgement.candidateId) ?? [];
    const relation = relations.find((r) => r.anchorId === judgement.anchorId) ?? relations[0];
    if (!relation) continue;
    const weight = judgement.kept ? ecvEdgeWeight(judgement.incrementalSupport) : 0;
    verified.push({
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
  return verified;
}

/** Stage 5: the forest solver (1-swap proposal + exact refinement) over the prized pool and kept edges. */
export function solveEvidenceForest(
  pool: readonly PoolCandidate[],
  edges: readonly JudgedEdge[],
  k: number,
  solver: RetrieveOptions['solver'],
): ForestSolution {
  return solveForest(evidenceGraph(pool, edges), {
    k,
    lambda: solver?.lambda ?? DEFAULT_SOLVER_PARAMS.lambda,
    kappaProposal: solver?.kappaProposal ?? DEFAULT_SOLVER_PARAMS.kappaProposal,
    kappa: solver?.kappa ?? DEFAULT_SOLVER_PARAMS.kappa,
  });
}

/** The solver's graph of a prized pool: its members and the kept edges. */
export function evidenceGraph(
  pool: readonly Pick<PoolCandidate, 'memoryId' | 'position' | 'prize'>[],
  edges: readonly JudgedEdge[],
): CandidateGraph {
  return {
    nodes: pool.map((c) => ({ id: c.memoryId, position: c.position, prize: c.prize })),
    edges: edges.filter((e) => e.kept).map(({ kept: _kept, ...edge }): CandidateEdge => edge),
  };
}

/** Stage 6: the evidence packet in breadth-first reading order, and its text. */
export function buildPacket(
  forest: ForestSolution,
  records: ReadonlyMap<string, MemoryRecord>,
  pool: readonly PoolCandidate[],
  queryText: string,
): { evidence: EvidenceItem[]; packetText: string } {
  const poolById = new Map(pool.map((c) => [c.memoryId, c]));
  const evidence = buildEvidence(forest, records, poolById, queryText);
  return { evidence, packetText: renderPacketText(evidence) };
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
  pool: ExpandedPool,
): Promise<PoolRelation[]> {
  const ids = pool.candidates.map((c) => c.memoryId);
  // The entries' inner edges, read with the records, hold the candidates' (a subset: entries whose record
  // is gone are not candidates).
  const inSet = new Set(ids);
  const among = pool.innerEdges
    ? pool.innerEdges.filter((edge) => inSet.has(edge.a) && inSet.has(edge.b))
    : await edgesAmongIds(store, contextId, ids, pool.seedEdges);
  const relations: PoolRelation[] = [];
  for (const edge of among) {
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
    // The first matching memories (one bounded filtered page); a filter never falls back to foreign ones.
    const ids = (await store.matchFiltered(contextId, filter, { limit: count })).items;
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
