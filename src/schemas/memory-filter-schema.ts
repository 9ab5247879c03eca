import { z } from 'zod';
import { isoTimestampSchema, scopeIdSchema } from './record-schema.ts';

/** Metadata conditions one filter may hold: filters stay small and cheap to plan. */
export const MAX_FILTER_METADATA_KEYS = 16;

/**
 * `filters` of list, search, retrieve and answer (mem0's shape, snake_case on the wire). Flat by design: no
 * nested boolean trees, so depth and size are bounded by the schema itself. Every given condition must hold.
 */
export const memoryFilterSchema = z
  .strictObject({
    agent_id: scopeIdSchema.optional(),
    run_id: scopeIdSchema.optional(),
    metadata: z
      .record(z.string().min(1).max(128), z.union([z.string().max(256), z.number(), z.boolean()]))
      .refine((value) => Object.keys(value).length <= MAX_FILTER_METADATA_KEYS, {
        message: `at most ${MAX_FILTER_METADATA_KEYS} metadata keys`,
      })
      .optional(),
    from: isoTimestampSchema.optional().describe('Event time lower bound (inclusive).'),
    to: isoTimestampSchema
      .optional()
      .describe('Event time upper bound (inclusive; a date covers its whole day).'),
  })
  .describe('Only memories passing every given condition are listed or used as evidence.');

export type MemoryFilterInput = z.infer<typeof memoryFilterSchema>;
