import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { errorResponse, httpError } from './error-response.ts';

/**
 * Bearer API key check. Keys are compared as SHA-256 digests with timingSafeEqual, so neither the key
 * length nor a matching prefix leaks through response timing.
 */
export function apiKeyAuth(keys: readonly string[]): MiddlewareHandler {
  const digests = keys.map(digest);
  return async (c, next) => {
    const header = c.req.header('authorization') ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(header.trim());
    const given = match?.[1] ? digest(match[1].trim()) : undefined;
    const ok = given !== undefined && digests.some((d) => timingSafeEqual(d, given));
    if (!ok) {
      c.header('WWW-Authenticate', 'Bearer realm="graphmemix"');
      return errorResponse(
        c,
        httpError('UNAUTHORIZED', given === undefined ? 'missing bearer API key' : 'invalid API key'),
      );
    }
    await next();
  };
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}
