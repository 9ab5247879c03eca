import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { type ErrorCode, HTTP_STATUS } from '../errors/error-codes.ts';
import { GraphmemixError, isGraphmemixError } from '../errors/graphmemix-error.ts';
import { redact } from './redact.ts';

/**
 * The one error body of the API: `{"error":{"code","message",...}}` with a stable code and its status,
 * passed through `redact` (no credentials, userinfo URLs or upstream bodies reach a client).
 */
export function errorResponse(c: Context, error: unknown, secrets: readonly string[] = []): Response {
  const known = toGraphmemixError(error, secrets);
  const status = HTTP_STATUS[known.code] as ContentfulStatusCode;
  // At capacity: tell clients when to come back instead of letting them hammer (or time out).
  if (known.code === 'BUSY') c.header('Retry-After', String(known.details?.retryAfterS ?? 1));
  return c.json({ error: redact(known.toJSON(), { secrets }) }, status);
}

export function httpError(
  code: ErrorCode,
  message: string,
  details?: Record<string, unknown>,
): GraphmemixError {
  return new GraphmemixError(code, message, details === undefined ? {} : { details });
}

function toGraphmemixError(error: unknown, secrets: readonly string[]): GraphmemixError {
  if (isGraphmemixError(error)) return error;
  // Hono's HTTPException (e.g. a malformed multipart body) carries a 4xx status: that is bad input.
  const status = (error as { status?: unknown }).status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new GraphmemixError('INVALID_INPUT', error instanceof Error ? error.message : 'bad request');
  }
  // A question abandoned by its client (disconnect) is no fault: nobody reads this answer, and no log line.
  if ((error as { name?: unknown }).name === 'AbortError') return new GraphmemixError('INTERNAL', 'aborted');
  // Internal details stay in the server log (redacted), not in the response.
  console.error(redact(error, { secrets }));
  return new GraphmemixError('INTERNAL', 'internal error');
}
