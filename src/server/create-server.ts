import { mkdirSync, mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { Graphmemix } from '../graphmemix-api.ts';
import { allowMediaRoot, describeStore } from '../index.ts';
import { readPoolOf } from '../read-workers/with-read-workers.ts';
import { apiKeyAuth } from '../shell-kit/api-key-auth.ts';
import { type ApiKeyGrant, parseApiKeys } from '../shell-kit/api-keys.ts';
import { errorResponse, httpError } from '../shell-kit/error-response.ts';
import { localOriginGuard } from '../shell-kit/local-origin-guard.ts';
import { defaultQuestionShare } from '../shell-kit/question-share.ts';
import { DEFAULT_MAX_BODY_BYTES, requestBodyLimit } from '../shell-kit/request-body-limit.ts';
import { type RequestBudgetOptions, requestBudget } from '../shell-kit/request-budget.ts';
import { ALL_USERS, requireUser } from '../shell-kit/user-scope.ts';
import { browserAuth, MEDIA_LINK_TTL_SECONDS, registerLoginRoutes } from './browser-auth.ts';
import { BrowserSigner } from './media-ref.ts';
import { registerMediaRoutes } from './media-routes.ts';
import { registerMemoryRoutes } from './memory-routes.ts';
import { registerMemoryVerbRoutes } from './memory-verb-routes.ts';
import { buildOpenApiDocument } from './openapi-document.ts';
import { registerQueryRoutes } from './query-routes.ts';
import { registerUserRoutes } from './user-routes.ts';

export interface ServerOptions {
  graphmemix: Graphmemix;
  /**
   * Bearer keys; at least one is required unless `open`. Each is `key=alice|bob`, `key=*`, a bare `key`
   * (every user, the old form) or a grant object. A key touches only its users; others answer 404.
   */
  apiKeys?: readonly (string | ApiKeyGrant)[];
  /** Open local mode: no keys (the caller must bind loopback only; `startServer` enforces it). */
  open?: boolean;
  /** The listening port, for open mode's Host/Origin check (a getter: known only after listen). */
  port?: number | (() => number | undefined);
  /** Largest accepted request body in bytes (default 16 MiB, room for a few photos). */
  maxBodyBytes?: number;
  /** Bounds on the request bodies in flight (defaults from maxBodyBytes; src/shell-kit/request-budget.ts). */
  budget?: Omit<RequestBudgetOptions, 'maxBodyBytes'>;
  /** Where uploaded media is saved (default: a fresh folder under the OS temp dir). */
  mediaDir?: string;
}

export { DEFAULT_MAX_BODY_BYTES } from '../shell-kit/request-body-limit.ts';

/** Routes that use the read workers: questions, and listing pages (each takes a slot of its key's QuestionShare). */
const QUESTION_ROUTES = ['/v1/search', '/v1/retrieve', '/v1/answer', '/view'] as const;
const LISTING_ROUTE = '/v1/memories';

/** Routes that take multipart uploads (open mode accepts multipart only there). */
const MULTIPART_ROUTES = new Set(['/v1/memories', '/v1/memories/import']);

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

/**
 * The HTTP API as a Hono app: testable with `app.request()` (no port), served by `startServer`.
 * Routes are scoped by `user_id` and each checks that the caller's key may touch that user (404 if not);
 * errors are `{"error":{"code","message"}}` with the stable codes, redacted.
 */
export function createServer(options: ServerOptions): Hono {
  const { grants } = parseApiKeys(options.apiKeys ?? []);
  if (!options.open && grants.length === 0) {
    throw new GraphmemixError(
      'CONFIG',
      'API keys are required: set GRAPHMEMIX_API_KEYS (key=user|user,...) or start in open local mode (--open)',
    );
  }
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  // The archive's media folder when it has one: deleting a memory or a user then removes its uploads too.
  const mediaDir =
    options.mediaDir ?? options.graphmemix.mediaDir ?? mkdtempSync(join(tmpdir(), 'graphmemix-media-'));
  mkdirSync(mediaDir, { recursive: true });
  // The media store is the one local place whose files may be sent to a model (src/providers/to-image-url.ts).
  allowMediaRoot(mediaDir);
  const secrets = grants.map((grant) => grant.key);
  const app = new Hono();

  app.onError((error, c) => errorResponse(c, error, secrets));
  app.notFound((c) => errorResponse(c, httpError('NOT_FOUND', `no route ${c.req.method} ${c.req.path}`)));

  if (options.open) {
    app.use(
      '*',
      localOriginGuard({
        ...(options.port === undefined ? {} : { port: options.port }),
        writeTypes: (path) =>
          MULTIPART_ROUTES.has(path) ? ['application/json', 'multipart/form-data'] : ['application/json'],
      }),
    );
    app.use('*', async (c, next) => {
      c.set('userScope', ALL_USERS);
      c.set('caller', 'local');
      await next();
    });
  }

  // Which backend serves this process and how it searches vectors (docs/postgres.md): operators check replicas.
  const { backend, vectorSupport } = describeStore(options.graphmemix.store);
  app.get('/v1/health', (c) => c.json({ status: 'ok', version, backend, vector_support: vectorSupport }));
  app.get('/openapi.json', (c) => c.json(buildOpenApiDocument(version)));

  // Browser links: signed media URLs in the viewer page, and (keyed mode) a login form's session cookie.
  const signer = new BrowserSigner();
  if (!options.open) {
    const auth = browserAuth(grants, signer, apiKeyAuth(grants));
    app.use('/v1/*', async (c, next) => (c.req.path === '/v1/health' ? next() : auth(c, next)));
    app.use('/view', auth);
    app.use(
      '/login',
      bodyLimit({
        maxSize: 4096,
        onError: (c) => errorResponse(c, httpError('TOO_LARGE', 'login form over 4096 bytes')),
      }),
    );
    registerLoginRoutes(app, grants, signer);
  }
  // Routes addressed by a user in the path (/v1/users/:id/...) are scoped here as well as in their handler.
  // `param` is decoded already: decoding it again threw on a lone `%` (500) and read `%2561` as `a`.
  app.use('/v1/users/:user_id/*', async (c, next) => {
    requireUser(c, c.req.param('user_id') ?? '');
    await next();
  });
  app.use('/v1/users/:user_id', async (c, next) => {
    requireUser(c, c.req.param('user_id') ?? '');
    await next();
  });
  // The limit is checked before any handler reads the body, so an oversized request changes nothing.
  app.use('/v1/*', requestBodyLimit(maxBodyBytes));
  // Bodies in flight, in all and per key: many concurrent uploads must not grow the process without bound.
  app.use(
    '/v1/*',
    requestBudget({ maxBodyBytes, callers: options.open ? 1 : grants.length, ...options.budget }),
  );
  // One key's share of the question capacity (the read workers' queue is every key's). Open mode has one
  // caller, the local owner: the queue's own bound is its only one.
  const questions = defaultQuestionShare({
    keys: options.open ? 0 : grants.length,
    capacity: readPoolOf(options.graphmemix)?.capacity,
    share: options.budget?.perCallerQuestions,
  });
  if (questions) {
    const share = questions.middleware();
    for (const path of QUESTION_ROUTES) app.use(path, share);
    // Listing pages (GET) run in the read workers too; adds (POST) to the same path do not.
    app.use(LISTING_ROUTE, (c, next) => (c.req.method === 'GET' ? share(c, next) : next()));
  }

  registerMemoryRoutes(app, { graphmemix: options.graphmemix, mediaDir });
  registerMemoryVerbRoutes(app, options.graphmemix, mediaDir);
  registerMediaRoutes(app, options.graphmemix, mediaDir);
  registerQueryRoutes(app, options.graphmemix, (userId, ref) => {
    const { exp, sig } = signer.signMedia(userId, ref, MEDIA_LINK_TTL_SECONDS);
    const query = new URLSearchParams({ user_id: userId, size: 'thumb', exp: String(exp), sig });
    return `/v1/media/${ref}?${query}`;
  });
  registerUserRoutes(app, options.graphmemix);
  return app;
}
