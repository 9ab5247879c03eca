import type { RetrievalResult, StageName } from '../pipeline/retrieval-result.ts';
import type { EvalQuestion } from '../types/question.ts';
import { exactMatch, tokenF1 } from './answer-metrics.ts';
import { aggregateMetrics, type MetricAggregate, type QuestionMetrics } from './evidence-metrics.ts';
import type { QuestionRecallGap } from './recall-gap.ts';
import { isDevQuestion } from './splits.ts';

export interface SelectorSummary extends MetricAggregate {
  name: string;
}

type Rows = Map<string, { type?: string; dev: boolean; metrics: QuestionMetrics }[]>;

/**
 * Everything an eval accumulates over its questions (the "run" and "score" stages write here, the "report"
 * stage reads it): per-selector metric rows, the ablation ladder, latencies, stage times, flags, model cost,
 * answer metrics and gold that did not resolve.
 */
export class EvalTally {
  readonly rows: Rows = new Map();
  readonly ladder: Rows = new Map();
  readonly retrieveMs: number[] = [];
  readonly solverMs: number[] = [];
  readonly stageTotals: Record<string, number> = {};
  readonly flags: Record<string, number> = {};
  readonly unresolved: { question_id: string; memory_ids: string[] }[] = [];
  readonly examples: { question: EvalQuestion; result: RetrievalResult; gold: string[] }[] = [];
  readonly answers = { judged: 0, correct: 0, em: 0, f1: 0, failed: 0 };
  withoutGold = 0;
  unresolvedGold = 0;
  modelCalls = 0;
  tokens = 0;
  answerSeconds = 0;

  /** One pipeline run: latency (reading time excluded from retrieve), stage times, flags, model cost. */
  recordRun(result: RetrievalResult, elapsedMs: number): void {
    this.answerSeconds += elapsedMs / 1000;
    this.retrieveMs.push(elapsedMs - (result.trace.timings.read ?? 0));
    this.solverMs.push(result.trace.timings.solve ?? 0);
    for (const [stage, ms] of Object.entries(result.trace.timings) as [StageName, number][]) {
      this.stageTotals[stage] = (this.stageTotals[stage] ?? 0) + ms;
    }
    for (const flag of result.trace.flags) this.flags[flag] = (this.flags[flag] ?? 0) + 1;
    this.modelCalls += result.trace.modelCalls.length;
    this.tokens += result.trace.usage.totalTokens;
  }

  recordAnswer(answer: string, answered: boolean, references: readonly string[]): void {
    this.answers.em += exactMatch(answer, [...references]);
    this.answers.f1 += tokenF1(answer, [...references]);
    if (!answered) this.answers.failed += 1;
  }

  recordJudgement(correct: boolean, attempts: number, tokens: number): void {
    this.answers.judged += 1;
    if (correct) this.answers.correct += 1;
    this.modelCalls += attempts;
    this.tokens += tokens;
  }

  /** Packet sizes of the full system (questions with gold): size -> number of questions. */
  readonly packetSizes: Record<string, number> = {};

  recordPacketSize(size: number): void {
    this.packetSizes[String(size)] = (this.packetSizes[String(size)] ?? 0) + 1;
  }

  /** Where the full system lost each question's gold, kept apart for the dev fold and folds 1-4. */
  readonly recallGaps: { dev: QuestionRecallGap[]; heldout: QuestionRecallGap[] } = { dev: [], heldout: [] };

  recordRecallGap(questionId: string, gap: QuestionRecallGap): void {
    (isDevQuestion(questionId) ? this.recallGaps.dev : this.recallGaps.heldout).push(gap);
  }

  score(
    target: 'selectors' | 'ablation',
    name: string,
    question: { id: string; type?: string },
    metrics: QuestionMetrics,
  ) {
    const rows = target === 'selectors' ? this.rows : this.ladder;
    const list = rows.get(name) ?? [];
    const dev = isDevQuestion(question.id);
    list.push(question.type === undefined ? { dev, metrics } : { type: question.type, dev, metrics });
    rows.set(name, list);
  }

  summaries(target: 'selectors' | 'ablation', names: readonly string[]): SelectorSummary[] {
    const rows = target === 'selectors' ? this.rows : this.ladder;
    return names.map((name) => ({ name, ...aggregateMetrics(rows.get(name) ?? []) }));
  }
}
