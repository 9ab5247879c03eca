import type { MiddlewareHandler } from 'hono';
import { errorResponse, httpError } from './error-response.ts';

export interface LocalOriginOptions {
  /** The port the server listens on; a getter because it is known only after listen (port 0). Undefined:
   * any port on a loopback name (in-process tests through app.request). */
  port?: number | (() => number | undefined);
  /** Body types a write may carry (lower-case media types). Default: application/json only. */
  writeTypes?: (path: string) => readonly string[];
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Guards open local mode (no keys), where a browser on the same machine is the attacker's way in:
 * - Host (and the URL's authority) must be a loopback name with the bound port, so a DNS-rebound name
 *   (attacker.example resolving to 127.0.0.1) is refused with 403;
 * - an Origin header, when sent, must be http://<loopback name>:<port> (a page on another origin, or the
 *   opaque "null" origin of a sandboxed frame or file, gets 403); Sec-Fetch-Site cross-site is refused too;
 * - every request with a body (any method but GET/HEAD/OPTIONS, and a DELETE without a body) must be
 *   application/json, or multipart where the route takes uploads (415 otherwise), so a "simple"
 *   cross-origin text/plain or form POST cannot reach a handler.
 */
export function localOriginGuard(options: LocalOriginOptions = {}): MiddlewareHandler {
  return async (c, next) => {
    const port = typeof options.port === 'function' ? options.port() : options.port;
    const url = new URL(c.req.url);
    const hostHeader = c.req.header('host');
    if (
      !isLocalAuthority(url.host, port) ||
      (hostHeader !== undefined && !isLocalAuthority(hostHeader, port))
    ) {
      return errorResponse(
        c,
        httpError('FORBIDDEN', 'open mode answers loopback hosts only (Host header refused)'),
      );
    }
    const origin = c.req.header('origin');
    if (origin !== undefined && !isLocalOrigin(origin, port)) {
      return errorResponse(c, httpError('FORBIDDEN', 'cross-origin requests are refused in open mode'));
    }
    if ((c.req.header('sec-fetch-site') ?? '').toLowerCase() === 'cross-site') {
      return errorResponse(c, httpError('FORBIDDEN', 'cross-site requests are refused in open mode'));
    }
    const method = c.req.method.toUpperCase();
    if (
      !SAFE_METHODS.has(method) &&
      !(
        method === 'DELETE' &&
        bodilessDelete(c.req.header('content-length'), c.req.header('transfer-encoding'))
      )
    ) {
      const type = (c.req.header('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
      const allowed = options.writeTypes?.(c.req.path) ?? ['application/json'];
      if (!allowed.includes(type)) {
        return errorResponse(
          c,
          httpError(
            'UNSUPPORTED_MEDIA_TYPE',
            `send ${allowed.join(' or ')} (got ${type || 'no content-type'})`,
          ),
        );
      }
    }
    await next();
  };
}

/**
 * A DELETE without a body (`curl -X DELETE`, most clients) needs no content type: no browser page can send one
 * cross-origin without a CORS preflight, which this server never grants, and a same-machine page's Origin is
 * checked above. One with a body is held to the write types like any other.
 */
function bodilessDelete(length: string | undefined, transferEncoding: string | undefined): boolean {
  return transferEncoding === undefined && (length === undefined || length.trim() === '0');
}

function isLocalAuthority(authority: string, port: number | undefined): boolean {
  const match = /^(\[[^\]]*\]|[^:]*)(?::(\d+))?$/.exec(authority.trim().toLowerCase());
  if (!match) return false;
  const name = match[1] ?? '';
  if (!LOOPBACK_NAMES.has(name)) return false;
  if (port === undefined) return true;
  const given = match[2] === undefined ? 80 : Number(match[2]);
  return given === port;
}

function isLocalOrigin(origin: string, port: number | undefined): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' || url.username !== '' || url.password !== '') return false;
  if (url.pathname !== '/' || origin.trim().replace(/\/$/, '') !== url.origin) return false;
  return isLocalAuthority(url.host, port);
}
