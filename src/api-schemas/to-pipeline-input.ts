import type { MemoryRecordInput } from '../graphmemix-api.ts';
import type { QuestionInput, RetrieveOptions } from '../pipeline/retrieval-result.ts';
import type { AddMemoriesInput, RetrieveInput } from './route-schemas.ts';

/** Maps a validated retrieve/answer body to the pipeline's question and options. */
export function toQuestionCall(input: RetrieveInput): { question: QuestionInput; options: RetrieveOptions } {
  const question: QuestionInput = { prompt: input.question };
  if (input.instruction !== undefined) question.instruction = input.instruction;
  if (input.choices !== undefined) question.choices = input.choices;
  const options: RetrieveOptions = {};
  if (input.k !== undefined) options.k = input.k;
  if (input.verifiers !== undefined) options.verifiers = input.verifiers;
  return { question, options };
}

/**
 * The schema already checked the shape; the ingest path owns the record rules (kinds, timestamps, sizes)
 * and reports bad records one by one, so the records pass on as the unified input shape.
 */
export function toRecordInputs(input: AddMemoriesInput): MemoryRecordInput[] {
  return input.memories.map((memory) => memory as MemoryRecordInput);
}
