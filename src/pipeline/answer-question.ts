import type { ChatModel } from '../providers/model-spec.ts';
import { answeredCall, failedCall } from './model-call-record.ts';
import type { QuestionDeadline } from './question-deadline.ts';
import { READER_MAX_TOKENS, readerMessage } from './reader-message.ts';
import type { AnswerResult, RetrievalResult } from './retrieval-result.ts';
import { sumUsage } from './retrieve-evidence.ts';

/**
 * Runs the reader on a retrieval result: one call, temperature 0, at most 1,000 output tokens. No reader model
 * or a failed call -> answered false with answer '' (the failure flagged and traced), never a throw.
 * `deadline` is the question's (shared with retrieval): its signal bounds the call, and a reader cut off by
 * it is flagged deadline_exceeded as well.
 */
export async function readAnswer(
  result: RetrievalResult,
  reader: ChatModel | undefined,
  signal?: AbortSignal,
  deadline?: QuestionDeadline,
): Promise<AnswerResult> {
  if (reader === undefined) return { ...result, answer: '', answered: false };
  const started = performance.now();
  const callSignal = deadline?.signal ?? signal;
  const trace = { ...result.trace, modelCalls: [...result.trace.modelCalls], flags: [...result.trace.flags] };
  let answer = '';
  let answered = false;
  try {
    const response = await reader.chat({
      messages: [readerMessage(result.question, result.evidence)],
      temperature: 0,
      maxTokens: READER_MAX_TOKENS,
      ...(callSignal === undefined ? {} : { signal: callSignal }),
    });
    answer = response.text.trim();
    answered = answer !== '';
    trace.modelCalls.push(
      answeredCall('reader', reader.modelId, response, answered ? undefined : 'empty reply'),
    );
  } catch (error) {
    trace.modelCalls.push(failedCall('reader', reader.modelId, started, error));
  }
  if (!answered) trace.flags.push('reader_failed');
  if (deadline?.exceeded() && !trace.flags.includes('deadline_exceeded'))
    trace.flags.push('deadline_exceeded');
  const readMs = performance.now() - started;
  trace.timings = { ...trace.timings, read: readMs };
  trace.totalMs += readMs;
  trace.usage = sumUsage(trace.modelCalls);
  return { ...result, trace, answer, answered };
}
