import { z } from 'zod';
import { MEMORY_KINDS } from '../types/memory-record.ts';

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
  .max(256)
  .describe('Memory id, unique within the user archive.');

export const geoLocationSchema = z.object({
  name: z.string().max(500).optional(),
  lat: z.number().min(-90).max(90).optional(),
  lon: z.number().min(-180).max(180).optional(),
});

const derivedSchema = z.object({
  captions: z.array(z.string()).optional(),
  ocr: z.string().optional(),
  summary: z.string().optional(),
  tags: z.array(z.string()).optional(),
});

const assetSchema = z.looseObject({
  id: z.string().min(1),
  kind: z.enum(['image', 'video', 'audio', 'document']),
  uri: z.string().optional(),
  mime: z.string().optional(),
  derived: derivedSchema.optional(),
});

/**
 * One record as a client sends it: `id` required, everything else optional. Unknown fields pass through so
 * the ingest path (which owns record validation) can accept or reject them with a per-record reason.
 */
export const memoryInputSchema = z.looseObject({
  id: memoryIdSchema,
  text: z.string().optional(),
  timestamp: z.string().optional().describe('ISO 8601 date or date-time.'),
  kind: z.enum(MEMORY_KINDS as [string, ...string[]]).optional(),
  sessionId: z.string().optional(),
  roundId: z.string().optional(),
  sourceId: z.string().optional(),
  role: z.string().optional(),
  speaker: z.string().optional(),
  location: geoLocationSchema.optional(),
  assets: z.array(assetSchema).optional(),
  derived: derivedSchema.optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

export const questionTextSchema = z
  .string()
  .trim()
  .min(1)
  .max(4000)
  .describe('A natural-language question about the user history.');

/** Reader budget K: how many memories the evidence packet may hold. */
export const kSchema = z.number().int().min(1).max(50).optional().describe('Evidence budget K (default 10).');
