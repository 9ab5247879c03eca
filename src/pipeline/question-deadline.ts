import { GraphmemixError } from '../errors/graphmemix-error.ts';

/**
 * Default wall-clock budget of one question across ALL its model calls (question-image captions, query
 * embedding, node verifier, ECV, reader), retries and structured-call attempts included. Per-call timeouts
 * alone do not bound a question: 4 transport attempts x 3 structured attempts x several calls multiply.
 * Override per call (RetrieveOptions.deadlineMs), per archive (OpenGraphmemixOptions.questionDeadlineMs) or
 * in the config file (`questionDeadlineMs`).
 */
export const DEFAULT_QUESTION_DEADLINE_MS = 120_000;

export interface QuestionDeadline {
  /** Aborts when the client's signal aborts or the deadline passes; hand it to every model call. */
  readonly signal: AbortSignal;
  readonly ms: number;
  /** True when the deadline (not the client) stopped the question: the result is flagged deadline_exceeded. */
  exceeded(): boolean;
}

/** Starts the clock of one question. One deadline is shared by retrieve and read in `answer`. */
export function startQuestionDeadline(ms: number | undefined, client?: AbortSignal): QuestionDeadline {
  const limit = ms ?? DEFAULT_QUESTION_DEADLINE_MS;
  if (!Number.isFinite(limit) || limit <= 0) {
    throw new GraphmemixError('INVALID_INPUT', `deadlineMs must be a positive number, got ${limit}`, {
      location: { field: 'deadlineMs' },
    });
  }
  const timer = AbortSignal.timeout(limit);
  const signal = client ? AbortSignal.any([client, timer]) : timer;
  return { signal, ms: limit, exceeded: () => timer.aborted && client?.aborted !== true };
}
