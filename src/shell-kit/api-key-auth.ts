import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { ApiKeyGrant } from './api-keys.ts';
import { errorResponse, httpError } from './error-response.ts';
import { userScope } from './user-scope.ts';

/**
 * Bearer API key check. Keys are compared as SHA-256 digests with timingSafeEqual against every configured
 * key (no early exit), so neither the key length, a matching prefix nor the matching key's position leaks
 * through response timing. A match sets the request's user scope (`userScope`) from the key's grant.
 */
export function apiKeyAuth(grants: readonly ApiKeyGrant[]): MiddlewareHandler {
  const entries = grants.map((grant) => {
    const keyDigest = digest(grant.key);
    // The per-caller bounds (requestBudget) name a key by its digest, never by the key itself.
    return { digest: keyDigest, scope: userScope(grant.users), caller: keyDigest.toString('hex') };
  });
  return async (c, next) => {
    const header = c.req.header('authorization') ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(header.trim());
    const given = match?.[1] ? digest(match[1].trim()) : undefined;
    let found: (typeof entries)[number] | undefined;
    if (given !== undefined) {
      for (const entry of entries) {
        if (timingSafeEqual(entry.digest, given) && found === undefined) found = entry;
      }
    }
    if (!found) {
      c.header('WWW-Authenticate', 'Bearer realm="graphmemix"');
      return errorResponse(
        c,
        httpError('UNAUTHORIZED', given === undefined ? 'missing bearer API key' : 'invalid API key'),
      );
    }
    c.set('userScope', found.scope);
    c.set('caller', found.caller);
    await next();
  };
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}
