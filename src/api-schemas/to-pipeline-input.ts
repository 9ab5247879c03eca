import type { MemoryRecordInput } from '../graphmemix-api.ts';
import type { QuestionInput, RetrieveOptions } from '../pipeline/retrieval-result.ts';
import type { ConversationScope } from '../schemas/conversation-schema.ts';
import type { MemoryFilterInput } from '../schemas/memory-filter-schema.ts';
import type { MemoryFilter } from '../store/archive-store-spec.ts';
import type { AddMemoriesInput, RetrieveInput } from './route-schemas.ts';

/** Maps a validated retrieve/answer body to the pipeline's question and options. */
export function toQuestionCall(input: RetrieveInput): { question: QuestionInput; options: RetrieveOptions } {
  const question: QuestionInput = { prompt: input.question };
  if (input.instruction !== undefined) question.instruction = input.instruction;
  if (input.choices !== undefined) question.choices = input.choices;
  const options: RetrieveOptions = {};
  if (input.k !== undefined) options.k = input.k;
  if (input.verifiers !== undefined) options.verifiers = input.verifiers;
  if (input.filters !== undefined) options.filter = toMemoryFilter(input.filters);
  return { question, options };
}

/** Wire filters (snake_case) to the library's MemoryFilter. */
export function toMemoryFilter(filters: MemoryFilterInput): MemoryFilter {
  const filter: MemoryFilter = {};
  if (filters.agent_id !== undefined) filter.agentId = filters.agent_id;
  if (filters.run_id !== undefined) filter.runId = filters.run_id;
  if (filters.metadata !== undefined) filter.metadata = filters.metadata;
  if (filters.from !== undefined) filter.from = filters.from;
  if (filters.to !== undefined) filter.to = filters.to;
  return filter;
}

/** The add body's top-level scopes (agent_id, run_id, metadata) for every memory or message. */
export function toScope(input: AddMemoriesInput): ConversationScope {
  const scope: ConversationScope = {};
  if (input.agent_id !== undefined) scope.agentId = input.agent_id;
  if (input.run_id !== undefined) scope.runId = input.run_id;
  if (input.metadata !== undefined) scope.metadata = input.metadata;
  return scope;
}

/**
 * The schema already checked each record's fields (THE record schema); the ingest path owns the rest of
 * the record rules (content, sizes) and reports bad records one by one. Top-level scopes fill what a record
 * does not say itself (its own agent, run and metadata keys win).
 */
export function toRecordInputs(input: AddMemoriesInput): MemoryRecordInput[] {
  const scope = toScope(input);
  return (input.memories ?? []).map((memory) => {
    const record = { ...memory } as MemoryRecordInput;
    if (scope.agentId !== undefined) record.agentId ??= scope.agentId;
    if (scope.runId !== undefined) record.runId ??= scope.runId;
    if (scope.metadata !== undefined) record.metadata = { ...scope.metadata, ...(record.metadata ?? {}) };
    return record;
  });
}
