import type { ModelSet } from '../providers/model-spec.ts';
import type { ArchiveStore } from '../store/archive-store-spec.ts';
import type { EvalQuestion } from '../types/question.ts';
import {
  type CalibrationFit,
  type CalibrationSample,
  calibrationKey,
  calibrationMetaKey,
  calibrationParts,
  fitCalibration,
} from './prize-calibration.ts';
import type { QuestionInput, RetrieveOptions } from './retrieval-result.ts';
import { retrieveEvidence } from './retrieve-evidence.ts';
import { selectVerifiers } from './select-verifiers.ts';

export interface CalibrateOptions {
  /** Contexts whose stored questions are used; all contexts when absent. */
  contexts?: readonly string[];
  /**
   * Which questions to fit on. REQUIRED so nobody calibrates on evaluation questions by accident; the CLI
   * passes the dev fold (sha256 fold 0, src/eval/splits.ts).
   */
  include: (question: EvalQuestion) => boolean;
  verifiers?: RetrieveOptions['verifiers'];
  /** Store the fit in the store meta under the configuration's key (default true). */
  save?: boolean;
  onProgress?: (done: number, total: number) => void;
}

export interface CalibrateReport extends CalibrationFit {
  key: string;
  questions: number;
  /** Questions skipped because none of their gold memories is stored. */
  skipped: number;
  saved: boolean;
}

/**
 * Fits the prize calibration (a, b, c) of the current retriever + verifier configuration (method notes 6):
 * every included question with gold evidence runs the pipeline up to the frozen pool, each pool candidate
 * gives one sample (s_i, v_i, is gold), and a logistic regression with L2 = 0.001 is fitted. The result is
 * stored in the store meta under `calibration:<key>`, where retrieve() finds it before the shipped defaults.
 */
export async function calibratePrizes(
  store: ArchiveStore,
  models: ModelSet,
  options: CalibrateOptions,
): Promise<CalibrateReport> {
  const verifiers = selectVerifiers(options.verifiers, models);
  const key = calibrationKey(calibrationParts(models.embedding, verifiers));
  const contexts = options.contexts ?? (await store.listContexts()).map((c) => c.id);
  const questions = (await Promise.all(contexts.map((c) => store.listQuestions(c))))
    .flat()
    .filter(options.include);
  const samples: CalibrationSample[] = [];
  let used = 0;
  let skipped = 0;
  for (const [index, question] of questions.entries()) {
    options.onProgress?.(index, questions.length);
    const gold = new Set(question.evidence);
    const stored = await store.getMemories(question.contextId, question.evidence);
    if (stored.length === 0) {
      skipped++;
      continue;
    }
    const result = await retrieveEvidence({ store, models }, question.contextId, toQuestionInput(question), {
      ...(options.verifiers === undefined ? {} : { verifiers: options.verifiers }),
    });
    used++;
    for (const candidate of result.pool) {
      samples.push({
        s: candidate.retrievalScore,
        v: candidate.verifierScore,
        gold: gold.has(candidate.memoryId),
      });
    }
  }
  const fit = fitCalibration(samples);
  const save = options.save ?? true;
  if (save && samples.length > 0) {
    await store.setMeta(calibrationMetaKey(key), {
      a: fit.a,
      b: fit.b,
      c: fit.c,
      samples: fit.samples,
      positives: fit.positives,
      questions: used,
      fittedAt: new Date().toISOString(),
    });
  }
  return { ...fit, key, questions: used, skipped, saved: save && samples.length > 0 };
}

/** The pipeline's view of a stored question (gold and answers stay out of it). */
export function toQuestionInput(question: EvalQuestion): QuestionInput {
  return {
    prompt: question.prompt,
    ...(question.instruction === undefined ? {} : { instruction: question.instruction }),
    ...(question.choices === undefined ? {} : { choices: question.choices }),
    ...(question.images === undefined ? {} : { images: question.images }),
    ...(question.type === undefined ? {} : { type: question.type }),
  };
}
