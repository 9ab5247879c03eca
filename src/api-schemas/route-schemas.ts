import { z } from 'zod';
import { IMPORT_FORMATS } from '../importers/importer-spec.ts';
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

/** POST /v1/memories, MCP add_memory. */
export const addMemoriesSchema = z.object({
  user_id: userIdSchema,
  memories: z.array(memoryInputSchema).min(1).max(1000).describe('Records to add or update (upsert by id).'),
});

/** GET /v1/memories/:id and DELETE /v1/memories/:id, MCP delete_memory. */
export const memoryRefSchema = z.object({
  user_id: userIdSchema,
  memory_id: memoryIdSchema,
});

/** DELETE /v1/users/:user_id, MCP delete_user, CLI forget: a whole user archive. */
export const userRefSchema = z.object({ user_id: userIdSchema });

/** POST /v1/memories/import (multipart: `file` plus these fields). */
export const importSchema = z.object({
  user_id: userIdSchema,
  format: z.enum(IMPORT_FORMATS as [string, ...string[]]).describe('Import format of the uploaded file.'),
});

/** POST /v1/search, MCP search_memories: flat retrieval, no graph and no verifiers. */
export const searchSchema = z.object({
  user_id: userIdSchema,
  query: questionTextSchema,
  k: z.number().int().min(1).max(100).optional().describe('How many hits (default 10).'),
});

const choiceSchema = z.object({ id: z.string().min(1).max(64), text: z.string().max(2000) });

/** POST /v1/retrieve, MCP retrieve_evidence: the evidence forest for a question. */
export const retrieveSchema = z.object({
  user_id: userIdSchema,
  question: questionTextSchema,
  k: kSchema,
  instruction: z
    .string()
    .max(2000)
    .optional()
    .describe('Instruction for the reader, e.g. "Answer in one word."'),
  choices: z
    .array(choiceSchema)
    .max(26)
    .optional()
    .describe('Multiple-choice options, when the question has them.'),
  verifiers: z
    .enum(['auto', 'model', 'offline', 'none'])
    .optional()
    .describe("Which verifiers score the candidates; 'auto' uses a model when one is configured."),
});

/** POST /v1/answer, MCP answer_question: retrieve then the reader model. */
export const answerSchema = retrieveSchema;

/** GET /view: the evidence-forest viewer page for a question. */
export const viewSchema = z.object({
  user_id: userIdSchema,
  q: questionTextSchema,
  k: z.coerce.number().int().min(1).max(50).optional(),
});

export type AddMemoriesInput = z.infer<typeof addMemoriesSchema>;
export type MemoryRefInput = z.infer<typeof memoryRefSchema>;
export type UserRefInput = z.infer<typeof userRefSchema>;
export type ImportInput = z.infer<typeof importSchema>;
export type SearchInput = z.infer<typeof searchSchema>;
export type RetrieveInput = z.infer<typeof retrieveSchema>;
export type AnswerInput = z.infer<typeof answerSchema>;
export type ViewInput = z.infer<typeof viewSchema>;

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
});
export type ListenFlags = z.infer<typeof listenFlagsSchema>;
