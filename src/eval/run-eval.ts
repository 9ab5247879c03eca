import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildTfidfSpace, type TfidfSpace } from '../digest/semantic/tfidf-space.ts';
import type { Graphmemix } from '../graphmemix-api.ts';
import type { ImportFormat } from '../importers/importer-spec.ts';
import { toQuestionInput } from '../pipeline/calibrate-prizes.ts';
import type { QuestionInput, RetrievalResult, StageName } from '../pipeline/retrieval-result.ts';
import type { ModelSet } from '../providers/model-spec.ts';
import { Bm25Index } from '../retrieval/bm25-index.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import type { EvalQuestion } from '../types/question.ts';
import { exactMatch, tokenF1 } from './answer-metrics.ts';
import {
  aggregateMetrics,
  evidenceMetrics,
  type MetricAggregate,
  type QuestionMetrics,
} from './evidence-metrics.ts';
import { frozenPoolFromResult } from './frozen-pool-from-result.ts';
import { judgeAnswer } from './judge.ts';
import { percentile } from './percentile.ts';
import { poolSelector, type SelectorName } from './selectors/selector-registry.ts';
import { nodeTopK } from './selectors/similarity-selectors.ts';
import { type QuestionSplit, selectSplit } from './splits.ts';

export interface EvalOptions {
  format: ImportFormat;
  data: string;
  k: number;
  selectors: SelectorName[];
  questions: QuestionSplit;
  /** Existing store to use (and keep); a temporary one otherwise. */
  db?: string;
  models?: ModelSet;
  /** Also compute the ablation ladder of paper Table 3. */
  ablation?: boolean;
  /** Answer and judge when a reader (and judge) model is configured. Default: when a reader is configured. */
  answers?: boolean;
  /** Keep this many full results for the viewer in the report. */
  keepResults?: number;
  limit?: number;
  onProgress?: (done: number, total: number) => void;
  /** Opens the archive; injected so tests and shells share one implementation. */
  open: (db: string, models: ModelSet) => Promise<Graphmemix>;
}

export interface SelectorSummary extends MetricAggregate {
  name: string;
}

export interface EvalReport {
  dataset: string;
  questions: number;
  questions_without_gold: number;
  unresolved_gold: number;
  k: number;
  selectors: SelectorSummary[];
  ablation?: SelectorSummary[];
  latency_ms: {
    retrieve_p50: number;
    retrieve_p95: number;
    solver_p50: number;
    stages_mean: Record<string, number>;
  };
  digest_seconds: number;
  digest_seconds_per_memory: number;
  memories: number;
  model_calls_per_question: number;
  tokens_per_question: number;
  lifecycle: { digest_seconds: number; answer_seconds: number; total_seconds: number; questions: number };
  answers?: { judged: number; accuracy: number; exact_match: number; token_f1: number; failed: number };
  flags: Record<string, number>;
  unresolved: { question_id: string; memory_ids: string[] }[];
  /** Full results of the first questions, for the viewer (not part of --json unless asked). */
  examples: { question: EvalQuestion; result: RetrievalResult; gold: string[] }[];
}

export const ABLATION_STEPS = [
  'single-view top-K',
  '+ multi-view',
  '+ node verifier',
  '+ ECV rerank',
  '+ forest (graphmemix)',
] as const;

/**
 * Imports a dataset (or uses --db), runs the question pipeline for every question of the split, and scores
 * every selector on the same frozen pool. Model faults never stop the run: they are flagged per question.
 */
export async function runEval(options: EvalOptions): Promise<EvalReport> {
  const models = options.models ?? {};
  const tempDir = options.db ? undefined : mkdtempSync(join(tmpdir(), 'graphmemix-eval-'));
  const db = options.db ?? join(tempDir!, 'eval.db');
  const gm = await options.open(db, models);
  try {
    const ingest = await gm.ingest(options.data, { format: options.format });
    const contexts =
      ingest.contexts.length > 0 ? ingest.contexts : (await gm.store.listContexts()).map((c) => c.id);
    const all = (await Promise.all(contexts.map((c) => gm.store.listQuestions(c)))).flat();
    let questions = selectSplit(all, options.questions, (q) => q.id);
    if (options.limit !== undefined) questions = questions.slice(0, options.limit);
    const memories = (await Promise.all(contexts.map((c) => gm.store.countMemories(c)))).reduce(
      (a, b) => a + b,
      0,
    );

    const contextData = new Map<string, ContextBaselines>();
    const baselinesFor = async (contextId: string): Promise<ContextBaselines> => {
      let entry = contextData.get(contextId);
      if (!entry) {
        entry = contextBaselines(await gm.store.listMemories(contextId));
        contextData.set(contextId, entry);
      }
      return entry;
    };

    const rows = new Map<string, { type?: string; metrics: QuestionMetrics }[]>();
    const ladder = new Map<string, { type?: string; metrics: QuestionMetrics }[]>();
    const push = (target: typeof rows, name: string, type: string | undefined, metrics: QuestionMetrics) => {
      const list = target.get(name) ?? [];
      list.push(type === undefined ? { metrics } : { type, metrics });
      target.set(name, list);
    };
    const retrieveMs: number[] = [];
    const solverMs: number[] = [];
    const stageTotals: Record<string, number> = {};
    const flags: Record<string, number> = {};
    const unresolved: EvalReport['unresolved'] = [];
    const examples: EvalReport['examples'] = [];
    let withoutGold = 0;
    let unresolvedGold = 0;
    let modelCalls = 0;
    let tokens = 0;
    let answerSeconds = 0;
    const answerRows = { judged: 0, correct: 0, em: 0, f1: 0, failed: 0 };
    const answering = (options.answers ?? models.reader !== undefined) && models.reader !== undefined;

    for (const [index, question] of questions.entries()) {
      options.onProgress?.(index, questions.length);
      const input = toQuestionInput(question);
      const started = performance.now();
      const result = answering
        ? await gm.answer(question.contextId, input, { k: options.k })
        : await gm.retrieve(question.contextId, input, { k: options.k });
      const elapsed = performance.now() - started;
      answerSeconds += elapsed / 1000;
      retrieveMs.push(elapsed - (result.trace.timings.read ?? 0));
      solverMs.push(result.trace.timings.solve ?? 0);
      for (const [stage, ms] of Object.entries(result.trace.timings) as [StageName, number][]) {
        stageTotals[stage] = (stageTotals[stage] ?? 0) + ms;
      }
      for (const flag of result.trace.flags) flags[flag] = (flags[flag] ?? 0) + 1;
      modelCalls += result.trace.modelCalls.length;
      tokens += result.trace.usage.totalTokens;

      if (answering && 'answer' in result) {
        const answer = result as RetrievalResult & { answer: string; answered: boolean };
        const references = [question.answer.text ?? '', ...(question.answer.alternatives ?? [])].filter(
          Boolean,
        );
        answerRows.em += exactMatch(answer.answer, references);
        answerRows.f1 += tokenF1(answer.answer, references);
        if (!answer.answered) answerRows.failed += 1;
        if (models.judge) {
          const verdict = await judgeAnswer(
            models.judge,
            question,
            answer.answered ? answer.answer : undefined,
          );
          answerRows.judged += 1;
          if (verdict.correct) answerRows.correct += 1;
          modelCalls += verdict.attempts;
          tokens += verdict.usage.totalTokens;
        }
      }

      // Gold resolution: ids that are not stored are reported, never silently dropped.
      const stored = new Set(
        (await gm.store.getMemories(question.contextId, question.evidence)).map((r) => r.id),
      );
      const missing = [
        ...question.evidence.filter((id) => !stored.has(id)),
        ...(question.unresolvedEvidence ?? []),
      ];
      if (missing.length > 0) {
        unresolvedGold += missing.length;
        unresolved.push({ question_id: question.id, memory_ids: missing });
      }
      const gold = question.evidence.filter((id) => stored.has(id));
      if (examples.length < (options.keepResults ?? 3)) examples.push({ question, result, gold });
      if (gold.length === 0) {
        withoutGold += 1;
        continue;
      }

      const baselines = await baselinesFor(question.contextId);
      const pool = frozenPoolFromResult(result, baselines.space, baselines.indexOf);
      const flat = flatTopK(baselines.flat, searchText(input), options.k);
      for (const name of options.selectors) {
        const selected =
          name === 'lexical-topk'
            ? flat
            : name === 'graphmemix'
              ? result.evidence.map((item) => item.memoryId)
              : poolSelector(name)(pool, options.k);
        push(rows, name, question.type, evidenceMetrics(selected, gold)!);
      }
      if (options.ablation) {
        const steps: Record<(typeof ABLATION_STEPS)[number], string[]> = {
          'single-view top-K': await flatLexical(gm, question.contextId, searchText(input), options.k, [
            'text',
          ]),
          '+ multi-view': (await gm.search(question.contextId, searchText(input), { k: options.k })).map(
            (h) => h.memoryId,
          ),
          '+ node verifier': nodeTopK(pool, options.k),
          '+ ECV rerank': poolSelector('ecv-pointwise')(pool, options.k),
          '+ forest (graphmemix)': result.evidence.map((item) => item.memoryId),
        };
        for (const step of ABLATION_STEPS)
          push(ladder, step, question.type, evidenceMetrics(steps[step], gold)!);
      }
    }
    options.onProgress?.(questions.length, questions.length);

    const n = Math.max(1, questions.length);
    const summaries = (source: typeof rows, names: readonly string[]) =>
      names.map((name) => ({ name, ...aggregateMetrics(source.get(name) ?? []) }));
    const stagesMean: Record<string, number> = {};
    for (const [stage, total] of Object.entries(stageTotals)) stagesMean[stage] = total / n;
    return {
      dataset: `${options.format}:${options.data}`,
      questions: questions.length,
      questions_without_gold: withoutGold,
      unresolved_gold: unresolvedGold,
      k: options.k,
      selectors: summaries(rows, options.selectors),
      ...(options.ablation ? { ablation: summaries(ladder, ABLATION_STEPS) } : {}),
      latency_ms: {
        retrieve_p50: percentile(retrieveMs, 50),
        retrieve_p95: percentile(retrieveMs, 95),
        solver_p50: percentile(solverMs, 50),
        stages_mean: stagesMean,
      },
      digest_seconds: ingest.seconds,
      digest_seconds_per_memory: memories === 0 ? 0 : ingest.seconds / memories,
      memories,
      model_calls_per_question: modelCalls / n,
      tokens_per_question: tokens / n,
      lifecycle: {
        digest_seconds: ingest.seconds,
        answer_seconds: answerSeconds,
        total_seconds: ingest.seconds + answerSeconds,
        questions: questions.length,
      },
      ...(answering
        ? {
            answers: {
              judged: answerRows.judged,
              accuracy: answerRows.judged === 0 ? 0 : answerRows.correct / answerRows.judged,
              exact_match: answerRows.em / n,
              token_f1: answerRows.f1 / n,
              failed: answerRows.failed,
            },
          }
        : {}),
      flags,
      unresolved,
      examples,
    };
  } finally {
    await gm.close();
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  }
}

/** The question text plus its image captions (the question's own images count as query text). */
function searchText(input: QuestionInput): string {
  return [input.prompt, ...(input.images ?? []).map((image) => image.caption ?? '')].join(' ').trim();
}

interface ContextBaselines {
  space: TfidfSpace;
  indexOf: Map<string, number>;
  /** One flat BM25 document per memory: its text and captions (no views, no graph). */
  flat: Bm25Index;
}

/**
 * Per-context data of the baselines: the offline TF-IDF space (similarities for MMR, DPP, facility location)
 * and the flat BM25 index of `lexical-topk`, which scores one document per memory (text + captions, as the
 * paper's conversion puts a round's captions on its user row), the classic flat-retrieval baseline.
 */
function contextBaselines(records: readonly MemoryRecord[]): ContextBaselines {
  const space = buildTfidfSpace(records);
  const flat = Bm25Index.build(
    records.map((record) => ({
      memoryId: record.id,
      kind: 'text' as const,
      key: 'flat',
      text: [
        record.text,
        ...record.assets.flatMap((asset) => asset.derived?.captions ?? []),
        ...(record.derived?.captions ?? []),
      ].join(' '),
    })),
  );
  return { space, indexOf: new Map(space.ids.map((id, index) => [id, index])), flat };
}

function flatTopK(index: Bm25Index, query: string, k: number): string[] {
  return index.search(query, { limit: k }).map((hit) => hit.memoryId);
}

/** Single-view retrieval through the store: BM25 over one view kind, max-pooled per memory, top-K. */
async function flatLexical(
  gm: Graphmemix,
  contextId: string,
  query: string,
  k: number,
  kinds: ('text' | 'caption' | 'ocr' | 'metadata')[],
): Promise<string[]> {
  const hits = await gm.store.searchLexical(contextId, query, { limit: k * 8, kinds });
  const best = new Map<string, number>();
  for (const hit of hits)
    best.set(hit.memoryId, Math.max(best.get(hit.memoryId) ?? Number.NEGATIVE_INFINITY, hit.rawScore));
  return [...best.entries()]
    .sort((a, b) => (b[1] !== a[1] ? b[1] - a[1] : a[0] < b[0] ? -1 : 1))
    .slice(0, k)
    .map(([id]) => id);
}
