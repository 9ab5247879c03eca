import { z } from 'zod';
import { MAX_CURSOR_CHARS, MAX_PAGE_SIZE } from '../graphmemix-memory-verbs.ts';
import { IMPORT_FORMATS } from '../importers/importer-spec.ts';
import { conversationMessageSchema, MAX_MESSAGES } from '../schemas/conversation-schema.ts';
import { memoryFilterSchema } from '../schemas/memory-filter-schema.ts';
import {
  MAX_SEARCH_K,
  questionChoicesSchema,
  questionInstructionSchema,
} from '../schemas/question-schema.ts';
import { memoryPatchSchema, scopeIdSchema } from '../schemas/record-schema.ts';
import {
  kSchema,
  memoryIdSchema,
  memoryInputSchema,
  questionTextSchema,
  userIdSchema,
} from './common-schemas.ts';

/**
 * ONE input schema per route. The HTTP routes, the MCP tools and the CLI flags all validate with these, so
 * a field means the same thing everywhere. Query-string routes (GET/DELETE) validate the same object shape.
 */

/** Scopes given once for every memory of an add (mem0's top-level agent_id / run_id / metadata). */
const addScopeFields = {
  agent_id: scopeIdSchema.optional().describe('Agent scope of every memory in this call.'),
  run_id: scopeIdSchema.optional().describe('Run (session) scope of every memory in this call.'),
  metadata: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("Metadata merged into every memory's own (the memory's keys win)."),
};

/**
 * POST /v1/memories, MCP add_memory: records (`memories`, upsert by id) or a conversation (`messages`,
 * OpenAI/mem0 shape), exactly one of them.
 */
export const addMemoriesSchema = z
  .strictObject({
    user_id: userIdSchema,
    memories: z
      .array(memoryInputSchema)
      .min(1)
      .max(1000)
      .optional()
      .describe('Records to add or update (upsert by id).'),
    messages: z
      .array(conversationMessageSchema)
      .min(1)
      .max(MAX_MESSAGES)
      .optional()
      .describe('A conversation: each message becomes a memory with id, round and timestamp assigned.'),
    ...addScopeFields,
  })
  .refine((input) => (input.memories === undefined) !== (input.messages === undefined), {
    message: 'give either "memories" or "messages"',
    path: ['memories'],
  });

/** GET /v1/memories/:id and DELETE /v1/memories/:id, MCP get_memory / delete_memory. */
export const memoryRefSchema = z.strictObject({
  user_id: userIdSchema,
  memory_id: memoryIdSchema,
});

/** GET /v1/memories/:id/history (query parameters), MCP memory_history: keyset pages of a memory's versions. */
export const memoryHistorySchema = z.strictObject({
  user_id: userIdSchema,
  memory_id: memoryIdSchema,
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE_SIZE)
    .optional()
    .describe('Versions per page (default 50).'),
  cursor: z.string().min(1).max(MAX_CURSOR_CHARS).optional().describe('next_cursor of the previous page.'),
});

/** PATCH /v1/memories/:id, MCP update_memory: the given record fields replace the stored ones. */
export const updateMemorySchema = z.strictObject({
  user_id: userIdSchema,
  memory_id: memoryIdSchema,
  ...memoryPatchSchema.shape,
});

/** `filters` of list, search, retrieve, answer. */
export const filtersSchema = memoryFilterSchema;

/** GET /v1/memories (query parameters; `metadata` as a JSON object), MCP list_memories (`filters`). */
export const listMemoriesSchema = z.strictObject({
  user_id: userIdSchema,
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).optional().describe('Page size (default 50).'),
  cursor: z.string().min(1).max(MAX_CURSOR_CHARS).optional().describe('next_cursor of the previous page.'),
  filters: filtersSchema.optional(),
});

/** GET /v1/users (query parameters), MCP list_users: keyset pages of the users the key may see. */
export const listUsersSchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).optional().describe('Page size (default 50).'),
  cursor: z.string().min(1).max(MAX_CURSOR_CHARS).optional().describe('next_cursor of the previous page.'),
});

/** DELETE /v1/users/:user_id, MCP delete_user, CLI forget: a whole user archive. */
export const userRefSchema = z.strictObject({ user_id: userIdSchema });

/** POST /v1/memories/import (multipart: `file` plus these fields). */
export const importSchema = z.strictObject({
  user_id: userIdSchema,
  format: z.enum(IMPORT_FORMATS as [string, ...string[]]).describe('Import format of the uploaded file.'),
});

/** POST /v1/search, MCP search_memories: flat retrieval, no graph and no verifiers. */
export const searchSchema = z.strictObject({
  user_id: userIdSchema,
  query: questionTextSchema,
  k: z.number().int().min(1).max(MAX_SEARCH_K).optional().describe('How many hits (default 10).'),
  filters: filtersSchema.optional(),
});

/** POST /v1/retrieve, MCP retrieve_evidence: the evidence forest for a question. */
export const retrieveSchema = z.strictObject({
  user_id: userIdSchema,
  question: questionTextSchema,
  k: kSchema,
  instruction: questionInstructionSchema.optional(),
  choices: questionChoicesSchema.optional(),
  filters: filtersSchema.optional(),
  verifiers: z
    .enum(['auto', 'model', 'offline', 'none'])
    .optional()
    .describe("Which verifiers score the candidates; 'auto' uses a model when one is configured."),
});

/** POST /v1/answer, MCP answer_question: retrieve then the reader model. */
export const answerSchema = retrieveSchema;

/** GET /view: the evidence-forest viewer page for a question. */
export const viewSchema = z.strictObject({
  user_id: userIdSchema,
  q: questionTextSchema,
  k: z.coerce.number().int().min(1).max(50).optional(),
});

export type AddMemoriesInput = z.infer<typeof addMemoriesSchema>;
export type UpdateMemoryInput = z.infer<typeof updateMemorySchema>;
export type ListMemoriesInput = z.infer<typeof listMemoriesSchema>;
export type MemoryRefInput = z.infer<typeof memoryRefSchema>;
export type MemoryHistoryInput = z.infer<typeof memoryHistorySchema>;
export type UserRefInput = z.infer<typeof userRefSchema>;
export type ImportInput = z.infer<typeof importSchema>;
export type SearchInput = z.infer<typeof searchSchema>;
export type RetrieveInput = z.infer<typeof retrieveSchema>;
export type AnswerInput = z.infer<typeof answerSchema>;
export type ViewInput = z.infer<typeof viewSchema>;

/** The largest body budget an operator may set (64 GiB): above the memory of any machine this runs on. */
export const MAX_BYTES_IN_FLIGHT = 64 * 1024 ** 3;
/** Largest connection bound a flag takes (a process's open-file limit is rarely set higher). */
export const MAX_CONNECTIONS = 1_048_576;

/** `graphmemix serve` / `graphmemix mcp --http` flags (the listening side of the same API). */
export const listenFlagsSchema = z.object({
  db: z.string().min(1).describe('Archive database file.'),
  port: z.coerce.number().int().min(0).max(65535),
  host: z.string().min(1).max(255),
  open: z.boolean().optional(),
  max_body_bytes: z.coerce
    .number()
    .int()
    .min(1024)
    .max(1024 * 1024 * 1024)
    .optional(),
  // Operator bounds (src/shell-kit/server-limits.ts); each beats the config file's `limits`.
  max_pending_writes: z.coerce.number().int().min(1).max(65_536).optional(),
  max_queued_questions: z.coerce.number().int().min(0).max(65_536).optional(),
  bytes_in_flight: z.coerce.number().int().min(1024).max(MAX_BYTES_IN_FLIGHT).optional(),
  key_bytes_in_flight: z.coerce.number().int().min(1024).max(MAX_BYTES_IN_FLIGHT).optional(),
  key_requests_in_flight: z.coerce.number().int().min(1).max(65_536).optional(),
  key_questions_in_flight: z.coerce.number().int().min(1).max(65_536).optional(),
  key_bytes_per_second: z.coerce.number().int().min(1024).max(MAX_BYTES_IN_FLIGHT).optional(),
  max_connections: z.coerce.number().int().min(1).max(MAX_CONNECTIONS).optional(),
  // 0: no bound per address (a trusted network, or a proxy that bounds its clients).
  max_connections_per_address: z.coerce.number().int().min(0).max(MAX_CONNECTIONS).optional(),
});
export type ListenFlags = z.infer<typeof listenFlagsSchema>;
