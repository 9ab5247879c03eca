import type { z } from 'zod';
import { GraphmemixError } from '../errors/graphmemix-error.ts';

/**
 * Validates an input with a schema. Failures become INVALID_INPUT naming the first bad field (an unknown
 * field is named itself: `memories.0.timestmap`), with every issue in `details.issues`. The library and every
 * shell use this one function, so a bad field reads the same from addMemories, HTTP, MCP and the CLI.
 */
export function parseWithSchema<S extends z.ZodType>(schema: S, value: unknown, prefix = ''): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => {
    const path = [...(prefix ? [prefix] : []), ...issue.path.map(String)];
    if (issue.code === 'unrecognized_keys') {
      return { path: [...path, issue.keys[0] ?? ''].join('.'), message: `unknown field "${issue.keys[0]}"` };
    }
    return { path: path.join('.'), message: issue.message };
  });
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
