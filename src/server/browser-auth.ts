import { createHash, timingSafeEqual } from 'node:crypto';
import type { Hono, MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import type { ApiKeyGrant } from '../shell-kit/api-keys.ts';
import { userScope } from '../shell-kit/user-scope.ts';
import { escapeHtmlText } from './html-text.ts';
import type { BrowserSigner } from './media-ref.ts';

/** Cookie of a browser session (an HMAC-signed token naming the key by digest, never the key). */
export const SESSION_COOKIE = 'gmx_session';
/** How long a login lasts and a signed media link works. */
export const SESSION_TTL_SECONDS = 8 * 3600;
export const MEDIA_LINK_TTL_SECONDS = 3600;

/** GET requests a browser makes without an Authorization header: the viewer page and its media. */
export function isBrowserRead(method: string, path: string): boolean {
  return method === 'GET' && (path === '/view' || path.startsWith('/v1/media/'));
}

/**
 * Auth for browser reads in keyed mode, tried before the bearer check: a valid session cookie (set by the
 * login form) gives that key's user scope on GET /view and GET /v1/media/*; a signed media link
 * (`?user_id=&exp=&sig=`, made by the viewer page) gives access to that one user's media for that one
 * asset. Nothing else accepts a cookie, so a cross-site form cannot write through it (and it is SameSite=Strict).
 */
export function browserAuth(
  grants: readonly ApiKeyGrant[],
  signer: BrowserSigner,
  bearer: MiddlewareHandler,
): MiddlewareHandler {
  const byDigest = new Map(grants.map((grant) => [digestHex(grant.key), userScope(grant.users)]));
  return async (c, next) => {
    if (isBrowserRead(c.req.method, c.req.path) && c.req.header('authorization') === undefined) {
      const token = getCookie(c, SESSION_COOKIE);
      const digest = token === undefined ? undefined : signer.verifySession(token);
      const scope = digest === undefined ? undefined : byDigest.get(digest);
      if (scope && digest !== undefined) {
        c.set('userScope', scope);
        c.set('caller', digest);
        return next();
      }
      const userId = c.req.query('user_id');
      const exp = c.req.query('exp');
      const sig = c.req.query('sig');
      const ref = c.req.path.startsWith('/v1/media/') ? c.req.path.slice('/v1/media/'.length) : undefined;
      if (ref && userId && exp && sig && signer.verifyMedia(userId, ref, exp, sig)) {
        c.set('userScope', { all: false, users: new Set([userId]) });
        return next();
      }
    }
    return bearer(c, next);
  };
}

/** GET /login (a form) and POST /login (key -> session cookie, then back to the viewer). */
export function registerLoginRoutes(app: Hono, grants: readonly ApiKeyGrant[], signer: BrowserSigner): void {
  const digests = grants.map((grant) => Buffer.from(digestHex(grant.key), 'hex'));
  app.get('/login', (c) => c.html(loginPage(safeNext(c.req.query('next')), false)));
  app.post('/login', async (c) => {
    const body = await c.req.parseBody();
    const key = typeof body.key === 'string' ? body.key.trim() : '';
    const next = safeNext(typeof body.next === 'string' ? body.next : undefined);
    const given = Buffer.from(digestHex(key), 'hex');
    let found: Buffer | undefined;
    // Every key compared, no early exit (as the bearer check).
    for (const digest of digests) if (timingSafeEqual(digest, given) && found === undefined) found = digest;
    if (key === '' || found === undefined) return c.html(loginPage(next, true), 401);
    const secure = new URL(c.req.url).protocol === 'https:' || c.req.header('x-forwarded-proto') === 'https';
    setCookie(c, SESSION_COOKIE, signer.session(found.toString('hex'), SESSION_TTL_SECONDS), {
      httpOnly: true,
      sameSite: 'Strict',
      path: '/',
      maxAge: SESSION_TTL_SECONDS,
      secure,
    });
    return c.redirect(next, 303);
  });
}

/** Only a local viewer path: an open redirect to another site is never made. */
function safeNext(value: string | undefined): string {
  return value !== undefined && /^\/view(?:\?[^\s\\]*)?$/.test(value) && value.length <= 2000
    ? value
    : '/view';
}

function loginPage(next: string, failed: boolean): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>graphmemix login</title>
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; form-action 'self'">
<style>body{font:16px system-ui;margin:4em auto;max-width:28em}input{font:inherit;width:100%;margin:.4em 0}</style></head>
<body><h1>graphmemix viewer</h1>${failed ? '<p role="alert">That key is not valid.</p>' : ''}
<form method="post" action="/login"><label>API key <input type="password" name="key" autocomplete="current-password" required></label>
<input type="hidden" name="next" value="${escapeHtmlText(next)}"><button type="submit">Open the viewer</button></form>
<p>The key is sent once in this form (never in a URL); the browser keeps a session cookie for ${SESSION_TTL_SECONDS / 3600} hours.</p></body></html>`;
}

function digestHex(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
