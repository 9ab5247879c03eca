import type { Context } from 'hono';
import { assertJsonDepth, MAX_JSON_DEPTH } from '../api-schemas/json-depth.ts';
import { GraphmemixError } from '../errors/graphmemix-error.ts';

/** Filter fields that GET routes take as plain query parameters (`metadata` as a JSON object). */
const FILTER_PARAMS = new Set(['agent_id', 'run_id', 'from', 'to', 'metadata']);
/** A query-string metadata filter is small: a few keys and scalar values. */
const MAX_METADATA_PARAM_CHARS = 4096;

/**
 * The query string as the object a route schema validates: every parameter once (a repeated one is
 * INVALID_INPUT), filter parameters gathered under `filters`, and every other name kept as it is so the
 * strict schema rejects an unknown one by name (never silently ignored).
 */
export function queryObject(c: Context, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const filters: Record<string, unknown> = {};
  for (const [name, values] of Object.entries(c.req.queries())) {
    if (values.length !== 1) {
      throw new GraphmemixError('INVALID_INPUT', `query parameter "${name}" is given more than once`, {
        location: { field: name },
      });
    }
    const value = values[0]!;
    if (!FILTER_PARAMS.has(name)) out[name] = value;
    else if (name === 'metadata') filters.metadata = parseMetadataParam(value);
    else filters[name] = value;
  }
  if (Object.keys(filters).length > 0) out.filters = filters;
  return { ...out, ...extra };
}

function parseMetadataParam(value: string): unknown {
  if (value.length > MAX_METADATA_PARAM_CHARS) {
    throw new GraphmemixError('TOO_LARGE', `metadata filter over ${MAX_METADATA_PARAM_CHARS} characters`, {
      location: { field: 'filters.metadata' },
    });
  }
  assertJsonDepth(value, MAX_JSON_DEPTH, 'filters.metadata');
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw new GraphmemixError('INVALID_INPUT', 'metadata filter must be a JSON object', {
      location: { field: 'filters.metadata' },
    });
  }
}
