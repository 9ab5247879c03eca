import type { z } from 'zod';
import { parseWithSchema } from '../schemas/parse-with-schema.ts';
import { assertInputValues } from './input-values.ts';

/**
 * Validates a boundary input with a shared schema: first a bound on its size in values (MAX_INPUT_VALUES:
 * a hostile body must not make the schema build millions of issues), then the library's parseWithSchema
 * (INVALID_INPUT naming the first bad field, unknown fields by name, the issues in `details.issues`).
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  assertInputValues(value);
  return parseWithSchema(schema, value);
}
