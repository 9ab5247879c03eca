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

/**
 * Starts the clock of one question. One deadline is shared by retrieve and read in `answer`. The timer and
 * the combined signal are made when `signal` is first read, for the time then left: a question without a
 * model call never reads it, and AbortSignal.timeout (a timer kept 2 minutes, a weak reference, a
 * finalization entry) cost ~2% of such a question's CPU (issue #10). `exceeded()` before any read: whether
 * the budget has passed on `now` (nothing could be aborted).
 */
export function startQuestionDeadline(
  ms: number | undefined,
  client?: AbortSignal,
  now: () => number = performance.now.bind(performance),
): QuestionDeadline {
  const limit = ms ?? DEFAULT_QUESTION_DEADLINE_MS;
  if (!Number.isFinite(limit) || limit <= 0) {
    throw new GraphmemixError('INVALID_INPUT', `deadlineMs must be a positive number, got ${limit}`, {
      location: { field: 'deadlineMs' },
    });
  }
  const started = now();
  let timer: AbortSignal | undefined;
  let signal: AbortSignal | undefined;
  return {
    get signal(): AbortSignal {
      if (signal === undefined) {
        timer = AbortSignal.timeout(Math.max(0, Math.ceil(limit - (now() - started))));
        signal = client ? AbortSignal.any([client, timer]) : timer;
      }
      return signal;
    },
    ms: limit,
    exceeded: () =>
      timer === undefined ? now() - started >= limit : timer.aborted && client?.aborted !== true,
  };
}
