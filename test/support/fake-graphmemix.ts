import { readFile } from 'node:fs/promises';
import type { CandidateEdge, ForestSolution, ForestTree } from '../../src/core/candidate-graph.ts';
import type { IngestRejection, IngestReport } from '../../src/digest/ingest-report.ts';
import { GraphmemixError } from '../../src/errors/graphmemix-error.ts';
import type { Graphmemix, MemoryRecordInput, SearchHit } from '../../src/graphmemix-api.ts';
import type { ImportFormat } from '../../src/importers/importer-spec.ts';
import { buildEvidence } from '../../src/pipeline/evidence-packet.ts';
import type {
  AnswerResult,
  JudgedEdge,
  PoolCandidate,
  QuestionInput,
  RetrievalResult,
  RetrieveOptions,
} from '../../src/pipeline/retrieval-result.ts';
import type { ArchiveStore } from '../../src/store/archive-store-spec.ts';
import type { MemoryKind, MemoryRecord } from '../../src/types/memory-record.ts';
import type { RelationType } from '../../src/types/relation.ts';

/**
 * An in-memory stand-in for `openGraphmemix()` so the shells (HTTP, MCP, viewer) can be tested on their own.
 * Scores are crude token overlaps, but every result has the real shape: a pool with seed and expanded
 * candidates, verified edges with roles (kept and dropped), a swap trajectory and breadth-first trees.
 */
export interface FakeGraphmemix extends Graphmemix {
  /** Every call the shells made, to assert scoping (context id per call). */
  readonly calls: { method: string; contextId: string }[];
  count(contextId: string): number;
}

export function createFakeGraphmemix(): FakeGraphmemix {
  const contexts = new Map<string, Map<string, MemoryRecord>>();
  const calls: { method: string; contextId: string }[] = [];
  let sequence = 0;

  const records = (contextId: string): MemoryRecord[] =>
    [...(contexts.get(contextId)?.values() ?? [])].sort((x, y) => x.sequence - y.sequence);

  async function addMemories(contextId: string, inputs: readonly MemoryRecordInput[]): Promise<IngestReport> {
    calls.push({ method: 'addMemories', contextId });
    const rejected: IngestRejection[] = [];
    const valid: MemoryRecord[] = [];
    for (const input of inputs) {
      const hasMedia = (input.assets?.length ?? 0) > 0;
      if (typeof input.text !== 'string' && !hasMedia) {
        rejected.push({
          code: 'INVALID_INPUT',
          message: 'record has no content',
          recordId: input.id,
          field: 'text',
        });
        continue;
      }
      if (input.timestamp !== undefined && Number.isNaN(Date.parse(input.timestamp))) {
        rejected.push({
          code: 'INVALID_INPUT',
          message: 'bad timestamp',
          recordId: input.id,
          field: 'timestamp',
        });
        continue;
      }
      valid.push({
        ...input,
        contextId,
        kind: (input.kind ?? (hasMedia ? 'photo' : 'message')) as MemoryKind,
        sequence: input.sequence ?? sequence++,
        text: input.text ?? '',
        assets: input.assets ?? [],
      });
    }
    let imported = 0;
    let updated = 0;
    const store = contexts.get(contextId) ?? new Map<string, MemoryRecord>();
    contexts.set(contextId, store);
    for (const record of valid) {
      if (store.has(record.id)) updated++;
      else imported++;
      store.set(record.id, record);
    }
    return report([contextId], imported, updated, rejected);
  }

  function search(contextId: string, query: string, k = 10): SearchHit[] {
    const terms = tokens(query);
    return records(contextId)
      .map((record) => ({ record, score: overlap(terms, tokens(recordText(record))) }))
      .filter((hit) => hit.score > 0)
      .sort((x, y) => y.score - x.score || x.record.sequence - y.record.sequence)
      .slice(0, k)
      .map(({ record, score }) => ({ memoryId: record.id, score, bestView: 'text' as const, record }));
  }

  async function retrieve(
    contextId: string,
    question: string | QuestionInput,
    options: RetrieveOptions = {},
  ): Promise<RetrievalResult> {
    calls.push({ method: 'retrieve', contextId });
    const q: QuestionInput = typeof question === 'string' ? { prompt: question } : question;
    return buildResult(contextId, q, records(contextId), search(contextId, q.prompt, 6), options.k ?? 10);
  }

  return {
    calls,
    count: (contextId) => contexts.get(contextId)?.size ?? 0,
    store: {} as ArchiveStore,
    async ingest(path: string, options: { format: ImportFormat; contextId?: string }) {
      const contextId = options.contextId ?? 'default';
      calls.push({ method: 'ingest', contextId });
      if (options.format !== 'unified') return report([contextId], 0, 0, []);
      const lines = (await readFile(path, 'utf8')).split('\n').filter((line) => line.trim() !== '');
      return addMemories(
        contextId,
        lines.map((line) => JSON.parse(line) as MemoryRecordInput),
      );
    },
    addMemories,
    async getMemory(contextId, id) {
      calls.push({ method: 'getMemory', contextId });
      return contexts.get(contextId)?.get(id);
    },
    async listMemories(contextId, options = {}) {
      calls.push({ method: 'listMemories', contextId });
      return { memories: records(contextId).slice(0, options.limit ?? 50) };
    },
    async updateMemory(contextId, id, patch) {
      calls.push({ method: 'updateMemory', contextId });
      const current = contexts.get(contextId)?.get(id);
      if (!current) throw new GraphmemixError('NOT_FOUND', `memory ${id} not found for this user`);
      const memory = { ...current, ...patch } as MemoryRecord;
      contexts.get(contextId)!.set(id, memory);
      return { memory, version: 2, changed: true };
    },
    async memoryHistory(contextId, id) {
      calls.push({ method: 'memoryHistory', contextId });
      const current = contexts.get(contextId)?.get(id);
      return current ? [{ version: 1, record: current }] : undefined;
    },
    async memoryHistoryPage(contextId, id) {
      calls.push({ method: 'memoryHistoryPage', contextId });
      const current = contexts.get(contextId)?.get(id);
      return current ? { versions: [{ version: 1, record: current }] } : undefined;
    },
    async addMessages(contextId, messages) {
      calls.push({ method: 'addMessages', contextId });
      const inputs = messages.map((m, i) => ({ id: `msg-${i + 1}`, role: m.role, text: m.content }));
      return { ...(await addMemories(contextId, inputs)), memoryIds: inputs.map((r) => r.id) };
    },
    async listUsers() {
      return {
        users: [...contexts.entries()].map(([userId, memories]) => ({ userId, memories: memories.size })),
      };
    },
    async userStats(userId) {
      const memories = contexts.get(userId)?.size;
      return memories === undefined ? undefined : { userId, memories, byKind: {}, edges: {} };
    },
    async deleteMemory(contextId, id) {
      calls.push({ method: 'deleteMemory', contextId });
      return contexts.get(contextId)?.delete(id) ?? false;
    },
    async compact(contextId) {
      calls.push({ method: 'compact', contextId });
      return { contextId, memories: records(contextId).length, edges: {}, seconds: 0 };
    },
    async forgetContext(contextId) {
      calls.push({ method: 'forgetContext', contextId });
      const memories = contexts.get(contextId)?.size ?? 0;
      const deleted = contexts.delete(contextId);
      return { contextId, deleted, memories, mediaFiles: 0 };
    },
    async deleteUser(userId) {
      return this.forgetContext(userId);
    },
    async releaseMedia(contextId) {
      calls.push({ method: 'releaseMedia', contextId });
      return 0;
    },
    async search(contextId, query, options) {
      calls.push({ method: 'search', contextId });
      return search(contextId, query, options?.k ?? 10);
    },
    async searchMemories(contextId, query, options) {
      calls.push({ method: 'search', contextId });
      return { hits: search(contextId, query, options?.k ?? 10), flags: [] };
    },
    retrieve,
    async answer(contextId, question, options): Promise<AnswerResult> {
      const result = await retrieve(contextId, question, options);
      const top = result.evidence[0];
      return { ...result, answer: top ? top.text.slice(0, 40) : '', answered: top !== undefined };
    },
    async waitForMedia() {},
    async waitForCompactions() {},
    async close() {},
  };
}

function buildResult(
  contextId: string,
  question: QuestionInput,
  all: MemoryRecord[],
  seeds: SearchHit[],
  k: number,
): RetrievalResult {
  const pool: PoolCandidate[] = seeds.map((hit, rank) => ({
    memoryId: hit.memoryId,
    position: rank,
    origin: { kind: 'seed', rank, bestView: 'text', viewKey: 'main' },
    retrievalScore: hit.score,
    verifierScore: Math.min(5, hit.score * 2),
    prize: sigmoid(hit.score - 1),
    isAnchor: rank < 2,
  }));
  // Expansion: the next record in sequence of each seed joins as a consecutive_turn neighbour.
  for (const hit of seeds) {
    const next = all.find((record) => record.sequence > hit.record.sequence);
    if (next && !pool.some((candidate) => candidate.memoryId === next.id)) {
      pool.push({
        memoryId: next.id,
        position: pool.length,
        origin: {
          kind: 'expanded',
          parentId: hit.memoryId,
          relationTypes: ['consecutive_turn'],
          strength: 0.99,
        },
        retrievalScore: 0,
        verifierScore: 1,
        prize: 0.3,
        isAnchor: false,
      });
    }
  }
  const anchors = pool.filter((candidate) => candidate.isAnchor);
  const verifiedEdges: JudgedEdge[] = [];
  for (const candidate of pool) {
    const anchor = anchors.find((a) => a.memoryId !== candidate.memoryId);
    if (!anchor || candidate.isAnchor) continue;
    const kept = verifiedEdges.length % 3 !== 2;
    const relationTypes: RelationType[] =
      candidate.origin.kind === 'expanded' ? candidate.origin.relationTypes : ['semantic_knn'];
    const weight = kept ? 0.8 : 0.2;
    verifiedEdges.push({
      a: anchor.memoryId,
      b: candidate.memoryId,
      weight,
      cost: -Math.log(weight),
      relationTypes,
      role: kept ? 'new_fact' : 'redundant',
      incrementalSupport: kept ? 4 : 1,
      kept,
    });
  }
  const selected = [...pool].sort((x, y) => y.prize - x.prize || x.position - y.position).slice(0, k);
  const selectedIds = new Set(selected.map((candidate) => candidate.memoryId));
  const edges: CandidateEdge[] = verifiedEdges
    .filter((edge) => edge.kept && selectedIds.has(edge.a) && selectedIds.has(edge.b))
    .map(({ kept: _kept, ...edge }) => edge);
  const trees = buildTrees(selected, edges);
  const order = trees.flatMap((tree) => tree.order);
  const outside = pool.find((candidate) => !selectedIds.has(candidate.memoryId));
  const swapIn = selected[selected.length - 1];
  const swaps = outside && swapIn ? [{ out: outside.memoryId, in: swapIn.memoryId, objective: 1.25 }] : [];
  const objective = selected.reduce((sum, candidate) => sum + candidate.prize, 0);
  const forest: ForestSolution = {
    order,
    trees,
    edges,
    objective,
    trace: {
      initial: [...(swaps[0] ? [swaps[0].out] : []), ...selected.slice(0, -1).map((c) => c.memoryId)],
      initialObjective: objective - 0.1,
      swaps,
      proposal: selected.map((c) => c.memoryId),
      proposalObjective: objective,
      proposalEdges: edges,
      dropped: [],
      finalObjective: objective,
      refineMethod: 'enumerate',
    },
  };
  // The real packet builder, so the fake's evidence has exactly the shape the shells get from the pipeline.
  const evidence = buildEvidence(
    forest,
    new Map(all.map((record) => [record.id, record])),
    new Map(pool.map((candidate) => [candidate.memoryId, candidate])),
    question.prompt,
  );
  return {
    contextId,
    question,
    evidence,
    packetText: evidence.map((item) => `[${item.rank}] ${item.date ?? ''} ${item.text}`).join('\n'),
    pool,
    verifiedEdges,
    forest,
    trace: {
      timings: { retrieve: 1, expand: 1, verify: 1, solve: 1, packet: 1 },
      totalMs: 5,
      modelCalls: [],
      usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
      flags: ['node_verifier_offline', 'edge_verifier_offline'],
      components: { retriever: 'fake-overlap', nodeVerifier: 'fake' },
      calibration: { a: 1, b: 1, c: -3, key: 'default' },
    },
  };
}

/** Union of kept edges among the selection; roots by prize, children breadth-first. */
function buildTrees(selected: PoolCandidate[], edges: CandidateEdge[]): ForestTree[] {
  const seen = new Set<string>();
  const trees: ForestTree[] = [];
  for (const root of selected) {
    if (seen.has(root.memoryId)) continue;
    const tree: ForestTree = { rootId: root.memoryId, order: [root.memoryId], parents: {} };
    seen.add(root.memoryId);
    for (let i = 0; i < tree.order.length; i++) {
      const id = tree.order[i]!;
      for (const edge of edges) {
        const other = edge.a === id ? edge.b : edge.b === id ? edge.a : undefined;
        if (other === undefined || seen.has(other)) continue;
        seen.add(other);
        tree.order.push(other);
        tree.parents[other] = { parentId: id, edge };
      }
    }
    trees.push(tree);
  }
  return trees;
}

function report(
  contexts: string[],
  imported: number,
  updated: number,
  rejected: IngestRejection[],
): IngestReport {
  return {
    contexts,
    imported,
    updated,
    unchanged: 0,
    skipped: 0,
    rejected,
    warnings: [],
    questions: 0,
    assets: 0,
    edges: {
      same_round: 0,
      consecutive_turn: 0,
      event_bridge: 0,
      same_record: 0,
      record_grounding: 0,
      supersedes: 0,
      semantic_knn: 0,
    },
    seconds: 0,
    stepSeconds: {},
  };
}

const tokens = (text: string): Set<string> => new Set(text.toLowerCase().match(/[a-z0-9]{3,}/g) ?? []);
const overlap = (a: Set<string>, b: Set<string>): number => [...a].filter((t) => b.has(t)).length;
const recordText = (record: MemoryRecord): string =>
  [record.text, ...record.assets.flatMap((asset) => asset.derived?.captions ?? [])].join(' ');
const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));
