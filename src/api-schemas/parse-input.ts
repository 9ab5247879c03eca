import type { z } from 'zod';
import { parseWithSchema } from '../schemas/parse-with-schema.ts';

/**
 * Validates a boundary input with a shared schema: the library's parseWithSchema (INVALID_INPUT naming the
 * first bad field, unknown fields by name, every issue in `details.issues`).
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  return parseWithSchema(schema, value);
}
