import type { z } from 'zod';
import { GraphmemixError } from '../errors/graphmemix-error.ts';

/** Issues listed in an error's details; the rest are counted (`moreIssues`), so an error stays small. */
export const MAX_LISTED_ISSUES = 100;

/**
 * Validates an input with a schema. Failures become INVALID_INPUT naming the first bad field (an unknown
 * field is named itself: `memories.0.timestmap`), with the first MAX_LISTED_ISSUES issues in `details.issues`.
 * The library and every shell use this one function, so a bad field reads the same from addMemories, HTTP,
 * MCP and the CLI. An input too large for the schema to walk is TOO_LARGE, never a stack overflow.
 */
export function parseWithSchema<S extends z.ZodType>(schema: S, value: unknown, prefix = ''): z.output<S> {
  let result: z.ZodSafeParseResult<z.output<S>>;
  try {
    result = schema.safeParse(value) as z.ZodSafeParseResult<z.output<S>>;
  } catch (error) {
    // zod hands a nested array's issues to its parent as call arguments: ~125k bad values overflow the stack.
    if (!(error instanceof RangeError)) throw error;
    throw new GraphmemixError('TOO_LARGE', 'input too large to validate; send fewer or smaller values', {
      cause: error,
    });
  }
  if (result.success) return result.data;
  const issues = result.error.issues.slice(0, MAX_LISTED_ISSUES).map((issue) => {
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
      details: {
        issues,
        ...(result.error.issues.length > issues.length
          ? { moreIssues: result.error.issues.length - issues.length }
          : {}),
      },
    },
  );
}
