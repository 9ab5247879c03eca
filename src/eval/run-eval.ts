import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Graphmemix } from '../graphmemix-api.ts';
import type { DialogueShape, ImportFormat } from '../importers/importer-spec.ts';
import { toQuestionInput } from '../pipeline/calibrate-prizes.ts';
import type { RetrievalResult } from '../pipeline/retrieval-result.ts';
import type { ModelSet } from '../providers/model-spec.ts';
import type { EvalQuestion } from '../types/question.ts';
import {
  type ContextBaselines,
  contextBaselines,
  flatLexical,
  flatTopK,
  searchText,
} from './eval-baselines.ts';
import { EvalTally, type SelectorSummary } from './eval-tally.ts';
import { evidenceMetrics } from './evidence-metrics.ts';
import { frozenPoolFromResult } from './frozen-pool-from-result.ts';
import { judgeAnswer } from './judge.ts';
import { percentile } from './percentile.ts';
import { questionRecallGap, type RecallGapSummary, summarizeRecallGap } from './recall-gap.ts';
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
  /** Import dialogue datasets with their rounds (default) or as turns only (ImportOptions.shape). */
  shape?: DialogueShape;
  onProgress?: (done: number, total: number) => void;
  /** Opens the archive; injected so tests and shells share one implementation. */
  open: (db: string, models: ModelSet) => Promise<Graphmemix>;
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
  /** How many memories the full system returned, over the questions with gold: size -> questions. */
  packet_sizes: Record<string, number>;
  /**
   * Where the full system loses recall, in points, on the dev fold and on folds 1-4: gold outside the
   * M-pool, in the pool but not in the fixed-K proposal, dropped by the refinement; with the packet's recall.
   */
  recall_gap: { dev: RecallGapSummary; heldout: RecallGapSummary };
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

export type { SelectorSummary } from './eval-tally.ts';

/**
 * Imports a dataset (or uses --db), runs the question pipeline for every question of the split, and scores
 * every selector on the same frozen pool. Model faults never stop the run: they are flagged per question.
 * Stages: load (import, questions of the split) -> per question run (pipeline) and score (selectors, ladder)
 * -> report.
 */
export async function runEval(options: EvalOptions): Promise<EvalReport> {
  const models = options.models ?? {};
  const tempDir = options.db ? undefined : mkdtempSync(join(tmpdir(), 'graphmemix-eval-'));
  const db = options.db ?? join(tempDir!, 'eval.db');
  const gm = await options.open(db, models);
  try {
    const loaded = await loadEvalSet(gm, options);
    const tally = new EvalTally();
    const answering = (options.answers ?? models.reader !== undefined) && models.reader !== undefined;
    const baselines = new Map<string, ContextBaselines>();
    const baselinesFor = async (contextId: string): Promise<ContextBaselines> => {
      let entry = baselines.get(contextId);
      if (!entry) {
        entry = contextBaselines(await gm.store.listMemories(contextId));
        baselines.set(contextId, entry);
      }
      return entry;
    };
    for (const [index, question] of loaded.questions.entries()) {
      options.onProgress?.(index, loaded.questions.length);
      const result = await runQuestion(gm, question, options, models, answering, tally);
      const gold = await resolveGold(gm, question, tally);
      if (tally.examples.length < (options.keepResults ?? 3)) tally.examples.push({ question, result, gold });
      if (gold.length === 0) {
        tally.withoutGold += 1;
        continue;
      }
      await scoreQuestion(gm, question, result, gold, await baselinesFor(question.contextId), options, tally);
    }
    options.onProgress?.(loaded.questions.length, loaded.questions.length);
    return evalReport(options, loaded, tally, answering);
  } finally {
    await gm.close();
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  }
}

interface LoadedEvalSet {
  ingestSeconds: number;
  questions: EvalQuestion[];
  memories: number;
}

/** Stage "load": import the dataset (unchanged records are skipped) and pick the split's questions. */
async function loadEvalSet(gm: Graphmemix, options: EvalOptions): Promise<LoadedEvalSet> {
  const ingest = await gm.ingest(options.data, {
    format: options.format,
    ...(options.shape === undefined ? {} : { shape: options.shape }),
  });
  const contexts =
    ingest.contexts.length > 0 ? ingest.contexts : (await gm.store.listContexts()).map((c) => c.id);
  const all = (await Promise.all(contexts.map((c) => gm.store.listQuestions(c)))).flat();
  let questions = selectSplit(all, options.questions, (q) => q.id);
  if (options.limit !== undefined) questions = questions.slice(0, options.limit);
  const memories = (await Promise.all(contexts.map((c) => gm.store.countMemories(c)))).reduce(
    (a, b) => a + b,
    0,
  );
  return { ingestSeconds: ingest.seconds, questions, memories };
}

/** Stage "run": the pipeline for one question (and the reader + judge when answering). */
async function runQuestion(
  gm: Graphmemix,
  question: EvalQuestion,
  options: EvalOptions,
  models: ModelSet,
  answering: boolean,
  tally: EvalTally,
): Promise<RetrievalResult> {
  const input = toQuestionInput(question);
  const started = performance.now();
  const result = answering
    ? await gm.answer(question.contextId, input, { k: options.k })
    : await gm.retrieve(question.contextId, input, { k: options.k });
  tally.recordRun(result, performance.now() - started);
  if (answering && 'answer' in result) {
    const answer = result as RetrievalResult & { answer: string; answered: boolean };
    const references = [question.answer.text ?? '', ...(question.answer.alternatives ?? [])].filter(Boolean);
    tally.recordAnswer(answer.answer, answer.answered, references);
    if (models.judge) {
      const verdict = await judgeAnswer(models.judge, question, answer.answered ? answer.answer : undefined);
      tally.recordJudgement(verdict.correct, verdict.attempts, verdict.usage.totalTokens);
    }
  }
  return result;
}

/** Gold resolution: ids that are not stored are reported, never silently dropped. */
async function resolveGold(gm: Graphmemix, question: EvalQuestion, tally: EvalTally): Promise<string[]> {
  const stored = new Set(
    (await gm.store.getMemories(question.contextId, question.evidence)).map((r) => r.id),
  );
  const missing = [
    ...question.evidence.filter((id) => !stored.has(id)),
    ...(question.unresolvedEvidence ?? []),
  ];
  if (missing.length > 0) {
    tally.unresolvedGold += missing.length;
    tally.unresolved.push({ question_id: question.id, memory_ids: missing });
  }
  return question.evidence.filter((id) => stored.has(id));
}

/** Stage "score": every selector on the question's frozen pool, and the ablation ladder. */
async function scoreQuestion(
  gm: Graphmemix,
  question: EvalQuestion,
  result: RetrievalResult,
  gold: readonly string[],
  baselines: ContextBaselines,
  options: EvalOptions,
  tally: EvalTally,
): Promise<void> {
  const input = toQuestionInput(question);
  const pool = frozenPoolFromResult(result, baselines.space, baselines.indexOf);
  tally.recordPacketSize(result.evidence.length);
  const gap = questionRecallGap(result, gold);
  if (gap) tally.recordRecallGap(question.id, gap);
  const flat = flatTopK(baselines.flat, searchText(input), options.k);
  for (const name of options.selectors) {
    const selected =
      name === 'lexical-topk'
        ? flat
        : name === 'graphmemix'
          ? result.evidence.map((item) => item.memoryId)
          : poolSelector(name)(pool, options.k);
    tally.score('selectors', name, question, evidenceMetrics(selected, [...gold])!);
  }
  if (!options.ablation) return;
  const steps: Record<(typeof ABLATION_STEPS)[number], string[]> = {
    'single-view top-K': await flatLexical(gm, question.contextId, searchText(input), options.k, ['text']),
    '+ multi-view': (await gm.search(question.contextId, searchText(input), { k: options.k })).map(
      (h) => h.memoryId,
    ),
    '+ node verifier': nodeTopK(pool, options.k),
    '+ ECV rerank': poolSelector('ecv-pointwise')(pool, options.k),
    '+ forest (graphmemix)': result.evidence.map((item) => item.memoryId),
  };
  for (const step of ABLATION_STEPS)
    tally.score('ablation', step, question, evidenceMetrics(steps[step], [...gold])!);
}

/** Stage "report": summaries, latency percentiles, cost and lifecycle figures. */
function evalReport(
  options: EvalOptions,
  loaded: LoadedEvalSet,
  tally: EvalTally,
  answering: boolean,
): EvalReport {
  const count = loaded.questions.length;
  const n = Math.max(1, count);
  const stagesMean: Record<string, number> = {};
  for (const [stage, total] of Object.entries(tally.stageTotals)) stagesMean[stage] = total / n;
  const answers = tally.answers;
  return {
    dataset: `${options.format}:${options.data}${options.shape === 'turns' ? ' (turns)' : ''}`,
    questions: count,
    questions_without_gold: tally.withoutGold,
    unresolved_gold: tally.unresolvedGold,
    k: options.k,
    selectors: tally.summaries('selectors', options.selectors),
    ...(options.ablation ? { ablation: tally.summaries('ablation', ABLATION_STEPS) } : {}),
    latency_ms: {
      retrieve_p50: percentile(tally.retrieveMs, 50),
      retrieve_p95: percentile(tally.retrieveMs, 95),
      solver_p50: percentile(tally.solverMs, 50),
      stages_mean: stagesMean,
    },
    digest_seconds: loaded.ingestSeconds,
    digest_seconds_per_memory: loaded.memories === 0 ? 0 : loaded.ingestSeconds / loaded.memories,
    memories: loaded.memories,
    model_calls_per_question: tally.modelCalls / n,
    tokens_per_question: tally.tokens / n,
    lifecycle: {
      digest_seconds: loaded.ingestSeconds,
      answer_seconds: tally.answerSeconds,
      total_seconds: loaded.ingestSeconds + tally.answerSeconds,
      questions: count,
    },
    ...(answering
      ? {
          answers: {
            judged: answers.judged,
            accuracy: answers.judged === 0 ? 0 : answers.correct / answers.judged,
            exact_match: answers.em / n,
            token_f1: answers.f1 / n,
            failed: answers.failed,
          },
        }
      : {}),
    packet_sizes: tally.packetSizes,
    recall_gap: {
      dev: summarizeRecallGap(tally.recallGaps.dev, options.k),
      heldout: summarizeRecallGap(tally.recallGaps.heldout, options.k),
    },
    flags: tally.flags,
    unresolved: tally.unresolved,
    examples: tally.examples,
  };
}
