import { z } from 'zod';
import { questionTextSchema } from '../schemas/question-schema.ts';
import { MAX_MEMORY_ID_CHARS, memoryRecordInputSchema } from '../schemas/record-schema.ts';

/**
 * Building blocks shared by the route schemas. Wire names are snake_case (mem0-style bodies); the record
 * fields inside `memories` keep the unified record shape (camelCase) so one JSONL line can be posted as-is.
 */

/** A user id is the archive context id: short, printable, no path separators (it names a media folder). */
export const userIdSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:@-]*$/, 'letters, digits and . _ : @ - only')
  .describe('The user whose archive is read or written; every call is scoped to it.');

export const memoryIdSchema = z
  .string()
  .min(1)
  .max(MAX_MEMORY_ID_CHARS)
  .describe('Memory id, unique within the user archive.');

/**
 * One record as a client sends it: THE record schema of the library (src/schemas/record-schema.ts), strict,
 * so an unknown field is a 400 naming it (`memories.0.timestmap`) on every door, never silently dropped.
 */
export const memoryInputSchema = memoryRecordInputSchema;

/** The question text of retrieve/answer/search bodies: THE question schema's prompt (src/schemas/question-schema.ts). */
export { questionTextSchema };

/** Reader budget K: how many memories the evidence packet may hold. */
export const kSchema = z.number().int().min(1).max(50).optional().describe('Evidence budget K (default 10).');
