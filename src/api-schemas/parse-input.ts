import type { z } from 'zod';
import { GraphmemixError } from '../errors/graphmemix-error.ts';

/**
 * Validates a boundary input with a shared schema. Failures become INVALID_INPUT naming the first bad field,
 * with every issue in `details.issues` so API clients can show them all.
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({
    path: issue.path.map(String).join('.'),
    message: issue.message,
  }));
  const first = issues[0];
  throw new GraphmemixError(
    'INVALID_INPUT',
    first ? `${first.path || 'input'}: ${first.message}` : 'invalid input',
    {
      ...(first?.path ? { location: { field: first.path } } : {}),
      details: { issues },
    },
  );
}
