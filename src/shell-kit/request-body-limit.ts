import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { errorResponse, httpError } from './error-response.ts';

/** Largest request body the HTTP API and MCP over HTTP accept by default (`--max-body-bytes`). */
export const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;

/**
 * Refuses a body over `maxBytes` (TOO_LARGE, 413) before any handler reads it, so an oversized request
 * changes nothing and never sits whole in memory.
 */
export function requestBodyLimit(maxBytes: number = DEFAULT_MAX_BODY_BYTES): MiddlewareHandler {
  return bodyLimit({
    maxSize: maxBytes,
    onError: (c) => errorResponse(c, httpError('TOO_LARGE', `request body exceeds ${maxBytes} bytes`)),
  });
}
